// Reads each ready member on an interval for what its Cluster's status says of it (cluster-summary.ts):
// the Kubernetes version, the resource summary from its Nodes and Pods, and its API enablements. Bounded
// in cost: lists are paginated (500 a page, at most MAX_PAGES pages; past that the summary is not
// written rather than written short), finished Pods are left out by a field selector, and discovery is
// read each round in two requests where the member serves aggregated discovery (member-discovery.ts).
// A member that fails a read keeps its last facts; the failure is logged once per change of message.

import type { KubeClient } from '../kube/client.js';
import { listPages } from '../kube/list-pages.js';
import type { JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import { resourceSummary, type APIEnablement, type ResourceSummary } from './cluster-summary.js';
import { MemberDiscovery, readAPIEnablements } from './member-discovery.js';

const PAGE = 500;
const MAX_PAGES = 400;

/** What the controller last read from a member, in Karmada's Cluster status fields. */
export interface ClusterFacts {
  kubernetesVersion?: string;
  resourceSummary?: ResourceSummary;
  apiEnablements?: APIEnablement[];
}

async function listAll(
  client: KubeClient,
  path: string,
  signal: AbortSignal,
  fieldSelector?: string,
): Promise<JsonObject[]> {
  const { items, complete } = await listPages(client, path, {
    signal,
    pageSize: PAGE,
    maxPages: MAX_PAGES,
    ...(fieldSelector ? { fieldSelector } : {}),
  });
  if (complete) return items;
  throw new Error(`${path}: more than ${MAX_PAGES * PAGE} objects; the resource summary is not written`);
}

/** Reads one member's facts; `withDiscovery` also reads its API enablements. Throws on a failed read. */
export async function readClusterFacts(
  client: KubeClient,
  signal: AbortSignal,
  withDiscovery: boolean,
): Promise<ClusterFacts> {
  const version = await client.requestOk<{ gitVersion?: unknown }>({ method: 'GET', path: '/version', signal });
  const nodes = await listAll(client, '/api/v1/nodes', signal);
  const pods = await listAll(client, '/api/v1/pods', signal, 'status.phase!=Succeeded,status.phase!=Failed');
  const facts: ClusterFacts = { resourceSummary: resourceSummary(nodes, pods) };
  if (typeof version.body?.gitVersion === 'string') facts.kubernetesVersion = version.body.gitVersion;
  if (withDiscovery) facts.apiEnablements = await readAPIEnablements(client, signal);
  return facts;
}

/** The facts of every member, refreshed on an interval; `onChange` is told when a member's facts change. */
export class ClusterFactsCollector {
  private readonly facts = new Map<string, ClusterFacts>();
  private readonly discovery = new Map<string, MemberDiscovery>();
  private readonly failures = new Map<string, string>();

  constructor(
    private readonly o: {
      intervalMs: number;
      /** Ready members now, by name. */
      members(): Iterable<{ name: string; client: KubeClient; ready: boolean }>;
      onChange(name: string): void;
      logger: Logger;
    },
  ) {}

  get(name: string): ClusterFacts | undefined {
    return this.facts.get(name);
  }

  forget(name: string): void {
    this.facts.delete(name);
    this.discovery.delete(name);
    this.failures.delete(name);
  }

  /** Reads every ready member now, then every intervalMs until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      await Promise.all([...this.o.members()].filter((m) => m.ready).map((m) => this.refresh(m, signal)));
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, this.o.intervalMs);
        t.unref();
        signal.addEventListener('abort', () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  }

  /** Reads one member now (a member that just became ready need not wait for the interval). */
  async refresh(m: { name: string; client: KubeClient }, signal: AbortSignal): Promise<void> {
    let discovery = this.discovery.get(m.name);
    if (!discovery) this.discovery.set(m.name, (discovery = new MemberDiscovery()));
    const previous = this.facts.get(m.name);
    try {
      const read = await readClusterFacts(m.client, signal, false);
      // Undefined: discovery cannot have changed since the last read.
      const enablements = (await discovery.read(m.client, signal)) ?? previous?.apiEnablements;
      const next: ClusterFacts = { ...read, ...(enablements ? { apiEnablements: enablements } : {}) };
      this.failures.delete(m.name);
      if (JSON.stringify(next) === JSON.stringify(previous)) return;
      this.facts.set(m.name, next);
      this.o.onChange(m.name);
    } catch (err: unknown) {
      if (signal.aborted) return;
      const message = err instanceof Error ? err.message : String(err);
      if (this.failures.get(m.name) !== message)
        this.o.logger.warn('cannot read the cluster status from a member; its last one stays', {
          cluster: m.name,
          error: message,
        });
      this.failures.set(m.name, message);
    }
  }
}
