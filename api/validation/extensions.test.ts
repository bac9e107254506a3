// Flotilla's override extension fields (targetOperations, plaintext pathTests and [field=*] globs,
// onlyIfAbsent): accepted in policy.flotilla.io, denied with the field and a way out in policy.karmada.io,
// checked for sense, and carried through conversion in both directions.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { convertObject, toValidationShape } from '../conversion/index.js';
import { formatFieldError } from './errors.js';
import { validateObject } from './index.js';

const policy = (apiVersion: string, rule: Record<string, unknown>) => ({
  apiVersion,
  kind: 'OverridePolicy',
  metadata: { name: 'op', namespace: 'default' },
  spec: { overrideRules: [rule] },
});

const extended = {
  targetOperations: ['CREATE', 'UPDATE'],
  overriders: {
    plaintext: [
      {
        operator: 'add',
        path: '/spec/template/spec/containers/[name=*]/imagePullPolicy',
        value: 'Always',
        pathTests: [{ subPath: '/spec/template/spec/containers/[name=*]/imagePullPolicy', condition: 'MustNotExist' }],
      },
    ],
    labelsOverrider: [{ operator: 'add', value: { team: 'a' }, onlyIfAbsent: true }],
  },
};

const check = (o: Record<string, unknown>) => validateObject(toValidationShape(o));
const messages = (o: Record<string, unknown>) => check(o).errors.map(formatFieldError);

describe('extension fields', () => {
  for (const v of ['policy.flotilla.io/v1beta1', 'policy.flotilla.io/v1alpha1']) {
    it(`are accepted in ${v}`, () => {
      const r = check(policy(v, extended));
      assert.deepEqual(r.errors, []);
      assert.deepEqual(
        r.warnings.filter((w) => w.startsWith('unknown field')),
        [],
      );
    });
  }

  it('are denied in policy.karmada.io, each at its field, naming the group to use', () => {
    const m = messages(policy('policy.karmada.io/v1alpha1', extended));
    assert.deepEqual(
      m.map((x) => x.slice(0, x.indexOf(':'))),
      [
        'spec.overrideRules[0].targetOperations',
        'spec.overrideRules[0].overriders.plaintext[0].pathTests',
        'spec.overrideRules[0].overriders.plaintext[0].path',
        'spec.overrideRules[0].overriders.labelsOverrider[0].onlyIfAbsent',
      ],
    );
    for (const x of m)
      assert.match(x, /Forbidden: .* is a Flotilla extension: use apiVersion policy\.flotilla\.io\/v1beta1/);
  });

  it('a pathTest subPath must be a prefix of the path', () => {
    const m = messages(
      policy('policy.flotilla.io/v1beta1', {
        overriders: {
          plaintext: [
            {
              operator: 'add',
              path: '/spec/a/b',
              value: 1,
              pathTests: [{ subPath: '/spec/c', condition: 'MustExist' }],
            },
          ],
        },
      }),
    );
    assert.deepEqual(m, [
      'spec.overrideRules[0].overriders.plaintext[0].pathTests[0].subPath: Invalid value: "/spec/c": must be a prefix of the path "/spec/a/b"',
    ]);
  });

  it('unknown operations and conditions are unsupported values', () => {
    const m = messages(
      policy('policy.flotilla.io/v1beta1', {
        targetOperations: ['DELETE'],
        overriders: {
          plaintext: [
            { operator: 'add', path: '/spec/a', value: 1, pathTests: [{ subPath: '/spec', condition: 'Maybe' }] },
          ],
        },
      }),
    );
    assert.equal(m.length, 2);
    assert.ok(m.some((x) => /targetOperations\[0\]: Unsupported value: "DELETE"/.test(x)));
    assert.ok(m.some((x) => /pathTests\[0\]\.condition: Unsupported value: "Maybe"/.test(x)));
  });

  it('onlyIfAbsent needs operator add; a glob is for plaintext paths only', () => {
    const m = messages(
      policy('policy.flotilla.io/v1beta1', {
        overriders: {
          annotationsOverrider: [{ operator: 'replace', value: { a: 'b' }, onlyIfAbsent: true }],
          fieldOverrider: [{ fieldPath: '/spec/containers/[name=*]/x', json: [{ subPath: '/a', operator: 'remove' }] }],
        },
      }),
    );
    assert.deepEqual(m, [
      'spec.overrideRules[0].overriders.annotationsOverrider[0].onlyIfAbsent: Invalid value: true: only applies with operator "add"',
      'spec.overrideRules[0].overriders.fieldOverrider[0].fieldPath: Invalid value: "/spec/containers/[name=*]/x": a [field=*] glob is only allowed in plaintext paths',
    ]);
  });

  it('round-trip through conversion unchanged, both ways', () => {
    const beta = policy('policy.flotilla.io/v1beta1', extended);
    const alpha = convertObject(beta, 'policy.flotilla.io/v1alpha1');
    assert.deepEqual((alpha.spec as Record<string, unknown>).overrideRules, [extended]);
    assert.deepEqual(convertObject(alpha, 'policy.flotilla.io/v1beta1'), beta);
  });
});
