// An agent's orphan sweep: copies in its cluster whose template is gone from the hub (deleted while the
// agent was down, before it had said it held a copy, so the controller did not wait for it). Each
// candidate is checked on the hub (GET the template its annotation names: gone, or another uid) before it
// is removed. Runs at start (waiting up to 30 s for the cluster's watches to list once) and on every resync.

import { apiError, METADATA_ACCEPT, type KubeClient } from '../kube/client.js';
import { resourcePath, type Discovery } from '../kube/discovery.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { MemberWork } from './execute.js';
import type { Member } from './member.js';
import { TEMPLATE_UID_LABEL, ownerTemplate } from './ownership.js';

export interface OrphanSweepOptions {
  hub: KubeClient;
  hubDiscovery: Discovery;
  logger: Logger;
  /** The agent's cluster, when connected. */
  member(): Member | undefined;
  /** The templates the agent knows on the hub. */
  templates: ReadonlyMap<string, JsonObject>;
  work: MemberWork;
}

/** Removes this cluster's copies whose template the hub no longer holds; waits up to `waitMs` for the watches to list. */
export async function sweepOrphans(o: OrphanSweepOptions, signal: AbortSignal, waitMs: number): Promise<void> {
  const m = o.member();
  if (!m) return;
  const deadline = Date.now() + waitMs;
  // Every kind of the templates known here is watched and has listed: a watch that has not started yet
  // would hide its kind's orphans (its objects would simply be missing from the list).
  const kinds = new Set([...o.templates.values()].map(groupKind));
  const ready = () => {
    const owned = m.ownedObjects();
    const watched = m.ownedKinds();
    return { owned, done: owned.synced && [...kinds].every((k) => watched.has(k)) };
  };
  let { owned, done } = ready();
  while (!done && Date.now() < deadline && !signal.aborted) {
    await new Promise((r) => setTimeout(r, 500));
    ({ owned, done } = ready());
  }
  const known = new Set<string>();
  for (const t of o.templates.values()) known.add(ownString(t.metadata, 'uid') ?? '');
  let removed = 0;
  for (const { object } of owned.objects) {
    const uid = ownString(isObject(object.metadata) ? object.metadata.labels : undefined, TEMPLATE_UID_LABEL);
    const owner = ownerTemplate(object);
    if (!uid || !owner || known.has(uid) || signal.aborted) continue;
    try {
      const info = await o.hubDiscovery.resolve(owner.apiVersion, owner.kind);
      const res = await o.hub.request({
        method: 'GET',
        path: resourcePath(info, owner.namespace, owner.name),
        accept: METADATA_ACCEPT,
      });
      if (res.status === 200 && ownString(isObject(res.body) ? res.body.metadata : undefined, 'uid') === uid) continue;
      if (res.status !== 200 && res.status !== 404) throw apiError(res);
      const gone = await o.work.remove(m, { ...owner, uid }, owner, signal);
      if (gone === 'removed') removed++;
    } catch (err: unknown) {
      o.logger.warn('cannot check whether a copy here is an orphan; the next resync tries again', {
        template: `${owner.kind} ${owner.namespace ? `${owner.namespace}/` : ''}${owner.name}`,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }
  if (removed > 0) o.logger.info('removed copies whose template is gone from the hub', { removed });
}

/** A template's `group/Kind`, as the member's watches name kinds. */
function groupKind(t: JsonObject): string {
  const apiVersion = ownString(t, 'apiVersion') ?? '';
  const slash = apiVersion.indexOf('/');
  return `${slash < 0 ? '' : apiVersion.slice(0, slash)}/${ownString(t, 'kind') ?? ''}`;
}
