// A fleet in memory for the controller core's unit tests: a hub and members, each a FakeApiserver
// (test/fake-apiserver.ts) behind the Transport seam, and a Controller (manager.ts) run on them with an
// AbortSignal, as `flotilla controller` or `flotilla agent` runs it. Tests write to the hub as a user
// would (templates, policies, Clusters), then read what the hub and the members hold and what was sent
// to them. Nothing here reaches into the controller: only ControllerOptions, run() and the apiservers.

import assert from 'node:assert/strict';

import { KubeConfig } from '@kubernetes/client-node';

import { eventually } from '../../../test/eventually.js';
import { CORE_KINDS, FakeApiserver, type FakeKind, type Obj } from '../../../test/fake-apiserver.js';
import type { Logger } from '../../runtime/log.js';
import { agentParts } from '../agent-parts.js';
import { controllerParts } from '../controller-parts.js';
import { Controller, type ControllerOptions } from '../manager.js';

export type { Obj } from '../../../test/fake-apiserver.js';

const POLICY = { group: 'policy.flotilla.io', version: 'v1beta1', namespaced: true };
const WORK = { group: 'work.flotilla.io', version: 'v1alpha1', namespaced: true };

/** What the hub serves: the core kinds, Flotilla's policies, Clusters, bindings, Works and Leases. */
export const HUB_KINDS: FakeKind[] = [
  ...CORE_KINDS,
  { ...POLICY, kind: 'ClusterPropagationPolicy', resource: 'clusterpropagationpolicies', namespaced: false },
  { ...POLICY, kind: 'ClusterOverridePolicy', resource: 'clusteroverridepolicies', namespaced: false },
  { ...WORK, kind: 'Work', resource: 'works' },
  { group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', resource: 'leases', namespaced: true },
];

export const FINALIZER = 'flotilla.io/member-cleanup';
export const UID_LABEL = 'flotilla.io/template-uid';
export const CONTROLLER_NAMESPACE = 'flotilla-system';

export interface LogEntry {
  level: string;
  msg: string;
  fields: Record<string, unknown>;
}

export interface FleetOptions {
  /** Member names (push members from the "kubeconfig"). */
  members: string[];
  /** Objects on the hub before the controller starts (Clusters, policies, templates). */
  hub?: Obj[];
  /** Objects on members before the controller starts, by member. */
  onMembers?: Record<string, Obj[]>;
  /** Controller options beyond the fleet's own. */
  options?: Partial<ControllerOptions>;
  /** The members the controller reaches (default all); the others are there for agents. */
  pushMembers?: string[];
}

export class Fleet {
  readonly hub = new FakeApiserver({ server: 'https://hub.test:6443', kinds: HUB_KINDS });
  readonly members = new Map<string, FakeApiserver>();
  readonly logs: LogEntry[] = [];
  private readonly stop = new AbortController();
  private readonly running: Array<Promise<void>> = [];

  constructor(names: string[]) {
    for (const name of names)
      this.members.set(name, new FakeApiserver({ server: `https://${name}.test:6443`, kinds: CORE_KINDS }));
  }

  member(name: string): FakeApiserver {
    const m = this.members.get(name);
    if (!m) throw new Error(`no member ${name} in this fleet`);
    return m;
  }

  readonly logger: Logger = {
    error: (msg, fields = {}) => this.logs.push({ level: 'error', msg, fields }),
    warn: (msg, fields = {}) => this.logs.push({ level: 'warn', msg, fields }),
    info: (msg, fields = {}) => this.logs.push({ level: 'info', msg, fields }),
    debug: () => undefined,
  };

  /** Starts a controller (or, with options.agent, an agent) on the fleet, on `members`; run() ends at close(). */
  start(options: Partial<ControllerOptions> = {}, members = [...this.members.keys()]): void {
    const controller = new Controller(
      {
        hub: this.hub,
        members: members.map((name) => ({
          name,
          kubeConfig: kubeConfigFor(this.member(name).server),
          transport: this.member(name),
        })),
        clusterSecrets: false,
        karmadaGroups: 'off',
        namespace: CONTROLLER_NAMESPACE,
        concurrency: 4,
        logger: this.logger,
        tooling: 'flotilla/test',
        instance: 'test',
        probeIntervalMs: 60_000,
        ...options,
      },
      options.agent ? agentParts : controllerParts,
    );
    this.running.push(controller.run(this.stop.signal));
  }

  async close(): Promise<void> {
    this.stop.abort();
    await Promise.all(this.running);
  }

  /** Requests sent so far to the hub and every member, but probes. */
  requestCount(): number {
    let n = 0;
    for (const a of [this.hub, ...this.members.values()]) n += a.requests.filter((r) => r.path !== '/readyz').length;
    return n;
  }

  /**
   * Waits (bounded) until the controller has sent nothing for `idleMs` — what it queued has been carried
   * out — so that what a test does next does not race the controller's own work.
   */
  async quiet(idleMs = 40, timeoutMs = 5_000): Promise<void> {
    let last = -1;
    let since = Date.now();
    await until(
      'the controller quiet',
      () => {
        const n = this.requestCount();
        if (n !== last) {
          last = n;
          since = Date.now();
        }
        return Date.now() - since;
      },
      (idle) => idle >= idleMs,
      timeoutMs,
    );
  }

  /** Log entries whose message contains `text`. */
  logged(text: string, level?: string): LogEntry[] {
    return this.logs.filter((l) => l.msg.includes(text) && (level === undefined || l.level === level));
  }
}

/** A fleet with its hub and members holding `hub` / `onMembers`, and a controller started on it. */
export function fleet(o: FleetOptions): Fleet {
  const f = new Fleet(o.members);
  for (const obj of o.hub ?? []) f.hub.put(obj, 'kubectl');
  for (const [name, objs] of Object.entries(o.onMembers ?? {})) for (const obj of objs) f.member(name).put(obj);
  f.start(o.options, o.pushMembers);
  return f;
}

/** Runs `body` on a fleet and closes it whatever happens. */
export async function withFleet(o: FleetOptions, body: (f: Fleet) => Promise<void>): Promise<void> {
  const f = fleet(o);
  try {
    await body(f);
  } finally {
    await f.close();
  }
}

function kubeConfigFor(server: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return kc;
}

/** Waits (bounded) until `probe()` satisfies `done`, then returns the value; fails naming `what` and the last value seen. */
export async function until<T>(what: string, probe: () => T, done: (v: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const v = await eventually(probe, done, timeoutMs, 5);
  assert.ok(done(v), `${what}: not seen within ${timeoutMs} ms; last seen: ${JSON.stringify(v)}`);
  return v;
}

// ---- objects --------------------------------------------------------------------------------------

export function cluster(
  name: string,
  o: { labels?: Record<string, string>; taints?: Obj[]; syncMode?: string } = {},
): Obj {
  return {
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name, ...(o.labels ? { labels: o.labels } : {}) },
    spec: { ...(o.taints ? { taints: o.taints } : {}), ...(o.syncMode ? { syncMode: o.syncMode } : {}) },
  };
}

export function configMap(name: string, data: Record<string, string> = { k: 'v' }, namespace = 'default'): Obj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace }, data };
}

/** A PropagationPolicy (storage version) selecting ConfigMaps by name, to `clusters` unless placement says otherwise. */
export function policy(
  name: string,
  o: { names?: string[]; clusters?: string[]; spec?: Obj; namespace?: string } = {},
): Obj {
  const selectors = (o.names ?? [undefined]).map((n) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    ...(n ? { name: n } : {}),
  }));
  return {
    apiVersion: 'policy.flotilla.io/v1beta1',
    kind: 'PropagationPolicy',
    metadata: { name, namespace: o.namespace ?? 'default' },
    spec: {
      resourceSelectors: selectors,
      ...(o.clusters ? { placement: { clusterAffinity: { clusterNames: o.clusters } } } : {}),
      ...o.spec,
    },
  };
}

/** A ClusterPropagationPolicy (storage version) selecting ConfigMaps by name. */
export function clusterPolicy(name: string, o: { names?: string[]; clusters?: string[]; spec?: Obj } = {}): Obj {
  const p = policy(name, o);
  return { ...p, kind: 'ClusterPropagationPolicy', metadata: { name } };
}

// ---- reading what the apiservers hold ------------------------------------------------------------

export function meta(o: Obj | undefined): Obj {
  return ((o?.metadata ?? {}) as Obj) ?? {};
}

/** The ConfigMap's copy on a member, or undefined. */
export function copyOn(f: Fleet, member: string, name: string, namespace = 'default'): Obj | undefined {
  return f.member(member).get('v1', 'ConfigMap', namespace, name);
}

/** The members holding a copy of ConfigMap `name`. */
export function holders(f: Fleet, name: string, namespace = 'default'): string[] {
  return [...f.members.keys()].filter((m) => copyOn(f, m, name, namespace) !== undefined);
}

export function templateOnHub(f: Fleet, name: string, namespace = 'default'): Obj | undefined {
  return f.hub.get('v1', 'ConfigMap', namespace, name);
}

export function finalizersOf(o: Obj | undefined): unknown[] {
  const fin = meta(o).finalizers;
  return Array.isArray(fin) ? fin : [];
}

/** The ResourceBinding of ConfigMap `name` on the hub (found by its spec.resource), or undefined. */
export function bindingOf(f: Fleet, name: string, namespace = 'default'): Obj | undefined {
  return f.hub.objects('work.flotilla.io/v1alpha1', 'ResourceBinding').find((b) => {
    const r = ((b.spec ?? {}) as Obj).resource as Obj | undefined;
    return r?.kind === 'ConfigMap' && r.name === name && (r.namespace ?? namespace) === namespace;
  });
}

/** The binding's status.clusters entries, by cluster name. */
export function bindingEntries(b: Obj | undefined): Map<string, Obj> {
  const clusters = ((b?.status ?? {}) as Obj).clusters;
  return new Map((Array.isArray(clusters) ? (clusters as Obj[]) : []).map((e) => [String(e.name), e]));
}

/** The names in the binding's spec.clusters. */
export function bindingTargets(b: Obj | undefined): string[] {
  const clusters = ((b?.spec ?? {}) as Obj).clusters;
  return (Array.isArray(clusters) ? (clusters as Obj[]) : []).map((c) => String(c.name)).sort();
}

/** The Events on the hub with this reason. */
export function events(f: Fleet, reason: string): Obj[] {
  return f.hub.objects('v1', 'Event').filter((e) => e.reason === reason);
}

export const sorted = (xs: string[]): string[] => [...xs].sort();
