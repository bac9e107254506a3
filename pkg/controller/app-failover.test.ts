// Reading statePreservation's JSONPath on a member copy's status (failover.application itself: pkg/engine/dispatch.test.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PassThrough } from 'node:stream';

import { createLogger } from '../runtime/log.js';
import { preservedLabels, readStatusPath } from './app-failover.js';
import { ApplicationFailover } from './app-failover-state.js';
import type { MemberReport } from './execute.js';
import type { TemplatePlan } from './plan.js';

describe('readStatusPath', () => {
  const status = { replicas: 3, conditions: [{ type: 'Ready', status: 'True' }], nested: { ok: true } };

  it('reads {.a.b} and {.list[n].field} to a scalar', () => {
    assert.equal(readStatusPath(status, '{.replicas}'), '3');
    assert.equal(readStatusPath(status, '{ .conditions[0].type }'), 'Ready');
    assert.equal(readStatusPath(status, '.nested.ok'), 'true');
  });

  it('is undefined for objects, missing fields, inherited ones, filters and other syntax', () => {
    assert.equal(readStatusPath(status, '{.nested}'), undefined);
    assert.equal(readStatusPath(status, '{.missing.x}'), undefined);
    assert.equal(readStatusPath(status, '{.constructor}'), undefined);
    assert.equal(readStatusPath(status, '{.conditions[?(@.type=="Ready")].status}'), undefined);
    assert.equal(readStatusPath(status, 'replicas'), undefined);
  });

  it('keeps label values within 63 characters', () => {
    const labels = preservedLabels([{ aliasLabelName: 'k', jsonPath: '{.s}' }], { s: 'x'.repeat(100) });
    assert.equal(labels.k?.length, 63);
  });
});

describe('ApplicationFailover.preserveState', () => {
  const app = {
    tolerationMs: 0,
    purgeMode: 'Gracefully' as const,
    gracePeriodMs: 0,
    rules: [{ aliasLabelName: 'kept', jsonPath: '{.phase}' }],
  };
  const cm = () => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', labels: { a: 'b' } } });
  const planOf = (steps: Array<[string, Record<string, unknown>]>) =>
    ({
      version: 1,
      generation: 1,
      appFailover: app,
      clusters: new Map(steps.map(([c]) => [c, { name: c, state: 'Pending' }])),
      steps: new Map(steps.map(([c, object]) => [c, { action: 'apply', object }])),
    }) as unknown as TemplatePlan;

  it('labels the copies on clusters the template moved to, not an object another cluster shares', () => {
    const f = new ApplicationFailover(createLogger({ level: 'error', stream: new PassThrough() }));
    const before = planOf([
      ['m1', cm()],
      ['m2', cm()],
    ]);
    const unhealthy: MemberReport = {
      version: 1,
      status: { name: 'm1', state: 'Applied', health: { state: 'Progressing' } },
      observed: { status: { phase: 'blue' } },
    };
    f.observe('k', 'm1', unhealthy, before);
    assert.deepEqual([...f.assess('k', 1, Date.now() + 1_000, before, new Map([['m1', unhealthy]]))], ['m1']);
    const shared = cm();
    const after = planOf([
      ['m2', shared],
      ['m3', shared],
    ]);
    f.preserveState('k', after);
    const labels = (c: string) => {
      const s = after.steps.get(c);
      return s?.action === 'apply' ? (s.object.metadata as { labels: Record<string, string> }).labels : undefined;
    };
    assert.deepEqual(labels('m3'), { a: 'b', kept: 'blue' });
    assert.deepEqual(labels('m2'), { a: 'b' }, 'm2 had the template before failover: its copy is not relabelled');
    assert.deepEqual(shared.metadata.labels, { a: 'b' });
  });
});
