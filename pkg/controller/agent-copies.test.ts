// The agent holds a template's rendered copy only while it is being applied: once its cluster reports the
// copy applied, the plan lets it go, and anything that would apply it again plans the template first. On
// in-memory hub and member apiservers.

import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { test } from 'node:test';

import { cluster, configMap, overridePolicy, propagationPolicy } from '../../test/builders.js';
import { FakeApiserver } from '../../test/fake-apiserver.js';
import { memberOn } from '../../test/fake-member.js';
import { heapAfterGC } from '../../test/heap.js';
import { EngineState, templateKey, type TemplateResult } from '../engine/state.js';
import { KubeClient } from '../kube/client.js';
import { isObject, type JsonObject } from '../kube/objects.js';
import { createLogger } from '../runtime/log.js';
import { AgentReconciler } from './agent.js';
import { EventRecorder } from './events.js';
import { workObject } from './work.js';

/** An engine state that keeps a weak reference to each copy it renders for the agent. */
class WatchedState extends EngineState {
  readonly copies: Array<WeakRef<JsonObject>> = [];
  override renderPlaced(...args: Parameters<EngineState['renderPlaced']>): TemplateResult | undefined {
    const out = super.renderPlaced(...args);
    for (const p of out?.placements ?? []) this.copies.push(new WeakRef(p.object));
    return out;
  }
}

async function until(what: string, ok: () => boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!ok()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const labelsOn = (api: FakeApiserver) => {
  const meta = api.get('v1', 'ConfigMap', 'shop', 'cfg')?.metadata;
  return isObject(meta) && isObject(meta.labels) ? meta.labels : {};
};

test('an applied copy is let go; a retry of the member work renders the template as it is now', async () => {
  const hub = new FakeApiserver();
  const memberApi = new FakeApiserver();
  const template = hub.put(configMap('cfg', 'shop', { k: 'v' }));
  const meta = template.metadata as JsonObject;
  const state = new WatchedState();
  const policy = propagationPolicy('cfg', 'shop', [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg' }]);
  for (const o of [cluster('m1'), policy, template]) assert.deepEqual(state.upsert(o).rejected, []);
  const t = { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cfg', uid: String(meta.uid) };
  const work = workObject(t, 'flotilla-system', 'm1', {
    resource: t,
    policy: { kind: 'PropagationPolicy', namespace: 'shop', name: 'cfg' },
    clusters: [{ name: 'm1' }],
  });
  const client = new KubeClient(hub, { concurrency: 1 });
  const m = memberOn(memberApi);
  const r = new AgentReconciler({
    hub: client,
    state,
    member: () => m,
    cluster: 'm1',
    clusterObject: () => ({ spec: { syncMode: 'Pull' } }),
    work: (name) => (name === (work.metadata as JsonObject).name ? work : undefined),
    namespace: 'flotilla-system',
    concurrency: 1,
    events: new EventRecorder(client, { component: 'test', instance: 'test', disabled: true }),
    logger: createLogger({ level: 'error', stream: new PassThrough() }),
  });
  const key = templateKey(t);
  r.templates.set(key, template);
  const stop = new AbortController();
  void r.run(stop.signal);
  try {
    r.queue.add(key);
    await until('the copy is on the member', () => memberApi.get('v1', 'ConfigMap', 'shop', 'cfg') !== undefined);
    assert.equal(state.copies.length, 1);
    // Applied and reported: nothing holds the rendered copy any more.
    await until('the rendered copy is collected', () => {
      heapAfterGC();
      return state.copies[0]!.deref() === undefined;
    });

    // The template's overrides change while nothing queues it; the member's work runs again (a retry).
    const rule = { overriders: { labelsOverrider: [{ operator: 'add', value: { tier: 'gold' } }] } };
    assert.deepEqual(state.upsert(overridePolicy('gold', 'shop', [rule])).rejected, []);
    assert.equal(await r.work.execute(m, key, stop.signal), undefined);
    // It applies the template rendered again, not the copy planned before the change.
    await until('the member has the new label', () => labelsOn(memberApi).tier === 'gold');
    assert.equal(state.copies.length, 2);
  } finally {
    stop.abort();
  }
});
