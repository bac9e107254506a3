// Recent hub Events about one object (core/v1, where the controller records them and `kubectl describe`
// reads them), newest first, bounded.

import type { KubeClient } from '../kube/client.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { EventFact, ObjectRef } from './types.js';

/** How many events are read (one page) and returned at most. */
export const MAX_EVENTS = 50;

function eventFact(e: JsonObject, fallback: ObjectRef): EventFact {
  const involved = isObject(e.involvedObject) ? e.involvedObject : {};
  const ns = ownString(involved, 'namespace');
  const source = ownString(e, 'reportingComponent') || ownString(e.source, 'component');
  const last = ownString(e, 'lastTimestamp') ?? ownString(e, 'eventTime') ?? ownString(e.series, 'lastObservedTime');
  const first = ownString(e, 'firstTimestamp') ?? ownString(e, 'eventTime');
  return {
    type: ownString(e, 'type') ?? 'Normal',
    reason: ownString(e, 'reason') ?? '',
    message: ownString(e, 'message') ?? '',
    count: typeof e.count === 'number' && Number.isFinite(e.count) ? e.count : 1,
    ...(first ? { firstTime: first } : {}),
    ...(last ? { lastTime: last } : {}),
    ...(source ? { source } : {}),
    involved: {
      apiVersion: ownString(involved, 'apiVersion') ?? fallback.apiVersion,
      kind: ownString(involved, 'kind') ?? fallback.kind,
      ...(ns ? { namespace: ns } : {}),
      name: ownString(involved, 'name') ?? fallback.name,
    },
  };
}

/**
 * The hub's Events about `ref`, newest first, at most `limit` (≤ MAX_EVENTS). Events about a cluster-scoped
 * object are looked for in `default`, where the controller records them. Rejects with the client's error.
 */
export async function recentEvents(
  client: KubeClient,
  ref: ObjectRef,
  signal?: AbortSignal,
  limit = MAX_EVENTS,
): Promise<EventFact[]> {
  const namespace = ref.namespace ?? 'default';
  const res = await client.requestOk<{ items?: unknown[] }>({
    method: 'GET',
    path: `/api/v1/namespaces/${encodeURIComponent(namespace)}/events`,
    query: {
      fieldSelector: `involvedObject.kind=${ref.kind},involvedObject.name=${ref.name}`,
      limit: String(MAX_EVENTS * 10),
    },
    signal,
  });
  const facts = (res.body?.items ?? [])
    .filter(isObject)
    .filter((e) => {
      // The field selector already says so; a server that ignores it (or a proxy) is not trusted to.
      if (ownString(e.involvedObject, 'kind') !== ref.kind || ownString(e.involvedObject, 'name') !== ref.name)
        return false;
      const api = ownString(e.involvedObject, 'apiVersion');
      return api === undefined || api === ref.apiVersion || api.split('/')[0] === ref.apiVersion.split('/')[0];
    })
    .map((e) => eventFact(e, ref));
  const time = (f: EventFact) => Date.parse(f.lastTime ?? f.firstTime ?? '') || 0;
  return facts.sort((a, b) => time(b) - time(a)).slice(0, Math.max(0, Math.min(limit, MAX_EVENTS)));
}
