// Graceful eviction decisions (eviction.ts), as Karmada's taint manager and graceful eviction controller
// make them; then the plan and the binding that carry them out and say so.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { cluster, deployment, propagationPolicy, selectDeployment, type Obj } from '../../test/builders.js';
import { EngineState, templateKey } from '../engine/state.js';
import { bindingObject, type ClusterStatus, type EvictionTask } from './binding.js';
import {
  assessEvictions,
  evictingCondition,
  injectedState,
  placementHealthy,
  bindingTasks,
  type EvictionInput,
} from './eviction.js';
import { bindingClusters, plan, stepFor } from './plan.js';

const T0 = Date.parse('2026-01-01T10:00:00Z');
const TIMEOUT = 600_000;
const WHY = 'evicted: untolerated taint maintenance:NoExecute';

function input(o: Partial<EvictionInput>): EvictionInput {
  return {
    tasks: new Map(),
    targets: [],
    evicted: ['m1'],
    wasTargeted: () => true,
    before: ['m1'],
    purgeMode: 'Gracefully',
    reasons: new Map([['m1', WHY]]),
    healthy: false,
    now: T0,
    timeoutMs: TIMEOUT,
    ...o,
  };
}
const tasksOf = (tasks: readonly EvictionTask[]) => new Map(tasks.map((t) => [t.fromCluster, t]));

describe('assessEvictions: the graceful eviction rule', () => {
  it('gives a cluster taken off the template a task, and keeps its copy while no other cluster can take it', () => {
    const first = assessEvictions(input({}));
    assert.deepEqual(first.tasks, [
      {
        fromCluster: 'm1',
        purgeMode: 'Gracefully',
        reason: 'TaintUntolerated',
        producer: 'TaintManager',
        creationTimestamp: '2026-01-01T10:00:00Z',
        created: T0,
      },
    ]);
    assert.deepEqual(first.kept.get('m1'), {
      name: 'm1',
      state: 'Evicting',
      keptUntil: '2026-01-01T10:10:00Z',
      message: `${WHY}; the copy is kept until 2026-01-01T10:10:00Z (purgeMode Gracefully): no other cluster can take the template`,
    });
    assert.equal(first.due, T0 + TIMEOUT);
    assert.deepEqual(first.created, ['m1']);
    // Still nowhere to go a second before the timeout: kept (an empty placement is never "healthy").
    const later = assessEvictions(
      input({ tasks: tasksOf(first.tasks), now: T0 + TIMEOUT - 1_000, healthy: placementHealthy([], () => undefined) }),
    );
    assert.deepEqual([later.tasks.length, [...later.kept.keys()], later.created], [1, ['m1'], []]);
    // At the timeout the task ends and the copy goes.
    const ended = assessEvictions(input({ tasks: tasksOf(first.tasks), now: T0 + TIMEOUT }));
    assert.deepEqual([ended.tasks, ended.kept.size, ended.due], [[], 0, undefined]);
  });

  it('ends the task once every new cluster reports the template applied and healthy', () => {
    const first = assessEvictions(input({ targets: ['m2', 'm3'] }));
    assert.equal(
      first.kept.get('m1')?.message,
      `${WHY}; the copy is kept until 2026-01-01T10:10:00Z, or until m2, m3 report the template healthy (purgeMode Gracefully)`,
    );
    const status = new Map<string, ClusterStatus>([
      ['m2', { name: 'm2', state: 'Applied', health: { state: 'Healthy' } }],
      ['m3', { name: 'm3', state: 'Applied', health: { state: 'Progressing' } }],
    ]);
    const half = placementHealthy(['m2', 'm3'], (c) => status.get(c));
    assert.equal(half, false);
    status.set('m3', { name: 'm3', state: 'Applied', health: { state: 'Healthy' } });
    const all = placementHealthy(['m2', 'm3'], (c) => status.get(c));
    assert.equal(all, true);
    const done = assessEvictions(
      input({ tasks: tasksOf(first.tasks), targets: ['m2', 'm3'], healthy: all, now: T0 + 5_000 }),
    );
    assert.deepEqual([done.tasks, done.kept.size], [[], 0]);
  });

  it('Directly: a task, but no copy kept; Never: kept with no time limit', () => {
    const direct = assessEvictions(input({ purgeMode: 'Directly' }));
    assert.deepEqual([direct.tasks.map((t) => t.purgeMode), direct.kept.size], [['Directly'], 0]);
    const never = assessEvictions(input({ purgeMode: 'Never' }));
    assert.deepEqual(never.kept.get('m1'), {
      name: 'm1',
      state: 'Evicting',
      message: `${WHY}; the copy is kept until the cluster takes the template again (purgeMode Never)`,
    });
    assert.equal(never.due, undefined);
    const much = assessEvictions(input({ tasks: tasksOf(never.tasks), now: T0 + 100 * TIMEOUT, healthy: true }));
    assert.deepEqual(much.tasks, never.tasks);
  });

  it('makes no task for a cluster the previous plan did not target, and drops the task of a cluster targeted again', () => {
    assert.deepEqual(assessEvictions(input({ wasTargeted: () => false })).tasks, []);
    const first = assessEvictions(input({}));
    const back = assessEvictions(input({ tasks: tasksOf(first.tasks), evicted: [], targets: ['m1'] }));
    assert.deepEqual([back.tasks, back.kept.size], [[], 0]);
  });

  it("application failover: the task is the policy's (purge mode, grace period), not the taint manager's", () => {
    const failover = { tolerationMs: 300_000, purgeMode: 'Gracefully' as const, gracePeriodMs: 30_000, rules: [] };
    const out = assessEvictions(
      input({ application: { clusters: new Set(['m1']), failover }, purgeMode: 'Never', reasons: new Map() }),
    );
    assert.deepEqual(
      out.tasks.map((t) => [t.reason, t.producer, t.purgeMode, t.gracePeriodMs]),
      [['ApplicationFailure', 'ApplicationFailover', 'Gracefully', 30_000]],
    );
    assert.equal(out.kept.get('m1')?.keptUntil, '2026-01-01T10:00:30Z');
    assert.match(out.kept.get('m1')?.message ?? '', /^evicted by application failover; /);
  });
});

describe("failover.cluster.statePreservation (Karmada's StatefulFailoverInjection)", () => {
  const rules = [
    { aliasLabelName: 'test-alias', jsonPath: '{.replicas}' },
    { aliasLabelName: 'ready', jsonPath: '{.readyReplicas}' },
  ];
  const statuses: Record<string, unknown> = { m1: { replicas: 3, readyReplicas: 2 }, m2: { replicas: 1 } };
  const sp = { rules, status: (c: string) => statuses[c] };

  it("a taint eviction's task keeps the labels read from the evicted copy's status, and the clusters the template was on", () => {
    const out = assessEvictions(
      input({ purgeMode: 'Directly', targets: ['m3'], before: ['m2', 'm1'], statePreservation: sp }),
    );
    assert.deepEqual(out.tasks[0]?.preservedLabelState, { 'test-alias': '3', ready: '2' });
    assert.deepEqual(out.tasks[0]?.clustersBeforeFailover, ['m1', 'm2']);
    assert.deepEqual([...out.unpreserved], []);
  });

  it('a label the status has no value for is left out and said; no rules or no value: the task keeps nothing', () => {
    const partial = assessEvictions(input({ evicted: ['m2'], reasons: new Map(), statePreservation: sp }));
    assert.deepEqual(partial.tasks[0]?.preservedLabelState, { 'test-alias': '1' });
    assert.deepEqual([...partial.unpreserved], [['m2', ['ready']]]);
    const none = assessEvictions(input({ statePreservation: { rules, status: () => undefined } }));
    assert.equal(none.tasks[0]?.preservedLabelState, undefined);
    assert.equal(none.tasks[0]?.clustersBeforeFailover, undefined);
    assert.equal(assessEvictions(input({})).tasks[0]?.preservedLabelState, undefined);
  });

  it('application failover keeps its own labels (app-failover-state.ts): its task carries none', () => {
    const app = { tolerationMs: 1, purgeMode: 'Directly' as const, gracePeriodMs: 30_000, rules };
    const out = assessEvictions(
      input({ statePreservation: sp, application: { clusters: new Set(['m1']), failover: app } }),
    );
    assert.equal(out.tasks[0]?.preservedLabelState, undefined);
  });

  it('injectedState: the newest task, Directly, the template on one cluster it was not on before', () => {
    const direct = assessEvictions(input({ purgeMode: 'Directly', before: ['m1'], statePreservation: sp })).tasks;
    assert.deepEqual(injectedState(direct, ['m3']), {
      labels: { 'test-alias': '3', ready: '2' },
      before: new Set(['m1']),
    });
    assert.equal(injectedState(direct, ['m2', 'm3']), undefined, 'on more than one cluster: none');
    assert.equal(injectedState([], ['m3']), undefined);
    const graceful = assessEvictions(input({ before: ['m1'], statePreservation: sp })).tasks;
    assert.equal(injectedState(graceful, ['m3']), undefined, 'Gracefully: none');
    const later = assessEvictions(input({ evicted: ['m2'], now: T0 + 1_000 })).tasks;
    assert.equal(injectedState([...direct, ...later], ['m3']), undefined, 'the newest task keeps no labels');
  });
});

describe('bindingTasks: the tasks a binding lists, read back after a restart', () => {
  it('gives back the tasks as written, with their creation time and grace period', () => {
    const first = assessEvictions(input({}));
    const app = { tolerationMs: 1, purgeMode: 'Directly' as const, gracePeriodMs: 30_000, rules: [] };
    const second = assessEvictions(
      input({ evicted: ['m2'], application: { clusters: new Set(['m2']), failover: app }, now: T0 + 1_500 }),
    );
    const b = bindingObject({
      template: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cfg', uid: 'u1' },
      controllerNamespace: 'flotilla-system',
      evictionTasks: [...first.tasks, ...second.tasks],
      clusters: [],
      errors: [],
    });
    const back = bindingTasks(JSON.parse(JSON.stringify(b)));
    assert.deepEqual(back.get('m1'), first.tasks[0]);
    // Written to the second: read back to the second.
    assert.deepEqual(back.get('m2'), { ...second.tasks[0], created: T0 + 1_000 });
  });

  it('gives back the preserved labels and the clusters before failover, own string values only', () => {
    const status = { replicas: 2 };
    const made = assessEvictions(
      input({
        purgeMode: 'Directly',
        before: ['m1'],
        statePreservation: { rules: [{ aliasLabelName: 'test-alias', jsonPath: '{.replicas}' }], status: () => status },
      }),
    );
    const b = bindingObject({
      template: { apiVersion: 'v1', kind: 'ConfigMap', namespace: 'shop', name: 'cfg', uid: 'u1' },
      controllerNamespace: 'flotilla-system',
      evictionTasks: made.tasks,
      clusters: [],
      errors: [],
    });
    const back = bindingTasks(JSON.parse(JSON.stringify(b)));
    assert.deepEqual(back.get('m1'), made.tasks[0]);
    const odd = bindingTasks({
      spec: {
        gracefulEvictionTasks: [
          {
            fromCluster: 'm1',
            purgeMode: 'Directly',
            creationTimestamp: '2026-01-01T10:00:00Z',
            preservedLabelState: JSON.parse('{"__proto__": "x", "n": 1, "ok": "y"}') as unknown,
            clustersBeforeFailover: ['m2', 7],
          },
        ],
      },
    }).get('m1');
    assert.deepEqual(Object.entries(odd?.preservedLabelState ?? {}), [
      ['__proto__', 'x'],
      ['ok', 'y'],
    ]);
    assert.deepEqual(odd?.clustersBeforeFailover, ['m2']);
  });

  it('leaves out entries it cannot read, and reads no more than 1,000', () => {
    const task = (o: Obj) => ({
      fromCluster: 'm1',
      purgeMode: 'Gracefully',
      creationTimestamp: '2026-01-01T10:00:00Z',
      ...o,
    });
    const spec = (list: unknown) => ({ spec: { gracefulEvictionTasks: list } });
    assert.equal(
      bindingTasks(spec([task({ fromCluster: 7 }), task({ purgeMode: 'Later' }), task({ creationTimestamp: 'x' })]))
        .size,
      0,
    );
    assert.equal(bindingTasks(spec('nope')).size, 0);
    assert.equal(bindingTasks(undefined).size, 0);
    const proto = JSON.parse(
      '{"__proto__": {"fromCluster": "m9"}, "purgeMode": "Gracefully", "creationTimestamp": "2026-01-01T10:00:00Z"}',
    ) as Obj;
    assert.equal(bindingTasks(spec([proto])).size, 0, 'own properties only');
    const many = Array.from({ length: 1_500 }, (_, i) => task({ fromCluster: `m${i}` }));
    assert.equal(bindingTasks(spec(many)).size, 1_000);
  });
});

describe('evictingCondition', () => {
  const kept = (name: string, keptUntil?: string): ClusterStatus => ({
    name,
    state: 'Evicting',
    message: 'why',
    ...(keptUntil ? { keptUntil } : {}),
  });
  it('says why each copy is kept, with a reason for what it waits for', () => {
    assert.deepEqual(evictingCondition([kept('m1', 'T')], 0), {
      type: 'Evicting',
      status: 'True',
      reason: 'NoOtherCluster',
      message: 'm1: why',
    });
    assert.equal(evictingCondition([kept('m1', 'T'), kept('m3')], 2)?.reason, 'WaitingForHealthyPlacement');
    assert.equal(evictingCondition([kept('m3')], 2)?.reason, 'PurgeModeNever');
    assert.equal(evictingCondition([{ name: 'm1', state: 'Applied' }], 1), undefined);
  });
});

describe('a kept copy in the plan and the binding', () => {
  const KEY = templateKey({ apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web' });
  const T = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'default', name: 'web', uid: 'uid-1' };
  /** The plan of web, claimed for m1 only, with m1 under an untolerated NoExecute taint: placement fails. */
  const nowhere = () => {
    const s = new EngineState();
    for (const o of [
      deployment(),
      propagationPolicy('pp', 'default', [selectDeployment()], { clusterAffinity: { clusterNames: ['m1'] } }),
      cluster('m1', { taints: [{ key: 'maintenance', effect: 'NoExecute' }] }),
      cluster('m2'),
    ])
      s.upsert(o);
    const result = s.renderTemplate(KEY)!;
    return plan(T, deployment(), result, result.dispatch!, 1);
  };

  it('placement found no cluster: the evicted cluster loses its copy unless a task keeps it; other members keep theirs', () => {
    const p = nowhere();
    assert.ok(p.placementFailed);
    assert.deepEqual([...p.evicted], ['m1']);
    assert.deepEqual(stepFor(p, 'm1'), { action: 'remove' });
    assert.equal(stepFor(p, 'm2').action, 'keep');
  });

  it('lists the kept copy as Evicting, outside spec.clusters and READY, with the condition', () => {
    const p = nowhere();
    const out = assessEvictions(input({ reasons: new Map(p.notChosen.map((n) => [n.cluster, n.reason])) }));
    p.evictionTasks = out.tasks;
    p.evicting = [...out.kept.values()];
    const clusters = bindingClusters(p, new Map(), () => undefined);
    assert.deepEqual(
      clusters.map((c) => [c.name, c.state, c.keptUntil]),
      [['m1', 'Evicting', '2026-01-01T10:10:00Z']],
    );
    const b = bindingObject({
      template: T,
      controllerNamespace: 'flotilla-system',
      policy: { kind: 'PropagationPolicy', namespace: 'default', name: 'pp' },
      evictionTasks: p.evictionTasks,
      clusters,
      errors: p.errors,
    });
    const spec = b.spec as Obj;
    const status = b.status as Obj;
    assert.deepEqual(spec.clusters, []);
    assert.deepEqual(
      (spec.gracefulEvictionTasks as Obj[]).map((t) => [t.fromCluster, t.purgeMode]),
      [['m1', 'Gracefully']],
    );
    assert.equal(status.ready, '0/0');
    assert.deepEqual(status.clusters, [
      {
        name: 'm1',
        state: 'Evicting',
        keptUntil: '2026-01-01T10:10:00Z',
        message:
          'evicted: untolerated taint maintenance:NoExecute; the copy is kept until 2026-01-01T10:10:00Z (purgeMode Gracefully): no other cluster can take the template',
      },
    ]);
    const evicting = (status.conditions as Obj[]).find((c) => c.type === 'Evicting');
    assert.deepEqual(evicting, {
      type: 'Evicting',
      status: 'True',
      reason: 'NoOtherCluster',
      message:
        'm1: evicted: untolerated taint maintenance:NoExecute; the copy is kept until 2026-01-01T10:10:00Z (purgeMode Gracefully): no other cluster can take the template',
    });
  });

  it('an Evicting copy beside an applied placement does not make Applied false', () => {
    const b = bindingObject({
      template: T,
      controllerNamespace: 'flotilla-system',
      policy: { kind: 'PropagationPolicy', namespace: 'default', name: 'pp' },
      clusters: [
        { name: 'm2', state: 'Applied', health: { state: 'Healthy' } },
        { name: 'm1', state: 'Evicting', message: 'why', keptUntil: '2026-01-01T10:10:00Z' },
      ],
      errors: [],
    });
    const conditions = (b.status as Obj).conditions as Obj[];
    assert.deepEqual(
      conditions.map((c) => [c.type, c.status, c.reason]),
      [
        ['Claimed', 'True', 'Claimed'],
        ['Applied', 'True', 'Applied'],
        ['Evicting', 'True', 'WaitingForHealthyPlacement'],
        ['Ready', 'True', 'Ready'],
      ],
    );
    assert.deepEqual([(b.spec as Obj).clusters, (b.status as Obj).ready], [[{ name: 'm2' }], '1/1']);
  });
});
