import assert from 'node:assert/strict';
import { describe, it } from 'node:test';

import { PolicyStatusBook, policyKey } from './policy-status.js';

const pp = { kind: 'PropagationPolicy', namespace: 'shop', name: 'web' };
const cpp = { kind: 'ClusterPropagationPolicy', name: 'all' };
const op = { kind: 'OverridePolicy', namespace: 'shop', name: 'images' };
const cop = { kind: 'ClusterOverridePolicy', name: 'labels' };
const ref = { apiVersion: 'apps/v1', kind: 'Deployment', namespace: 'shop', name: 'web' };

describe('PolicyStatusBook', () => {
  it('counts the templates a propagation policy claims and the override policies applied to them', () => {
    const book = new PolicyStatusBook();
    book.record('t1', 'Deployment shop/a', { policy: pp, overrides: [op, cop], errors: [] });
    book.record('t2', 'Deployment shop/b', { policy: pp, overrides: [op], errors: [] });
    assert.deepEqual(book.statusOf(policyKey(pp)), {
      templates: 2,
      failedTemplates: 0,
      condition: { type: 'Ready', status: 'True', reason: 'Claimed', message: 'claims 2 templates; all render' },
    });
    assert.deepEqual(book.statusOf(policyKey(op)).condition.message, 'overrides 2 templates; all render');
    assert.equal(book.statusOf(policyKey(cop)).templates, 1);
    assert.deepEqual(new Set(book.takeDirty()), new Set([policyKey(pp), policyKey(op), policyKey(cop)]));
    assert.deepEqual(book.takeDirty(), []);
  });

  it('moves a template from one policy to another, and marks only what changed', () => {
    const book = new PolicyStatusBook();
    book.record('t1', 'Deployment shop/a', { policy: pp, overrides: [], errors: [] });
    book.takeDirty();
    book.record('t1', 'Deployment shop/a', { policy: pp, overrides: [], errors: [] });
    assert.deepEqual(book.takeDirty(), [], 'the same outcome again changes nothing');
    book.record('t1', 'Deployment shop/a', { policy: cpp, overrides: [], errors: [] });
    assert.deepEqual(new Set(book.takeDirty()), new Set([policyKey(pp), policyKey(cpp)]));
    assert.equal(book.statusOf(policyKey(pp)).templates, 0);
    assert.deepEqual(book.statusOf(policyKey(pp)).condition, {
      type: 'Ready',
      status: 'True',
      reason: 'NoTemplates',
      message: 'claims no template',
    });
    assert.equal(book.statusOf(policyKey(cpp)).templates, 1);
    book.forget('t1');
    assert.deepEqual(book.takeDirty(), [policyKey(cpp)]);
    assert.equal(book.statusOf(policyKey(cpp)).templates, 0);
    book.record('t2', 'Deployment shop/b', { policy: cpp, overrides: [], errors: [] });
    book.takeDirty();
    book.record('t2', 'Deployment shop/b', { overrides: [], errors: [] });
    assert.deepEqual(book.takeDirty(), [policyKey(cpp)], 'unclaimed: it leaves its policy');
    assert.equal(book.statusOf(policyKey(cpp)).templates, 0);
  });

  it("puts every error of a claimed template on the propagation policy, and an override rule's error on its override policy", () => {
    const book = new PolicyStatusBook();
    book.record('t1', 'Deployment shop/a', {
      policy: pp,
      overrides: [],
      errors: [
        {
          object: ref,
          cluster: 'east',
          policy: op,
          message: 'OverridePolicy shop/images: spec.overrideRules[0].overriders.plaintext[0].path: not found',
        },
      ],
    });
    book.record('t2', 'Deployment shop/b', { policy: pp, overrides: [op], errors: [] });
    const p = book.statusOf(policyKey(pp));
    assert.equal(p.templates, 2);
    assert.equal(p.failedTemplates, 1);
    assert.equal(p.condition.status, 'False');
    assert.equal(p.condition.reason, 'RenderErrors');
    assert.equal(
      p.condition.message,
      '1 of 2 templates cannot be rendered: Deployment shop/a on east: OverridePolicy shop/images: spec.overrideRules[0].overriders.plaintext[0].path: not found',
    );
    const o = book.statusOf(policyKey(op));
    assert.equal(o.templates, 2, 'a template whose rule failed counts as overridden');
    assert.equal(o.failedTemplates, 1);
    assert.match(o.condition.message, /^1 of 2 templates cannot be rendered: Deployment shop\/a on east/);
    // Fixed: the error goes from both.
    book.record('t1', 'Deployment shop/a', { policy: pp, overrides: [op], errors: [] });
    assert.equal(book.statusOf(policyKey(pp)).failedTemplates, 0);
    assert.equal(book.statusOf(policyKey(op)).condition.reason, 'Overriding');
  });

  it('names the first few failures and counts the rest, within a bounded message', () => {
    const book = new PolicyStatusBook();
    for (let i = 0; i < 50; i++)
      book.record(`t${i}`, `ConfigMap shop/c${i}`, {
        policy: pp,
        overrides: [],
        errors: [{ object: ref, policy: pp, message: `no cluster matches ${'x'.repeat(2_000)}` }],
      });
    const c = book.statusOf(policyKey(pp)).condition;
    assert.match(
      c.message,
      /^50 of 50 templates cannot be rendered: ConfigMap shop\/c0: no cluster matches x+…; ConfigMap shop\/c1: /,
    );
    assert.match(c.message, /; and 47 more$/);
    assert.ok(c.message.length <= 1_024);
  });

  it('says a refused policy is not used until it is accepted again', () => {
    const book = new PolicyStatusBook();
    book.refuse(op, 'spec.overrideRules[0].overriders.plaintext[0].path: Invalid value: "a": must start with "/"');
    assert.deepEqual(book.takeDirty(), [policyKey(op)]);
    assert.deepEqual(book.statusOf(policyKey(op)).condition, {
      type: 'Ready',
      status: 'False',
      reason: 'Invalid',
      message: 'not used: spec.overrideRules[0].overriders.plaintext[0].path: Invalid value: "a": must start with "/"',
    });
    book.accept(op);
    assert.deepEqual(book.takeDirty(), [policyKey(op)]);
    assert.equal(book.statusOf(policyKey(op)).condition.reason, 'NoTemplates');
    book.accept(op);
    assert.deepEqual(book.takeDirty(), [], 'accepting an accepted policy changes nothing');
  });
});
