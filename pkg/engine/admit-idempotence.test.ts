// Exactly once, whatever an object goes through at admission: random override policies whose overriders
// append (command/args `add`, plaintext `add` at a list position) or set (labels, annotations), and random
// histories of one object as a cluster admits it: a CREATE, then UPDATEs by people and tools (a patch of
// the stored object, or a replace from the user's own file), each admission followed by reinvocations
// after another mutating webhook changed the object (it adds an argument, a label and a container, sets
// defaults on containers, changes the image, reorders tolerations). Every call is a new request, as the
// apiserver makes it: nothing ties a reinvocation to the first call but the object itself; an UPDATE
// carries the stored object as oldObject.
//
// After every admission: each addition of a rule that acts on the operation is in the object exactly
// once and each label/annotation it sets has its value; a rule that does not act on the operation
// (CREATE-only rules on UPDATE) leaves what the request carried as it was, so a later edit is never undone.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { at, cluster, clusterOverridePolicy, deployment, overridePolicy, type Obj } from '../../test/builders.js';
import { OverrideSet } from './admit.js';
import { clusterInfo } from './inputs.js';

type Operation = 'CREATE' | 'UPDATE';

/** What one overrider item puts in the object, and how to count it there. */
interface Item {
  kind: 'args' | 'command' | 'plaintextArgs' | 'sidecar' | 'env' | 'toleration' | 'label' | 'annotation';
  token: string;
}

interface Rule {
  items: Item[];
  operations: Operation[];
}

interface Policy {
  name: string;
  clusterWide: boolean;
  rules: Rule[];
}

function overriders(items: Item[]): Obj {
  const out: Record<string, Obj[]> = {};
  const push = (field: string, o: Obj) => (out[field] ??= []).push(o);
  for (const { kind, token } of items) {
    if (kind === 'args') push('argsOverrider', { containerName: 'web', operator: 'add', value: [token, `${token}=v`] });
    else if (kind === 'command') push('commandOverrider', { containerName: 'web', operator: 'add', value: [token] });
    else if (kind === 'plaintextArgs')
      push('plaintext', { operator: 'add', path: '/spec/template/spec/containers/[name=web]/args/-', value: token });
    else if (kind === 'sidecar')
      push('plaintext', {
        operator: 'add',
        path: '/spec/template/spec/containers/-',
        value: { name: token, image: 'envoy', ports: [{ containerPort: 15000 }] },
      });
    else if (kind === 'env')
      push('plaintext', {
        operator: 'add',
        path: '/spec/template/spec/containers/[name=web]/env/-',
        value: { name: token, value: 'on' },
      });
    else if (kind === 'toleration')
      push('plaintext', {
        operator: 'add',
        path: '/spec/template/spec/tolerations/-',
        value: { key: token, operator: 'Exists' },
      });
    else if (kind === 'label') push('labelsOverrider', { operator: 'add', value: { [token]: 'flotilla' } });
    else push('annotationsOverrider', { operator: 'add', value: { [token]: 'flotilla' } });
  }
  return out;
}

function policyObject(p: Policy): Obj {
  const rules = p.rules.map((r) => ({ targetOperations: r.operations, overriders: overriders(r.items) }));
  const o = p.clusterWide ? clusterOverridePolicy(p.name, rules) : overridePolicy(p.name, 'default', rules);
  return { ...o, apiVersion: 'policy.flotilla.io/v1beta1' };
}

const web = (o: Obj): Obj => (at(o, 'spec.template.spec.containers') as Obj[]).find((c) => c.name === 'web') as Obj;
const list = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** How many times the item's effect is in the object (labels and annotations: 1 when set to its value). */
function count(o: Obj, { kind, token }: Item): number {
  const w = web(o);
  const named = (items: unknown, field: string) => list(items).filter((x) => (x as Obj)[field] === token).length;
  switch (kind) {
    case 'args':
      return list(w.args).filter((a, i, all) => a === token && all[i + 1] === `${token}=v`).length;
    case 'plaintextArgs':
      return list(w.args).filter((a) => a === token).length;
    case 'command':
      return list(w.command).filter((a) => a === token).length;
    case 'sidecar':
      return named(at(o, 'spec.template.spec.containers'), 'name');
    case 'env':
      return named(w.env, 'name');
    case 'toleration':
      return named(at(o, 'spec.template.spec.tolerations'), 'key');
    case 'label':
      return at(o, 'metadata.labels')?.[token as never] === 'flotilla' ? 1 : 0;
    case 'annotation':
      return at(o, 'metadata.annotations')?.[token as never] === 'flotilla' ? 1 : 0;
  }
}

// ---- generators ----------------------------------------------------------------------------------------

const itemKinds: Item['kind'][] = [
  'args',
  'command',
  'plaintextArgs',
  'sidecar',
  'env',
  'toleration',
  'label',
  'annotation',
];
const operationsArb = fc.constantFrom<Operation[]>(['CREATE'], ['UPDATE'], ['CREATE', 'UPDATE']);

const policiesArb: fc.Arbitrary<Policy[]> = fc
  .array(
    fc.record({
      clusterWide: fc.boolean(),
      rules: fc.array(
        fc.record({
          kinds: fc.array(fc.constantFrom(...itemKinds), { minLength: 1, maxLength: 3 }),
          operations: operationsArb,
        }),
        { minLength: 1, maxLength: 3 },
      ),
    }),
    { minLength: 1, maxLength: 3 },
  )
  .map((ps) =>
    ps.map((p, i) => ({
      name: `p${i}`,
      clusterWide: p.clusterWide,
      rules: p.rules.map((r, j) => ({
        operations: r.operations,
        items: r.kinds.map((kind, k) => ({ kind, token: `t-p${i}-${j}-${k}` })),
      })),
    })),
  );

/** Another mutating webhook, called after Flotilla's: it never touches what Flotilla added. */
type Foreign = 'arg' | 'label' | 'sidecarFirst' | 'defaults' | 'image' | 'reorder';
const foreignArb = fc.constantFrom<Foreign>('arg', 'label', 'sidecarFirst', 'defaults', 'image', 'reorder');

function foreign(o: Obj, change: Foreign): Obj {
  const out = structuredClone(o);
  const spec = at(out, 'spec.template.spec') as Obj;
  const containers = spec.containers as Obj[];
  const w = web(out);
  if (change === 'arg') w.args = [...list(w.args), '--injected'];
  else if (change === 'label')
    (out.metadata as Obj).labels = { ...(at(out, 'metadata.labels') ?? {}), injected: 'yes' };
  else if (change === 'sidecarFirst') {
    if (!containers.some((c) => c.name === 'injected')) containers.unshift({ name: 'injected', image: 'proxy' });
  } else if (change === 'defaults') {
    for (const c of containers) {
      c.terminationMessagePath = '/dev/termination-log';
      for (const p of list(c.ports)) (p as Obj).protocol = 'TCP';
    }
    for (const t of list(spec.tolerations)) (t as Obj).effect = '';
  } else if (change === 'image') w.image = `nginx:${list(w.args).length}`;
  else spec.tolerations = list(spec.tolerations).reverse();
  return out;
}

/** What a person or tool changes on UPDATE, on the stored object (a patch) or on their own file (a replace). */
type Edit =
  | { op: 'replicas'; n: number }
  | { op: 'image'; n: number }
  | { op: 'userArg' }
  | { op: 'dropArg'; at: number }
  | { op: 'dropContainer'; at: number }
  | { op: 'dropToleration'; at: number }
  | { op: 'dropMetadata'; at: number }
  | { op: 'dropAnnotations' };
const editArb: fc.Arbitrary<Edit> = fc.oneof(
  fc.record({ op: fc.constant('replicas' as const), n: fc.nat(5) }),
  fc.record({ op: fc.constant('image' as const), n: fc.nat(5) }),
  fc.record({ op: fc.constant('userArg' as const) }),
  fc.record({ op: fc.constant('dropArg' as const), at: fc.nat(8) }),
  fc.record({ op: fc.constant('dropContainer' as const), at: fc.nat(4) }),
  fc.record({ op: fc.constant('dropToleration' as const), at: fc.nat(4) }),
  fc.record({ op: fc.constant('dropMetadata' as const), at: fc.nat(8) }),
  fc.record({ op: fc.constant('dropAnnotations' as const) }),
);

function edit(o: Obj, e: Edit): Obj {
  const out = structuredClone(o);
  const spec = at(out, 'spec.template.spec') as Obj;
  const w = web(out);
  const drop = (items: unknown[], i: number) =>
    items.length > 0 ? items.filter((_, k) => k !== i % items.length) : items;
  const meta = out.metadata as Obj;
  if (e.op === 'replicas') (out.spec as Obj).replicas = e.n;
  else if (e.op === 'image') w.image = `nginx:1.${e.n}`;
  else if (e.op === 'userArg') w.args = [...list(w.args), '--user'];
  else if (e.op === 'dropArg') w.args = drop(list(w.args), e.at);
  else if (e.op === 'dropContainer') {
    const others = (spec.containers as Obj[]).filter((c) => c.name !== 'web');
    const gone = others[e.at % Math.max(others.length, 1)];
    spec.containers = (spec.containers as Obj[]).filter((c) => c !== gone);
  } else if (e.op === 'dropToleration') spec.tolerations = drop(list(spec.tolerations), e.at);
  else if (e.op === 'dropMetadata') {
    const keys = [
      ...Object.keys((meta.labels as Obj | undefined) ?? {}).map((k) => ['labels', k]),
      ...Object.keys((meta.annotations as Obj | undefined) ?? {}).map((k) => ['annotations', k]),
    ];
    const pick = keys[e.at % Math.max(keys.length, 1)];
    if (pick) delete (meta[pick[0] as string] as Obj)[pick[1] as string];
  } else delete meta.annotations;
  return out;
}

const stepArb = fc.record({
  from: fc.constantFrom<'stored' | 'file'>('stored', 'stored', 'file'),
  edits: fc.array(editArb, { minLength: 1, maxLength: 3 }),
  reinvocations: fc.array(foreignArb, { maxLength: 2 }),
});

const userObject = (args: boolean): Obj =>
  deployment('web', 'default', {
    containers: [{ name: 'web', image: 'nginx:1.25', env: [], args: args ? ['--port=80'] : [] }],
  });

// ---- the property -------------------------------------------------------------------------------------

describe('admission overrides: exactly once under reinvocation and UPDATE', () => {
  it('after any history of CREATE, reinvocations after foreign changes and UPDATEs, each override is in the object once', () => {
    const member = clusterInfo(cluster('eu-1'));
    fc.assert(
      fc.property(
        policiesArb,
        fc.boolean(),
        fc.array(foreignArb, { maxLength: 2 }),
        fc.array(stepArb, { maxLength: 4 }),
        (policies, userArgs, createReinvocations, steps) => {
          const set = new OverrideSet(member);
          for (const p of policies) assert.equal(set.upsert(policyObject(p)), undefined);
          const rules = policies.flatMap((p) => p.rules);

          // One admission as the apiserver runs it: Flotilla, then for each reinvocation another webhook's
          // change and Flotilla again, each call a new request.
          const admit = (sent: Obj, operation: Operation, oldObject: Obj | undefined, others: Foreign[]): Obj => {
            const call = (object: Obj) => {
              const request = { object, operation, oldObject };
              return set.admit(request).object;
            };
            let o = call(sent);
            for (const change of others) o = call(foreign(o, change));
            return o;
          };
          const check = (stored: Obj, sent: Obj, operation: Operation, when: string) => {
            for (const rule of rules)
              for (const item of rule.items) {
                const n = count(stored, item);
                if (rule.operations.includes(operation))
                  assert.equal(n, 1, `${when}: ${item.kind} ${item.token} is in the object ${n} times`);
                else
                  assert.equal(
                    n,
                    count(sent, item),
                    `${when}: ${item.kind} ${item.token} (a rule not acting on ${operation}) was changed`,
                  );
              }
          };

          let file = userObject(userArgs);
          (at(file, 'spec.template.spec') as Obj).tolerations = [];
          let stored = admit(file, 'CREATE', undefined, createReinvocations);
          check(stored, file, 'CREATE', 'create');
          steps.forEach((step, i) => {
            let sent: Obj;
            if (step.from === 'file') {
              for (const e of step.edits) if (e.op === 'image' || e.op === 'replicas') file = edit(file, e);
              sent = file;
            } else sent = step.edits.reduce(edit, stored);
            stored = admit(sent, 'UPDATE', stored, step.reinvocations);
            check(stored, sent, 'UPDATE', `update ${i + 1} (${step.from})`);
          });
        },
      ),
      { numRuns: 400 },
    );
  });
});
