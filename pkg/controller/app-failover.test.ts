// Reading statePreservation's JSONPath on a member copy's status (failover.application itself: pkg/engine/dispatch.test.ts).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { preservedLabels, readStatusPath } from './app-failover.js';

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
