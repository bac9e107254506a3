// Reading failover.application and statePreservation's JSONPath on a member copy's status.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { appFailoverOf, preservedLabels, readStatusPath } from './app-failover.js';

describe('appFailoverOf', () => {
  it("reads Karmada's defaults: 300 s toleration, Gracefully, 600 s grace", () => {
    assert.deepEqual(appFailoverOf({ failover: { application: {} } }), {
      tolerationMs: 300_000,
      purgeMode: 'Gracefully',
      gracePeriodMs: 600_000,
      rules: [],
    });
    assert.equal(appFailoverOf({ failover: { cluster: {} } }), undefined);
  });

  it('reads what the policy says, and leaves out rules without a label or a path', () => {
    const a = appFailoverOf({
      failover: {
        application: {
          decisionConditions: { tolerationSeconds: 0 },
          purgeMode: 'Never',
          statePreservation: { rules: [{ aliasLabelName: 'a', jsonPath: '{.x}' }, { aliasLabelName: 'b' }, 'junk'] },
        },
      },
    });
    assert.deepEqual(
      [a?.tolerationMs, a?.purgeMode, a?.rules],
      [0, 'Never', [{ aliasLabelName: 'a', jsonPath: '{.x}' }]],
    );
  });
});

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
