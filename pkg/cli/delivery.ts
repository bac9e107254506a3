// What `apply` and `diff` share: read the input, find the members in the kubeconfig, render for them,
// and hand each member's objects to an applier. Loaded by their run functions on demand (it pulls in
// @kubernetes/client-node), so `render` and `validate` never load the client.

import { basename, resolve } from 'node:path';
import { createHash } from 'node:crypto';

import { fleetFromKubeconfig, KubeconfigClusterFactory, type Fleet } from '../cluster/index.js';
import { renderDetailed, refOf, sortInputs } from '../engine/index.js';
import {
  KubeconfigError,
  MemberApplier,
  loadKubeconfig,
  type ApplyMode,
  type ConflictResolution,
  type DesiredObject,
  type KubeconfigSource,
  type MemberReport,
  type ObjectResult,
} from '../kube/index.js';
import { checkInputs, groupOf } from './check.js';
import { describeRef, readInputs, SourceIndex, type InputOptions } from './inputs.js';

export interface PlanOptions {
  input: InputOptions;
  kubeconfig: KubeconfigSource;
  /** `--context`, repeatable; empty: every context. */
  contexts: readonly string[];
  stdin: NodeJS.ReadableStream;
  /** Aborted by SIGINT/SIGTERM: reading stops with an Interrupted error. */
  signal?: AbortSignal | undefined;
}

export interface Plan {
  fleet: Fleet;
  /** Member → the objects rendered for it, with the claiming policy's conflict resolution. */
  desired: Map<string, DesiredObject[]>;
  /** Anything wrong with the input or the kubeconfig; when not empty, nothing may be applied. */
  problems: string[];
  /** Warnings and notes (unmatched templates), printed but not fatal. */
  notes: string[];
}

function isClusterDocument(o: unknown): boolean {
  return groupOf(o).startsWith('cluster.') && refOf(o).kind === 'Cluster';
}

/**
 * Reads, checks and renders. Any problem (unreadable file, denied policy, render error, kubeconfig or
 * context error) lands in `problems`: applying part of a broken input could prune what the broken part
 * would have kept.
 */
export async function planDelivery(options: PlanOptions): Promise<Plan> {
  const read = await readInputs(options.input, {
    stdin: options.stdin,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const { documents, denied, problems, notes } = checkInputs(read);
  const sources = new SourceIndex(documents);

  const admitted = documents.filter((d) => !denied.has(d));
  const empty: Fleet = { members: [], clusters: [], errors: [] };
  let fleet = empty;
  try {
    const loaded = loadKubeconfig(options.kubeconfig);
    const clusterDocs = admitted
      .filter((d) => isClusterDocument(d.object))
      .map((d) => ({ object: d.object as Record<string, unknown>, source: d.source }));
    fleet = fleetFromKubeconfig(loaded, clusterDocs, options.contexts);
    problems.push(...fleet.errors);
  } catch (err: unknown) {
    if (!(err instanceof KubeconfigError)) throw err;
    problems.push(err.code === 'NONE' ? `${err.message}: pass --kubeconfig FILE or set KUBECONFIG` : err.message);
  }

  if (fleet.members.length === 0 || fleet.errors.length > 0) {
    // Without the members, rendering would only add "no cluster matches" noise to the real problem.
    if (problems.length === 0) problems.push('no member clusters to deliver to');
    return { fleet, desired: new Map(), problems, notes };
  }
  const objects = [...admitted.filter((d) => !isClusterDocument(d.object)).map((d) => d.object), ...fleet.clusters];
  const result = renderDetailed({ objects }, { clusters: fleet.members.map((m) => m.name), now: Date.now() });
  for (const e of result.errors) {
    const src = sources.sourceOf(e.object);
    problems.push(
      `${src ? `${src}: ` : ''}${describeRef(e.object)}${e.cluster ? ` on cluster ${e.cluster}` : ''}: ${e.message}`,
    );
  }
  for (const w of result.warnings) {
    const src = sources.sourceOf(w.object);
    notes.push(`warning: ${src ? `${src}: ` : ''}${describeRef(w.object)}: ${w.message}`);
  }
  for (const u of result.unmatched) {
    const src = sources.sourceOf(u);
    notes.push(
      `note: ${src ? `${src}: ` : ''}${describeRef(u)} matches no PropagationPolicy or ClusterPropagationPolicy; not applied`,
    );
  }

  // conflictResolution of each propagation policy, read in the v1alpha1 shape whatever the input's version.
  const resolution = new Map<string, ConflictResolution>();
  for (const p of sortInputs(objects).propagation) {
    resolution.set(
      `${p.kind}/${p.namespace}/${p.name}`,
      p.spec.conflictResolution === 'Overwrite' ? 'Overwrite' : 'Abort',
    );
  }
  const desired = new Map<string, DesiredObject[]>(fleet.members.map((m) => [m.name, []]));
  for (const p of result.placements) {
    const list = desired.get(p.cluster);
    if (!list) continue;
    list.push({
      object: p.object,
      conflictResolution: resolution.get(`${p.policy.kind}/${p.policy.namespace ?? ''}/${p.policy.name}`) ?? 'Abort',
    });
  }
  return { fleet, desired, problems, notes };
}

export interface DeliverOptions {
  mode: ApplyMode;
  prune: boolean;
  applySet: { name: string; namespace: string };
  tooling: string;
  concurrency: number;
  signal: AbortSignal;
  onResult?: (member: string, r: ObjectResult) => void;
  onPlan?: (member: string, objects: number) => void;
}

export const FIELD_MANAGER = 'flotilla';

/** Every member at once, each through its own client; resolves when all are done. */
export async function deliver(plan: Plan, o: DeliverOptions): Promise<{ reports: MemberReport[]; applySetId: string }> {
  const factory = new KubeconfigClusterFactory(plan.fleet.members, {
    concurrency: o.concurrency,
    userAgent: o.tooling,
  });
  let applySetId = '';
  try {
    const reports = await Promise.all(
      plan.fleet.members.map((m) => {
        const applier = new MemberApplier(m.name, factory.client(m.name), {
          fieldManager: FIELD_MANAGER,
          parent: o.applySet,
          tooling: o.tooling,
          mode: o.mode,
          prune: o.prune,
          signal: o.signal,
          ...(o.onResult ? { onResult: o.onResult } : {}),
          ...(o.onPlan ? { onPlan: o.onPlan } : {}),
        });
        applySetId = applier.applySetId;
        return applier.run(plan.desired.get(m.name) ?? []);
      }),
    );
    return { reports, applySetId };
  } finally {
    await factory.close();
  }
}

const DNS_LABEL_MAX = 63;

/**
 * The ApplySet name when --applyset is not given: `flotilla-` and the base names of the -f paths
 * (`-f examples/quickstart` → flotilla-quickstart), so the same input gives the same set from any
 * directory or machine. Two inputs whose paths end in the same names share a set: give --applyset.
 */
export function defaultApplySetName(files: readonly string[]): string {
  const parts = [
    ...new Set(files.map((f) => (f === '-' ? 'stdin' : basename(resolve(f)).replace(/\.(ya?ml|json)$/i, '')))),
  ]
    .map((p) =>
      p
        .toLowerCase()
        .replace(/[^a-z0-9-]+/g, '-')
        .replace(/^-+|-+$/g, ''),
    )
    .filter((p) => p !== '')
    .sort();
  const name = `flotilla-${parts.join('-') || 'input'}`;
  if (name.length <= DNS_LABEL_MAX) return name;
  const hash = createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 10);
  return `${name.slice(0, DNS_LABEL_MAX - hash.length - 1).replace(/-+$/, '')}-${hash}`;
}
