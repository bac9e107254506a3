// `flotilla apply`: render, then server-side apply each member's objects to it, recorded in an ApplySet.
// Options → plan (delivery.ts) → appliers (pkg/kube) → output (delivery-output.ts).

import { join } from 'node:path';

import { parseFlags, UsageError, type Command, type CommandIO } from './command.js';
import { ApplyOutput } from './delivery-output.js';
import { INPUT_FLAGS, INPUT_USAGE, inputOptions, type InputOptions } from './inputs.js';
import { Interrupted } from './interrupt.js';
import { VERSION } from './version.js';

const usage = `Render, then apply each member cluster's objects to it with server-side apply.

Usage:
  flotilla apply -f PATH... [--kubeconfig FILE] [--context NAME]... [--prune] [--dry-run=server]
                 [--applyset NAME] [--applyset-namespace NS] [--concurrency N] [-o text|json]

Every context of the kubeconfig is a member cluster named after the context (--context picks some). A
Cluster object in the input with a context's name gives that member its labels, provider, region, zones
and taints; a Cluster object with no context of its name is an error.

Objects are applied with field manager "flotilla" and labelled applyset.kubernetes.io/part-of=<id>; a
Secret NS/NAME on each member records the set (the ApplySet convention kubectl uses). An object that
already exists and is not in the set is left alone and reported as a conflict, unless the claiming
policy says conflictResolution: Overwrite. CRDs and Namespaces go first; missing namespaces are created.

Options:
${INPUT_USAGE}
      --kubeconfig FILE        default: the files in $KUBECONFIG, else ~/.kube/config
      --context NAME           deliver to this member only; repeatable (placement still sees every context)
      --prune                  delete objects this apply set holds on a member that no longer render for it
      --dry-run MODE           server: the apiservers check every change, nothing is written
      --applyset NAME          the apply set's name (default: flotilla-<base names of the -f paths>)
      --applyset-namespace NS  namespace of the apply set's Secret on each member (default flotilla-system)
      --concurrency N          requests in flight per member (default 16); members run in parallel
  -o, --output FORMAT          text (default) or json
  -h, --help                   this help

Give --applyset when two inputs have paths with the same base names: they would share one set, and
--prune of one would delete the other's objects.
Exit status: 0 everything applied; 1 invalid input, a conflict, a failed object or an unreachable member
(every problem is printed); 2 usage.`;

export const DEFAULT_CONCURRENCY = 16;
export const DEFAULT_APPLYSET_NAMESPACE = 'flotilla-system';

export interface DeliveryFlags {
  input: InputOptions;
  kubeconfig: string | undefined;
  contexts: string[];
  applySetName: string | undefined;
  applySetNamespace: string;
  concurrency: number;
}

const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export const deliveryFlagConfig = {
  ...INPUT_FLAGS,
  kubeconfig: { type: 'string' },
  context: { type: 'string', multiple: true },
  applyset: { type: 'string' },
  'applyset-namespace': { type: 'string' },
  concurrency: { type: 'string' },
} as const;

/** Checks the flags `apply` and `diff` share; a bad value is a UsageError. */
export function readDeliveryFlags(values: {
  filename?: string[] | undefined;
  recursive?: boolean | undefined;
  kubeconfig?: string | undefined;
  context?: string[] | undefined;
  applyset?: string | undefined;
  'applyset-namespace'?: string | undefined;
  concurrency?: string | undefined;
}): DeliveryFlags {
  const input = inputOptions(values);
  const concurrency = values.concurrency === undefined ? DEFAULT_CONCURRENCY : Number(values.concurrency);
  if (!Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) throw new UsageError(`--concurrency must be an integer from 1 to 1000, not ${JSON.stringify(values.concurrency)}`);
  const name = values.applyset;
  if (name !== undefined && (name.length > 253 || !DNS_SUBDOMAIN.test(name))) throw new UsageError(`--applyset ${JSON.stringify(name)}: must be a lowercase DNS subdomain (a Secret name)`);
  const ns = values['applyset-namespace'] ?? DEFAULT_APPLYSET_NAMESPACE;
  if (ns.length > 63 || !DNS_LABEL.test(ns)) throw new UsageError(`--applyset-namespace ${JSON.stringify(ns)}: must be a lowercase DNS label (a namespace name)`);
  return { input, kubeconfig: values.kubeconfig, contexts: values.context ?? [], applySetName: name, applySetNamespace: ns, concurrency };
}

/** Where the kubeconfig comes from, read from the flags and the environment (the only env read). */
export function kubeconfigSource(flag: string | undefined, env: NodeJS.ProcessEnv): { path?: string; envPaths?: string[]; homePath?: string } {
  if (flag !== undefined) return { path: flag };
  const envPaths = (env.KUBECONFIG ?? '').split(':').filter((p) => p !== '');
  if (envPaths.length > 0) return { envPaths };
  return env.HOME ? { homePath: join(env.HOME, '.kube', 'config') } : {};
}

export function isTTY(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

async function run(args: string[], io: CommandIO): Promise<number> {
  const values = parseFlags(args, {
    ...deliveryFlagConfig,
    prune: { type: 'boolean', default: false },
    'dry-run': { type: 'string' },
    output: { type: 'string', short: 'o', default: 'text' },
  });
  if (values.help) {
    io.stdout.write(`${usage}\n`);
    return 0;
  }
  const flags = readDeliveryFlags(values);
  const dryRun = values['dry-run'];
  if (dryRun !== undefined && dryRun !== 'server' && dryRun !== 'none') throw new UsageError(`--dry-run must be server or none, not ${JSON.stringify(dryRun)} (client-side dry run: use flotilla render)`);
  if (values.output !== 'text' && values.output !== 'json') throw new UsageError(`--output must be text or json, not ${JSON.stringify(values.output)}`);

  // Loaded here, not at the top: it brings in @kubernetes/client-node, which render and validate never need.
  const { planDelivery, deliver, defaultApplySetName } = await import('./delivery.js');
  let plan;
  try {
    plan = await planDelivery({ input: flags.input, kubeconfig: kubeconfigSource(flags.kubeconfig, io.env), contexts: flags.contexts, stdin: io.stdin, signal: io.signal });
  } catch (err: unknown) {
    if (!(err instanceof Interrupted)) throw err;
    io.stderr.write(`flotilla apply: ${err.message}\n`);
    return err.exitCode;
  }
  for (const n of plan.notes) io.stderr.write(`${n}\n`);
  if (plan.problems.length > 0) {
    for (const p of plan.problems) io.stderr.write(`error: ${p}\n`);
    io.stderr.write('nothing was applied\n');
    if (values.output === 'json') io.stdout.write(`${JSON.stringify({ applySet: null, dryRun: dryRun === 'server', members: [], objects: [], errors: plan.problems }, null, 2)}\n`);
    return 1;
  }
  const output = new ApplyOutput(io.stdout, io.stderr, { format: values.output, tty: isTTY(io.stdout), dryRun: dryRun === 'server' });
  const applySet = { name: flags.applySetName ?? defaultApplySetName(flags.input.filenames), namespace: flags.applySetNamespace };
  const { reports, applySetId } = await deliver(plan, {
    mode: dryRun === 'server' ? 'dry-run' : 'apply',
    prune: values.prune,
    applySet,
    tooling: `flotilla/v${VERSION}`,
    concurrency: flags.concurrency,
    signal: io.signal,
    onPlan: (m, n) => output.onPlan(m, n),
    onResult: (m, r) => output.onResult(m, r),
  });
  return output.finish(reports, { ...applySet, id: applySetId });
}

export const command: Command = {
  name: 'apply',
  summary: 'Apply the rendered objects to every member cluster of a kubeconfig (server-side apply, ApplySet prune)',
  usage,
  run,
};
