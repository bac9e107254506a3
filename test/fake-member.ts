// A Member (pkg/controller/member.ts) whose apiserver is an in-memory one (test/fake-apiserver.ts): the
// kubeconfig names the fake's server, and every request goes to the fake as its transport.

import { KubeConfig } from '@kubernetes/client-node';

import type { JsonObject } from '../pkg/kube/objects.js';
import { Member } from '../pkg/controller/member.js';
import type { FakeApiserver } from './fake-apiserver.js';

/** Member `name` (default m1) on `api`; `onOwnedEvent` gets its owned objects' watch events. */
export function memberOn(
  api: FakeApiserver,
  o: { name?: string; concurrency?: number; onOwnedEvent?: (object: JsonObject) => void } = {},
): Member {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'c', server: api.server }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  return new Member({
    name: o.name ?? 'm1',
    kubeConfig,
    transport: api,
    userAgent: 'test',
    concurrency: o.concurrency ?? 1,
    onOwnedEvent: o.onOwnedEvent ?? (() => undefined),
    onWatchError: () => undefined,
  });
}
