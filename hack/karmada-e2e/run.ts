// Runs Karmada's end-to-end suite (test/e2e/suites/base, built by hack/karmada-e2e/build.sh) against a
// Flotilla hub: a hub and three member apiservers (test/envtest), Flotilla's and Karmada's CRDs on the
// hub, the members registered as Karmada registers them (cluster.karmada.io Clusters with apiEndpoint
// and a Secret holding `token` and `caBundle`), `flotilla webhook` and `flotilla controller` on the hub,
// and a kubeconfig with the contexts the suite reads (karmada-apiserver, karmada-host). The specs run in
// parallel ginkgo processes (the ginkgo CLI build.sh builds beside the suite; Serial specs at the end, as
// ginkgo does). Prints one line per spec, a count, and the comparison with the specs expected to pass.
//
//   node dist/hack/karmada-e2e/run.js [--files REGEX] [--poll-timeout DURATION] [--procs N]
//                                     [--expected FILE] [--keep] [-- GINKGO-ARGS…]
//
//   --files         which spec files run (ginkgo --focus-file); default: the policy, override,
//                   scheduling, dependency, preemption and failover files
//   --poll-timeout  the suite's waits (its --poll-timeout flag, and the framework's PollTimeout through
//                   E2E_POLL_TIMEOUT, see patches/); default 60s
//   --procs         parallel ginkgo processes (default 4)
//   --expected      the specs expected to pass, one `file: name` a line (default expected-passing.txt
//                   here); a spec in it that does not pass, and fails a second attempt run alone
//                   right after, is a regression
//   --suite PATH    an e2e.test already built (default: the one build.sh builds or has cached; the
//                   ginkgo CLI is looked for beside it)
//   --keep          keep the environment directory (logs, kubeconfigs) after the run
//   GINKGO-ARGS     passed to the ginkgo CLI as they are (e.g. --focus=REGEX)
//
// Exit status: 0 when every expected spec passed, 1 on a regression, 2 when the set-up failed.

import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { KubeConfig } from '@kubernetes/client-node';

import { customResourceDefinitions, karmadaCustomResourceDefinitions } from '../../api/crds/index.js';
import { KubeClient } from '../../pkg/kube/client.js';
import { startEnvironment, type ClusterHandle, type Environment } from '../../test/envtest/index.js';
import { kubectl } from '../../test/envtest/kubectl.js';
import { installCRDs, spawnFlotilla } from '../../test/integration/controller-io.js';
import { compare, focusOn, merged, readExpected, retried, specKey, summarise, type SpecLine } from './report.js';
import { finalizeNamespaces } from './namespace-finalizer.js';
import { standInWorkloadStatus } from './workload-status.js';
import { startWebhook } from './webhook.js';
import type { WebhookProcess } from '../../test/integration/webhook-io.js';

/** ginkgo matches --focus-file anywhere in the path: each name starts after a slash (not rescheduling_test.go). */
const DEFAULT_FILES =
  '/(cluster)?propagationpolicy_test\\.go|/(cluster)?overridepolicy_test\\.go|/scheduling_test\\.go|' +
  '/dependenciesdistributor_test\\.go|/preemption_test\\.go|/failover_test\\.go';
const MEMBERS = 3;
/** A static bearer token every apiserver accepts (system:masters): the members' Secrets carry it. */
const TOKEN = 'flotilla-karmada-e2e-0123456789abcdef';
/** Where Karmada keeps member credentials. */
const CLUSTER_NAMESPACE = 'karmada-cluster';

interface Options {
  files: string;
  pollTimeout: string;
  procs: number;
  expected: string;
  keep: boolean;
  suite: string | undefined;
  ginkgoArgs: string[];
}

function parseArgs(argv: string[]): Options {
  const o: Options = {
    files: DEFAULT_FILES,
    pollTimeout: '60s',
    procs: 4,
    expected: join(source, 'expected-passing.txt'),
    keep: false,
    suite: undefined,
    ginkgoArgs: [],
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const value = (): string => {
      const v = argv[++i];
      if (v === undefined) throw new Error(`${a} needs a value`);
      return v;
    };
    if (a === '--') {
      o.ginkgoArgs = argv.slice(i + 1);
      break;
    } else if (a === '--files') o.files = value();
    else if (a === '--poll-timeout') o.pollTimeout = value();
    else if (a === '--suite') o.suite = value();
    else if (a === '--procs') o.procs = Number(value());
    else if (a === '--expected') o.expected = value();
    else if (a === '--keep') o.keep = true;
    else throw new Error(`unknown argument ${a} (see the head of hack/karmada-e2e/run.ts)`);
  }
  if (!/^\d+(ms|s|m|h)$/.test(o.pollTimeout))
    throw new Error(`--poll-timeout: a Go duration such as 60s, got ${o.pollTimeout}`);
  if (!Number.isInteger(o.procs) || o.procs < 1 || o.procs > 16) throw new Error('--procs: an integer from 1 to 16');
  return o;
}

const say = (line: string) => void process.stderr.write(`karmada-e2e: ${line}\n`);
const here = fileURLToPath(new URL('.', import.meta.url));
/** hack/karmada-e2e in the source tree (this file runs from dist/hack/karmada-e2e). */
const source = join(here, '..', '..', '..', 'hack', 'karmada-e2e');

function buildSuite(): string {
  const r = spawnSync('bash', [join(source, 'build.sh')], { stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8' });
  const bin = r.stdout.trim().split('\n').pop() ?? '';
  if (r.status !== 0 || !existsSync(bin)) throw new Error(`hack/karmada-e2e/build.sh failed (status ${r.status})`);
  return bin;
}

/** Karmada's form of a member: a Push Cluster with apiEndpoint and a Secret with token and caBundle. */
function registration(m: ClusterHandle, ca: string, index: number): object[] {
  return [
    {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: m.name, namespace: CLUSTER_NAMESPACE },
      data: { token: Buffer.from(TOKEN).toString('base64'), caBundle: Buffer.from(ca).toString('base64') },
    },
    {
      apiVersion: 'cluster.karmada.io/v1alpha1',
      kind: 'Cluster',
      metadata: { name: m.name },
      spec: {
        syncMode: 'Push',
        apiEndpoint: m.server,
        secretRef: { namespace: CLUSTER_NAMESPACE, name: m.name },
        // Karmada's e2e set-up gives each member a provider, region and zone.
        provider: 'envtest',
        region: `region${index + 1}`,
        zones: [`zone${index + 1}`],
      },
    },
  ];
}

/** The suite's kubeconfig: karmada-apiserver and karmada-host both name the hub; a context per member too. */
function suiteKubeconfig(e: Environment): string {
  const named = (c: ClusterHandle, name: string) => {
    const kc = c.kubeConfig();
    const cluster = kc.getCurrentCluster();
    const user = kc.getCurrentUser();
    if (!cluster || !user) throw new Error(`${c.name}: kubeconfig has no current cluster or user`);
    return { cluster: { ...cluster, name }, user: { ...user, name }, context: { name, cluster: name, user: name } };
  };
  const entries = [
    named(e.hub, 'karmada-apiserver'),
    named(e.hub, 'karmada-host'),
    ...e.members.map((m) => named(m, m.name)),
  ];
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: entries.map((x) => x.cluster),
    users: entries.map((x) => x.user),
    contexts: entries.map((x) => x.context),
    currentContext: 'karmada-apiserver',
  });
  const path = join(e.dir, 'karmada-e2e.kubeconfig');
  writeFileSync(path, kc.exportConfig(), { mode: 0o600 });
  return path;
}

async function setUp(e: Environment): Promise<void> {
  await installCRDs(e.hub, [...customResourceDefinitions(), ...karmadaCustomResourceDefinitions()]);
  const items: object[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CLUSTER_NAMESPACE } },
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'flotilla-system' } },
  ];
  e.members.forEach((m, i) =>
    items.push(...registration(m, readFileSync(join(e.dir, m.name, 'pki', 'ca.crt'), 'utf8'), i)),
  );
  const r = await kubectl(e.hub.kubeconfigPath, ['apply', '-f', '-'], { apiVersion: 'v1', kind: 'List', items });
  if (r.status !== 0) throw new Error(`registering the members: ${r.stderr}`);
}

/** Waits until every Cluster is Ready (the suite checks that first). */
async function waitClustersReady(hub: KubeClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  while (Date.now() < deadline) {
    const r = await hub.request<{
      items?: Array<{ metadata: { name: string }; status?: { conditions?: Array<{ type: string; status: string }> } }>;
    }>({
      method: 'GET',
      path: '/apis/cluster.karmada.io/v1alpha1/clusters',
    });
    const items = r.body?.items ?? [];
    const notReady = items.filter((c) => !c.status?.conditions?.some((x) => x.type === 'Ready' && x.status === 'True'));
    if (items.length === MEMBERS && notReady.length === 0) return;
    last = `${items.length} Clusters, not ready: ${notReady.map((c) => c.metadata.name).join(', ') || 'none'}`;
    await new Promise((res) => setTimeout(res, 1000));
  }
  throw new Error(`Clusters not Ready after ${timeoutMs} ms: ${last}`);
}

/** The suite under the ginkgo CLI, `procs` processes; its output to `logPath`. Resolves to ginkgo's exit status. */
function runSuite(bin: string, kubeconfig: string, o: Options, reportPath: string, logPath: string): Promise<number> {
  const ginkgo = join(dirname(bin), 'ginkgo');
  if (!existsSync(ginkgo)) throw new Error(`no ginkgo CLI beside ${bin}: run hack/karmada-e2e/build.sh`);
  const args = [
    'run',
    `--procs=${o.procs}`,
    `--focus-file=${o.files}`,
    `--json-report=${reportPath}`,
    '--timeout=6h',
    '--no-color',
    '-v',
    ...o.ginkgoArgs,
    bin,
    '--',
    `--poll-timeout=${o.pollTimeout}`,
  ];
  say(`running ${ginkgo} ${args.join(' ')} (output in ${logPath})`);
  const child = spawn(ginkgo, args, {
    env: { ...process.env, KUBECONFIG: kubeconfig, E2E_POLL_TIMEOUT: o.pollTimeout, PULL_BASED_CLUSTERS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const log = createWriteStream(logPath);
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  return new Promise((resolve) =>
    child.once('close', (code) => {
      log.end(() => resolve(code ?? 1));
    }),
  );
}

/**
 * Specs that change the fleet and undo it only at their end (a NoExecute taint on a Cluster, removed by
 * their last step): one that fails leaves the taint, and every spec after it places on fewer clusters.
 * Ginkgo orders Serial specs at random, so they run in a ginkgo run of their own after the rest.
 */
const LAST = '\\bcluster failover testing\\b'; // ginkgo matches "<suite description> <spec text>"; RE2's \b

/** The ginkgo runs, in order: one, or the rest then LAST (when the files hold them and no focus is given). */
function phases(o: Options): Options[] {
  const own = o.ginkgoArgs.some((a) => /^--(focus|skip)(=|$)/.test(a));
  if (own || !new RegExp(o.files).test('/failover_test.go')) return [o];
  return [
    { ...o, ginkgoArgs: [...o.ginkgoArgs, `--skip=${LAST}`] },
    { ...o, procs: 1, ginkgoArgs: [...o.ginkgoArgs, `--focus=${LAST}`] },
  ];
}

/** One ginkgo run (report`suffix`.json, e2e`suffix`.log in `results`), read into spec lines. */
async function runAndRead(bin: string, kubeconfig: string, o: Options, results: string, suffix: string) {
  const reportPath = join(results, `report${suffix}.json`);
  const status = await runSuite(bin, kubeconfig, o, reportPath, join(results, `e2e${suffix}.log`));
  if (!existsSync(reportPath))
    throw new Error(`the suite exited ${status} without a report; see ${results}/e2e${suffix}.log`);
  return summarise(JSON.parse(readFileSync(reportPath, 'utf8')) as unknown);
}

/** One line per spec that ran, the counts, and the comparison with the expected list; the exit status. */
function judge(lines: readonly SpecLine[], expectedPath: string, focused: boolean): number {
  for (const l of lines.filter((x) => x.state !== 'skipped'))
    process.stdout.write(
      `${l.state.padEnd(8)} ${specKey(l)}${l.retried ? ' (second attempt)' : ''}${l.reason ? `\n         ${l.reason}` : ''}\n`,
    );
  const count = (s: string) => lines.filter((l) => l.state === s).length;
  const ran = lines.filter((l) => l.state !== 'skipped').length;
  process.stdout.write(
    `ran ${ran}: ${count('passed')} passed, ${count('failed')} failed, ${ran - count('passed') - count('failed')} other\n`,
  );
  const expected = readExpected(readFileSync(expectedPath, 'utf8'));
  const { regressions, newlyPassing } = compare(lines, expected, focused);
  for (const key of newlyPassing) process.stdout.write(`newly passing (add to ${expectedPath}): ${key}\n`);
  for (const r of regressions)
    process.stdout.write(`REGRESSION ${r.state}: ${r.key}${r.reason ? `\n         ${r.reason}` : ''}\n`);
  process.stdout.write(
    `${expected.size} expected to pass: ${regressions.length} regressions, ${newlyPassing.length} newly passing\n`,
  );
  return regressions.length === 0 ? 0 : 1;
}

async function main(): Promise<number> {
  const o = parseArgs(process.argv.slice(2));
  const bin = o.suite ?? buildSuite();
  // Results (the suite's output, its JSON report, the controller's log) outlive the environment.
  const results = mkdtempSync(join(tmpdir(), 'flotilla-karmada-e2e-'));
  say(`results in ${results}`);
  const token = join(results, 'tokens.csv');
  writeFileSync(token, `${TOKEN},karmada-e2e,uid-karmada-e2e,system:masters\n`, { mode: 0o600 });
  const e = await startEnvironment({ members: MEMBERS, apiserverArgs: [`--token-auth-file=${token}`], keep: o.keep });
  let controller: ReturnType<typeof spawnFlotilla> | undefined;
  let webhook: WebhookProcess | undefined;
  const stopFinalizer = new AbortController();
  const stopWorkloads = new AbortController();
  let workloads: Promise<void> | undefined;
  try {
    await setUp(e);
    webhook = await startWebhook(e.hub, join(source, '..', '..'), results);
    controller = spawnFlotilla(
      [
        'controller',
        '--kubeconfig',
        e.hub.kubeconfigPath,
        '--namespace',
        'flotilla-system',
        '--failover',
        'true',
        '--failover-eviction-timeout',
        '30s',
        // The members run no workload controllers and no nodes: a Deployment there never reports the
        // replicas available that end a graceful eviction as soon as the new cluster is healthy (Karmada's
        // e2e members are kind clusters), so its kept copy goes by the timeout only, well inside the poll.
        '--graceful-eviction-timeout',
        '20s',
      ],
      join(results, 'flotilla-controller.log'),
    );
    const hub = new KubeClient(e.hub.kubeConfig(), { concurrency: 4 });
    await waitClustersReady(hub, 120_000);
    const clients = [e.hub, ...e.members].map((c) => new KubeClient(c.kubeConfig(), { concurrency: 2 }));
    const finalizer = finalizeNamespaces(clients, stopFinalizer.signal, say);
    // Until the end, retries included (the finally block stops it).
    workloads = standInWorkloadStatus(clients.slice(1), stopWorkloads.signal, say);
    const focused = o.files !== DEFAULT_FILES || o.ginkgoArgs.length > 0;
    const expected = readExpected(readFileSync(o.expected, 'utf8'));
    let lines: SpecLine[] | undefined;
    for (const [i, phase] of phases(o).entries()) {
      const run = (p: Options, name: string) => runAndRead(bin, suiteKubeconfig(e), p, results, name);
      let l = await run(phase, i === 0 ? '' : `-${i + 1}`);
      // A listed spec that did not pass gets a second attempt, alone, on the same fleet (before the next
      // phase changes it): a loaded machine times out a wait now and then; a spec that fails twice is a
      // regression.
      const failedExpected = compare(l, expected, true).regressions; // a spec this phase skipped is not retried
      const again = l.filter((x) => x.state !== 'passed' && failedExpected.some((r) => r.key === specKey(x)));
      if (again.length > 0) {
        say(`a second attempt at ${again.length} listed spec(s) that did not pass`);
        const retry = { ...phase, procs: 1, ginkgoArgs: [...o.ginkgoArgs, `--focus=${focusOn(again)}`] };
        const second = await run(retry, `-retry${i === 0 ? '' : `-${i + 1}`}`).catch(() => undefined);
        if (second) l = retried(l, second);
      }
      lines = lines ? merged(lines, l) : l;
    }
    stopFinalizer.abort();
    await finalizer;
    return judge(lines ?? [], o.expected, focused);
  } finally {
    stopFinalizer.abort();
    stopWorkloads.abort();
    await workloads;
    controller?.child.kill('SIGTERM');
    webhook?.child.kill('SIGTERM');
    if (controller) await controller.exited;
    await e.stop({ keepLogs: o.keep });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    say(err instanceof Error ? err.message : String(err));
    process.exit(2);
  },
);
