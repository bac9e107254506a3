// What a Cluster status apply carries: the fields its field manager owns on the hub and has not measured.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { carriedStatus } from './status-carry.js';

const summary = { allocatable: { cpu: '4' } };
const ready = { type: 'Ready', status: 'True', reason: 'MemberReady', message: 'ok' };
const cluster = (manager: string) => ({
  metadata: {
    name: 'm1',
    managedFields: [
      {
        manager,
        operation: 'Apply',
        subresource: 'status',
        fieldsV1: {
          'f:status': {
            'f:resourceSummary': {},
            'f:kubernetesVersion': {},
            'f:conditions': { 'k:{"type":"Ready"}': {} },
          },
        },
      },
      { manager: 'someone', operation: 'Apply', fieldsV1: { 'f:status': { 'f:apiEnablements': {} } } },
    ],
  },
  status: {
    resourceSummary: summary,
    kubernetesVersion: 'v1.33.0',
    apiEnablements: [{ groupVersion: 'v1', resources: [] }],
    conditions: [{ type: 'Other', status: 'True' }, ready],
  },
});

describe('carriedStatus', () => {
  it('carries what the manager owns and has not measured, not what it measured or others own', () => {
    assert.deepEqual(
      carriedStatus(cluster('flotilla-controller'), 'flotilla-controller', { facts: [], condition: true }),
      {
        resourceSummary: summary,
        kubernetesVersion: 'v1.33.0',
      },
    );
    assert.deepEqual(
      carriedStatus(cluster('flotilla-controller'), 'flotilla-controller', {
        facts: ['resourceSummary', 'kubernetesVersion', 'apiEnablements'],
        condition: false,
      }),
      { conditions: [ready] },
    );
  });

  it('carries nothing for a manager that owns nothing there', () => {
    assert.deepEqual(
      carriedStatus(cluster('flotilla-agent.m1'), 'flotilla-controller', { facts: [], condition: false }),
      {},
    );
    assert.deepEqual(carriedStatus({ metadata: {} }, 'flotilla-controller', { facts: [], condition: false }), {});
  });
});
