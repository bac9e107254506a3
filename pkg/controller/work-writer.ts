// The Works of a template (work.ts): each pull cluster's share of the binding, applied in the cluster's
// namespace on the hub (created once when missing) while the binding places the template there, evicts
// it from there, or the agent still reports a copy; deleted once none of that holds, and with the
// template's cleanup. Written with the binding (binding-writer.ts), under the controller's field manager.

import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import type { JsonObject } from '../kube/objects.js';
import type { HubApplies } from './hub-apply.js';
import type { MemberRegistry } from './members.js';
import { CONTROLLER_FIELD_MANAGER, type TemplateIdentity } from './ownership.js';
import { executionSpace, workName, workObject, workPath, workWanted } from './work.js';

export interface WorkWriterOptions {
  hub: KubeClient;
  applies: HubApplies;
  registry: MemberRegistry;
  /** The controller's namespace: bindings (and so Work names) of cluster-scoped templates. */
  namespace: string;
  /** Pull cluster `cluster`'s Work of template `t` on the hub, as last seen. */
  work(cluster: string, t: TemplateIdentity): JsonObject | undefined;
}

export class WorkWriter {
  /** Pull clusters' namespaces on the hub known to exist. */
  private readonly spaces = new Set<string>();

  constructor(private readonly o: WorkWriterOptions) {}

  /** Each pull cluster's Work of the template: applied while wanted, deleted once not. */
  async put(t: TemplateIdentity, spec: JsonObject): Promise<void> {
    // All clusters at once: the hub client bounds the requests in flight.
    await Promise.all(
      this.o.registry.pullNames().map(async (cluster) => {
        const existing = this.o.work(cluster, t);
        const path = workPath(cluster, workName(t, this.o.namespace));
        if (workWanted(spec, cluster, existing)) {
          await this.ensureExecutionSpace(cluster);
          await this.o.applies.apply(path, workObject(t, this.o.namespace, cluster, spec), CONTROLLER_FIELD_MANAGER);
        } else if (existing) await this.deleteWork(path);
      }),
    );
  }

  /** Deletes template `t`'s Works (its cleanup is done). */
  async deleteAll(t: TemplateIdentity): Promise<void> {
    for (const cluster of this.o.registry.pullNames())
      if (this.o.work(cluster, t)) await this.deleteWork(workPath(cluster, workName(t, this.o.namespace)));
  }

  /** Forgets what was written of template `t`'s Works. */
  forget(t: TemplateIdentity): void {
    for (const c of this.o.registry.pullNames()) this.o.applies.forget(workPath(c, workName(t, this.o.namespace)));
  }

  private async deleteWork(path: string): Promise<void> {
    this.o.applies.forget(path);
    const res = await this.o.hub.request({ method: 'DELETE', path, accept: METADATA_ACCEPT });
    if (res.status >= 400 && res.status !== 404) throw apiError(res);
  }

  /** A pull cluster's namespace on the hub, created once if missing (the chart creates it with the agent's rights there). */
  private async ensureExecutionSpace(cluster: string): Promise<void> {
    const name = executionSpace(cluster);
    if (this.spaces.has(name)) return;
    const res = await this.o.hub.request({
      method: 'POST',
      path: '/api/v1/namespaces',
      accept: METADATA_ACCEPT,
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name } },
    });
    if (res.status >= 400 && res.status !== 409) throw apiError(res);
    this.spaces.add(name);
  }
}
