import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clusterInfo } from './inputs.js';
import { clusterMatches, matchLabelSelector, MatchPriority, selectorPriority } from './selectors.js';
import { cluster } from '../../test/builders.js';

describe('matchLabelSelector', () => {
  const labels = { app: 'web', tier: 'front' };
  const cases: Array<[string, unknown, boolean]> = [
    ['an empty selector matches everything', {}, true],
    ['matchLabels needs every pair', { matchLabels: { app: 'web', tier: 'back' } }, false],
    [
      'In matches a listed value',
      { matchExpressions: [{ key: 'tier', operator: 'In', values: ['front', 'x'] }] },
      true,
    ],
    ['NotIn matches an absent key', { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['a'] }] }, true],
    ['Exists needs the key', { matchExpressions: [{ key: 'zone', operator: 'Exists' }] }, false],
    ['DoesNotExist needs the key absent', { matchExpressions: [{ key: 'zone', operator: 'DoesNotExist' }] }, true],
    [
      'an empty key makes the selector invalid, so it matches nothing',
      { matchExpressions: [{ key: '', operator: 'Exists' }] },
      false,
    ],
    ['In without values is invalid', { matchExpressions: [{ key: 'app', operator: 'In', values: [] }] }, false],
    ['an unknown operator is invalid', { matchExpressions: [{ key: 'app', operator: 'Like', values: ['w'] }] }, false],
  ];
  for (const [name, sel, want] of cases) it(name, () => assert.equal(matchLabelSelector(sel, labels), want));
});

describe('selectorPriority', () => {
  const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' };
  const labels = { app: 'web' };
  const cases: Array<[string, unknown, MatchPriority]> = [
    ['a name match ranks highest', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' }, MatchPriority.Name],
    [
      'a name match ignores a label selector that would not match',
      { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web', labelSelector: { matchLabels: { app: 'x' } } },
      MatchPriority.Name,
    ],
    [
      'a label selector match ranks in the middle',
      { apiVersion: 'apps/v1', kind: 'Deployment', labelSelector: { matchLabels: { app: 'web' } } },
      MatchPriority.LabelSelector,
    ],
    ['kind alone matches everything of that kind', { apiVersion: 'apps/v1', kind: 'Deployment' }, MatchPriority.All],
    [
      'apiVersion is compared exactly',
      { apiVersion: 'extensions/v1beta1', kind: 'Deployment' },
      MatchPriority.MisMatch,
    ],
    [
      'another namespace does not match',
      { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'other' },
      MatchPriority.MisMatch,
    ],
    ['another name does not match', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'api' }, MatchPriority.MisMatch],
  ];
  for (const [name, sel, want] of cases) it(name, () => assert.equal(selectorPriority(sel, ref, labels), want));
});

describe('clusterMatches', () => {
  const c = clusterInfo(
    cluster('m1', { labels: { env: 'prod' }, provider: 'aws', region: 'eu', zones: ['eu-a', 'eu-b'] }),
  );
  const bare = clusterInfo(cluster('m2'));
  const cases: Array<[string, unknown, boolean, typeof c?]> = [
    ['an empty affinity matches', {}, true],
    ['exclude wins over everything', { clusterNames: ['m1'], exclude: ['m1'] }, false],
    ['clusterNames is an allow-list', { clusterNames: ['m2'] }, false],
    ['labelSelector is checked against cluster labels', { labelSelector: { matchLabels: { env: 'prod' } } }, true],
    [
      'provider In matches spec.provider',
      { fieldSelector: { matchExpressions: [{ key: 'provider', operator: 'In', values: ['aws'] }] } },
      true,
    ],
    [
      'region NotIn excludes',
      { fieldSelector: { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['eu'] }] } },
      false,
    ],
    [
      'zone In matches any of the zones',
      { fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['eu-b'] }] } },
      true,
    ],
    [
      'zone NotIn on a cluster without zones matches',
      { fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'NotIn', values: ['eu-b'] }] } },
      true,
      bare,
    ],
    [
      'zone In on a cluster without zones does not match',
      { fieldSelector: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['eu-b'] }] } },
      false,
      bare,
    ],
    [
      'region NotIn on a cluster without a region matches',
      { fieldSelector: { matchExpressions: [{ key: 'region', operator: 'NotIn', values: ['eu'] }] } },
      true,
      bare,
    ],
    [
      'an unsupported field key never matches In',
      { fieldSelector: { matchExpressions: [{ key: 'metadata.name', operator: 'In', values: ['m1'] }] } },
      false,
    ],
  ];
  for (const [name, affinity, want, target] of cases)
    it(name, () => assert.equal(clusterMatches(target ?? c, affinity), want));
});
