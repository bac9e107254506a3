// The template's own status from its members' copies (aggregate.ts), written on its status subresource
// with the binding once every targeted member has reported on the current plan, when its kind has one.
// A status the template already holds costs no request: the one last written, or the one the hub's
// template says (a count of 0 is what the apiserver stores as no field, as Go's omitempty drops it).

import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import { resourcePath, type Discovery } from '../kube/discovery.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import { aggregateStatus, aggregates, type MemberObservation } from './aggregate.js';
import type { MemberReport } from './execute.js';
import type { TemplatePlan } from './plan.js';

export class TemplateStatusWriter {
  /** Template key → the aggregated status last written on it. */
  private readonly written = new Map<string, string>();

  constructor(private readonly o: { hub: KubeClient; hubDiscovery: Discovery }) {}

  /** The status of template `key` from its members' reports on plan `p`. */
  async put(
    key: string,
    p: TemplatePlan,
    template: JsonObject,
    reports: ReadonlyMap<string, MemberReport> | undefined,
  ): Promise<void> {
    const t = p.identity;
    if (!aggregates(t.apiVersion, t.kind)) return;
    const members: MemberObservation[] = [...p.clusters.keys()].map((cluster) => {
      const r = reports?.get(cluster);
      return { cluster, object: r && r.version === p.version ? r.observed : undefined };
    });
    const meta = isObject(template.metadata) ? template.metadata : {};
    const status = aggregateStatus(t.kind, typeof meta.generation === 'number' ? meta.generation : undefined, members);
    if (!status) return;
    const text = JSON.stringify(status);
    if (this.written.get(key) === text) return;
    if (holds(template.status, status)) {
      this.written.set(key, text);
      return;
    }
    const info = await this.o.hubDiscovery.resolve(t.apiVersion, t.kind);
    const res = await this.o.hub.request({
      method: 'PATCH',
      accept: METADATA_ACCEPT,
      path: `${resourcePath(info, t.namespace, t.name)}/status`,
      contentType: 'application/merge-patch+json',
      body: { status },
    });
    if (res.status === 404) return;
    if (res.status >= 400) throw apiError(res);
    this.written.set(key, text);
  }

  forget(key: string): void {
    this.written.delete(key);
  }
}

/** Whether `have` already says what merge patch `patch` would write: each field equal, a zero value as an absent one. */
function holds(have: unknown, patch: JsonObject): boolean {
  const h = isObject(have) ? have : {};
  return Object.entries(patch).every(([k, v]) => {
    const x = Object.hasOwn(h, k) ? h[k] : undefined;
    if (isObject(v)) return holds(x, v);
    if (x === undefined)
      return v === 0 || v === '' || v === false || v === null || (Array.isArray(v) && v.length === 0);
    return JSON.stringify(x) === JSON.stringify(v);
  });
}
