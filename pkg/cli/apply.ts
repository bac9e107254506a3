// `flotilla apply`: render, then server-side apply each member's objects to it, recorded in an ApplySet.
// Options → plan (delivery.ts) → appliers (pkg/kube) → output (delivery-output.ts).

import type { CommandIO } from './command.js';
import { UsageError } from './command.js';
import type { ApplyFlags, DiffFlags } from './commands.js';
import { ApplyOutput } from './delivery-output.js';
import type { InputOptions } from './inputs.js';
import { Interrupted } from './interrupt.js';
import { kubeConfigSource } from './kubeflags.js';
import type { KubeconfigSource } from '../kube/kubeconfig.js';
import { readVersion } from './version.js';

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

/** Checks the flags `apply` and `diff` share; a bad value is a UsageError. */
export function readDeliveryFlags(values: ApplyFlags | DiffFlags): DeliveryFlags {
  const input: InputOptions = { filenames: values.filename, recursive: values.recursive };
  const concurrency = Number(values.concurrency);
  if (!/^[0-9]+$/.test(values.concurrency) || !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000) throw new UsageError(`--concurrency must be an integer from 1 to 1000, not ${JSON.stringify(values.concurrency)}`);
  const name = values.applyset;
  if (name !== undefined && (name.length > 253 || !DNS_SUBDOMAIN.test(name))) throw new UsageError(`--applyset ${JSON.stringify(name)}: must be a lowercase DNS subdomain (a Secret name)`);
  const ns = values['applyset-namespace'];
  if (ns.length > 63 || !DNS_LABEL.test(ns)) throw new UsageError(`--applyset-namespace ${JSON.stringify(ns)}: must be a lowercase DNS label (a namespace name)`);
  return { input, kubeconfig: values.kubeconfig, contexts: values.context, applySetName: name, applySetNamespace: ns, concurrency };
}

/** Where the kubeconfig comes from: --kubeconfig, $KUBECONFIG, ~/.kube/config or the pod's service account (every context kept). */
export function kubeconfigSource(flag: string | undefined, env: NodeJS.ProcessEnv): KubeconfigSource {
  return kubeConfigSource({ kubeconfig: flag }, env);
}

export function isTTY(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

export async function run(values: ApplyFlags, io: CommandIO): Promise<number> {
  const flags = readDeliveryFlags(values);
  const dryRun = values['dry-run'];

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
    tooling: `flotilla/v${await readVersion()}`,
    concurrency: flags.concurrency,
    signal: io.signal,
    onPlan: (m, n) => output.onPlan(m, n),
    onResult: (m, r) => output.onResult(m, r),
  });
  return output.finish(reports, { ...applySet, id: applySetId });
}
