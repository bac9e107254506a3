// `flotilla apply`: render, then server-side apply each member's objects to it, recorded in an ApplySet.
// Options → plan (delivery.ts) → appliers (pkg/kube) → output (delivery-output.ts).

import type { CommandIO } from './command.js';
import { UsageError } from './command.js';
import type { ApplyFlags, DiffFlags } from './commands.js';
import { ApplyOutput } from './delivery-output.js';
import type { InputOptions } from './inputs.js';
import { Interrupted } from './interrupt.js';
import { kubeConfigSource } from './kubeflags.js';
import type { Plan, deliver } from './delivery.js';
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
  if (!/^[0-9]+$/.test(values.concurrency) || !Number.isInteger(concurrency) || concurrency < 1 || concurrency > 1000)
    throw new UsageError(`--concurrency must be an integer from 1 to 1000, not ${JSON.stringify(values.concurrency)}`);
  const name = values.applyset;
  if (name !== undefined && (name.length > 253 || !DNS_SUBDOMAIN.test(name)))
    throw new UsageError(`--applyset ${JSON.stringify(name)}: must be a lowercase DNS subdomain (a Secret name)`);
  const ns = values['applyset-namespace'];
  if (ns.length > 63 || !DNS_LABEL.test(ns))
    throw new UsageError(
      `--applyset-namespace ${JSON.stringify(ns)}: must be a lowercase DNS label (a namespace name)`,
    );
  return {
    input,
    kubeconfig: values.kubeconfig,
    contexts: values.context,
    applySetName: name,
    applySetNamespace: ns,
    concurrency,
  };
}

export function isTTY(stream: NodeJS.WritableStream): boolean {
  return (stream as { isTTY?: boolean }).isTTY === true;
}

/** What `apply` and `diff` both do before delivering: flags, the plan, the apply set and the tooling. */
export interface Prepared {
  flags: DeliveryFlags;
  plan: Plan;
  applySet: { name: string; namespace: string };
  tooling: string;
  deliver: typeof deliver;
}

/**
 * Reads the flags and the input and renders the plan; prints the notes. An interruption or a problem with
 * the input is printed here and returned as `{ problems }` (nothing may be delivered), or `{ code }`.
 */
export async function prepareDelivery(
  command: 'apply' | 'diff',
  values: ApplyFlags | DiffFlags,
  io: CommandIO,
): Promise<Prepared | { code: number } | { problems: string[] }> {
  const flags = readDeliveryFlags(values);
  // Loaded here, not at the top: it brings in @kubernetes/client-node, which render and validate never need.
  const { planDelivery, deliver, defaultApplySetName } = await import('./delivery.js');
  let plan: Plan;
  try {
    const kubeconfig = kubeConfigSource({ kubeconfig: flags.kubeconfig }, io.env);
    plan = await planDelivery({
      input: flags.input,
      kubeconfig,
      contexts: flags.contexts,
      stdin: io.stdin,
      signal: io.signal,
    });
  } catch (err: unknown) {
    if (!(err instanceof Interrupted)) throw err;
    io.stderr.write(`flotilla ${command}: ${err.message}\n`);
    return { code: err.exitCode };
  }
  for (const n of plan.notes) io.stderr.write(`${n}\n`);
  if (plan.problems.length > 0) {
    for (const p of plan.problems) io.stderr.write(`error: ${p}\n`);
    return { problems: plan.problems };
  }
  const applySet = {
    name: flags.applySetName ?? defaultApplySetName(flags.input.filenames),
    namespace: flags.applySetNamespace,
  };
  return { flags, plan, applySet, tooling: `flotilla/v${await readVersion()}`, deliver };
}

export async function run(values: ApplyFlags, io: CommandIO): Promise<number> {
  const dryRun = values['dry-run'] === 'server';
  const p = await prepareDelivery('apply', values, io);
  if ('code' in p) return p.code;
  if ('problems' in p) {
    io.stderr.write('nothing was applied\n');
    if (values.output === 'json')
      io.stdout.write(
        `${JSON.stringify({ applySet: null, dryRun, members: [], objects: [], errors: p.problems }, null, 2)}\n`,
      );
    return 1;
  }
  const output = new ApplyOutput(io.stdout, io.stderr, { format: values.output, tty: isTTY(io.stdout), dryRun });
  const { reports, applySetId } = await p.deliver(p.plan, {
    mode: dryRun ? 'dry-run' : 'apply',
    prune: values.prune,
    applySet: p.applySet,
    tooling: p.tooling,
    concurrency: p.flags.concurrency,
    signal: io.signal,
    onPlan: (m, n) => output.onPlan(m, n),
    onResult: (m, r) => output.onResult(m, r),
  });
  return output.finish(reports, { ...p.applySet, id: applySetId });
}
