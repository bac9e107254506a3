// Random Gatekeeper mutators and objects for the differential test: locations with keys, list segments,
// globs, quotes (also a quoted "*" and quoted numbers), whitespace and the odd syntax error; pathTests;
// match blocks; values of every JSON type; the four mutator kinds; objects of namespaced and
// cluster-scoped kinds with lists, missing keys and wrongly typed parts.

import fc from 'fast-check';

type Obj = Record<string, unknown>;

export interface DiffCase {
  mutators: Obj[];
  object: Obj;
  operation: 'CREATE' | 'UPDATE';
  namespaceLabels: Record<string, string>;
}

const KEYS = [
  'spec',
  'containers',
  'image',
  'ports',
  'name',
  'args',
  'env',
  'value',
  'x',
  'a.b',
  'template',
  'metadata',
  'labels',
  'replicas',
];
const KEY_FIELDS = ['name', 'containerPort', 'id'];
const KEY_VALUES: Array<string | number> = ['a', 'b', 'c', '*', 8080, '8080', 'a b'];

/** `arb` one time in `n`, otherwise undefined. */
const rare = <T>(arb: fc.Arbitrary<T>, n: number): fc.Arbitrary<T | undefined> =>
  fc.oneof({ weight: 1, arbitrary: arb }, { weight: n - 1, arbitrary: fc.constant(undefined) });

type Seg = { key: string } | { field: string; value: string | number };

const quoteStyle = fc.constantFrom('bare', 'bare', 'double', 'single');
function ident(s: string, style: string): string {
  const safe = /^[A-Za-z_-][A-Za-z0-9_-]*$/.test(s);
  if (style === 'bare' && safe) return s;
  const q = style === 'single' ? "'" : '"';
  return q + s.replace(/\\/g, '\\\\').replace(new RegExp(q, 'g'), `\\${q}`) + q;
}

const k = (key: string): Seg => ({ key });
const l = (field: string, value: string | number): Seg => ({ field, value });
/** Locations that reach into the generated objects. */
const REAL: Seg[][] = [
  [k('containers'), l('name', 'a'), k('image')],
  [k('containers'), l('name', '*glob'), k('image')],
  [k('containers'), l('name', '*'), k('image')],
  [k('containers'), l('name', '*glob'), k('args')],
  [k('containers'), l('name', 'b'), k('args')],
  [k('containers'), l('name', 'a')],
  [k('containers'), l('name', 'c')],
  [k('containers'), l('name', '*glob')],
  [k('containers'), l('name', '*glob'), k('name')],
  [k('containers'), l('name', 'a'), k('ports'), l('containerPort', 8080), k('name')],
  [k('containers'), l('name', '*glob'), k('ports'), l('containerPort', '8080'), k('name')],
  [k('containers'), l('name', '*glob'), k('ports'), l('containerPort', 8080)],
  [k('containers'), l('name', '*glob'), k('ports'), l('name', 'http')],
  [k('containers'), l('id', 8080), k('x')],
  [k('containers'), l('id', '*glob'), k('x')],
  [k('containers')],
  [k('replicas')],
  [k('x')],
  [k('x'), k('y')],
  [k('image')],
  [k('template'), k('spec'), k('containers'), l('name', '*glob'), k('image')],
  [k('template'), k('spec'), k('containers'), l('name', 'b'), k('x')],
];

const randomSegs: fc.Arbitrary<Seg[]> = fc
  .array(
    fc.tuple(
      fc.constantFrom(...KEYS),
      rare(
        fc.tuple(fc.constantFrom(...KEY_FIELDS), fc.constantFrom<string | number>(...KEY_VALUES, '*glob', '*glob')),
        3,
      ),
    ),
    { minLength: 1, maxLength: 5 },
  )
  .map((parts) => {
    const out: Seg[] = [];
    for (const [key, list] of parts) {
      out.push({ key });
      if (list) out.push({ field: list[0], value: list[1] });
    }
    return out;
  });

const segs: fc.Arbitrary<Seg[]> = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...REAL) },
  { weight: 2, arbitrary: randomSegs },
);

const render = (s: readonly Seg[], styles: readonly string[], spaces: boolean): string => {
  let out = '';
  s.forEach((seg, i) => {
    const st = styles[i % styles.length] ?? 'bare';
    const sp = spaces && i % 2 === 0 ? ' ' : '';
    if ('key' in seg) out += (out === '' ? '' : '.') + ident(seg.key, st);
    else {
      const v =
        seg.value === '*glob'
          ? '*'
          : typeof seg.value === 'number'
            ? String(seg.value)
            : ident(seg.value, st === 'bare' ? 'double' : st);
      out += `[${ident(seg.field, st)}:${sp}${v}]`;
    }
  });
  return out;
};

interface Loc {
  text: string;
  prefix: string;
  segs: Seg[];
  styles: string[];
  spaces: boolean;
}

/** A location (rendered) with its segments, so pathTests can take prefixes. */
const location: fc.Arbitrary<Loc> = fc
  .record({
    segs,
    styles: fc.array(quoteStyle, { minLength: 1, maxLength: 3 }),
    spaces: fc.boolean(),
    breakIt: rare(fc.constantFrom('..', '.', '[', ']', '[name]', '0x', ' ', '🙂'), 15),
    prefix: fc.constantFrom('spec.', 'spec.', 'spec.', 'spec.', 'spec.', '', 'metadata.'),
  })
  .map(({ segs: s, styles, spaces, breakIt, prefix }) => ({
    text: prefix + render(s, styles, spaces) + (breakIt ?? ''),
    prefix,
    segs: s,
    styles,
    spaces,
  }));

const scalar = fc.oneof(
  fc.constantFrom('a', 'b', 'Always', '', 'x y', 'reg.io/app:1'),
  fc.integer({ min: -3, max: 9000 }),
  fc.constantFrom(0.5, -2.25, 8080),
  fc.boolean(),
);
const jsonValue: fc.Arbitrary<unknown> = fc.letrec((tie) => ({
  v: fc.oneof(
    { depthSize: 'small' },
    scalar,
    fc.constant(null),
    fc.array(tie('v'), { maxLength: 3 }),
    fc.dictionary(fc.constantFrom('name', 'id', 'image', 'x', 'containerPort'), tie('v'), { maxKeys: 3 }),
  ),
})).v;

const pathTests = (loc: Loc) =>
  fc
    .array(
      fc.record({
        len: fc.integer({ min: 1, max: loc.segs.length + 1 }),
        condition: fc.constantFrom('MustExist', 'MustNotExist'),
        other: rare(fc.constantFrom('spec.other', 'spec.containers[name: zzz]'), 10),
      }),
      { maxLength: 3 },
    )
    .map((ts) =>
      ts.map((t) => ({
        // A prefix of the location written the same way, or the whole text (which may be broken).
        subPath:
          t.other ??
          (t.len > loc.segs.length ? loc.text : loc.prefix + render(loc.segs.slice(0, t.len), loc.styles, loc.spaces)),
        condition: t.condition,
      })),
    );

const NAMESPACES = ['apps', 'payments', 'kube-system', 'default'];
const glob = fc.constantFrom('apps', 'pay*', '*ments', '*pay*', 'kube-*', '*', 'default', 'nope');
const nameGlob = fc.constantFrom('web', 'web-*', '*-1', '*eb*', 'web-abc', '*', 'job-');
const badSelector = fc.constantFrom<Obj>(
  { matchLabels: { team: 'a b' } },
  { matchLabels: { 'bad key': 'a' } },
  { matchLabels: { 'Example.com/team': 'a' } },
  { matchExpressions: [{ key: 'team', operator: 'in', values: ['a'] }] },
  { matchExpressions: [{ key: 'team', operator: 'In', values: [] }] },
  { matchExpressions: [{ key: 'team', operator: 'Exists', values: ['a'] }] },
  { matchExpressions: [{ key: 'team', operator: 'NotIn', values: ['-a'] }] },
  { matchExpressions: [{ key: 'x.io/team', operator: 'In', values: ['a', ''] }] },
);
const selector = fc.oneof(
  { weight: 1, arbitrary: badSelector },
  {
    weight: 4,
    arbitrary: fc.record({
      matchLabels: fc.dictionary(fc.constantFrom('team', 'env'), fc.constantFrom('a', 'b'), { maxKeys: 2 }),
    }),
  },
  {
    weight: 4,
    arbitrary: fc.record({
      matchExpressions: fc.array(
        fc.oneof(
          fc.record({
            key: fc.constantFrom('team', 'env'),
            operator: fc.constantFrom('In', 'NotIn'),
            values: fc.array(fc.constantFrom('a', 'b'), { minLength: 1, maxLength: 2 }),
          }),
          fc.record({ key: fc.constantFrom('team', 'env'), operator: fc.constantFrom('Exists', 'DoesNotExist') }),
        ),
        { maxLength: 2 },
      ),
    }),
  },
);
const criteria: Array<[string, fc.Arbitrary<unknown>]> = [
  [
    'kinds',
    fc.array(
      fc.record({
        apiGroups: fc.array(fc.constantFrom('', 'apps', '*', 'rbac.authorization.k8s.io'), { maxLength: 2 }),
        kinds: fc.array(fc.constantFrom('Pod', 'Deployment', 'Namespace', 'ClusterRole', '*'), { maxLength: 2 }),
      }),
      { maxLength: 2 },
    ),
  ],
  ['scope', fc.constantFrom('Namespaced', 'Cluster', '*')],
  ['namespaces', fc.array(glob, { maxLength: 2 })],
  ['excludedNamespaces', fc.array(glob, { maxLength: 2 })],
  ['name', nameGlob],
  ['labelSelector', selector],
  ['namespaceSelector', selector],
  ['source', fc.constantFrom('All', 'Original', 'Generated')],
];
/** One to three criteria, so that a good share of mutators still match. */
const match = fc
  .uniqueArray(fc.integer({ min: 0, max: criteria.length - 1 }), { minLength: 1, maxLength: 3 })
  .chain((picked) =>
    fc
      .tuple(...picked.map((i) => (criteria[i] as [string, fc.Arbitrary<unknown>])[1]))
      .map((values) => Object.fromEntries(picked.map((i, j) => [(criteria[i] as [string, unknown])[0], values[j]]))),
  );

const GVKS = [
  { groups: [''], versions: ['v1'], kinds: ['Pod'] },
  { groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] },
  { groups: [''], versions: ['v1'], kinds: ['Namespace', 'Pod'] },
  { groups: ['rbac.authorization.k8s.io'], versions: ['v1'], kinds: ['ClusterRole'] },
];
const applyTo = fc.array(
  fc
    .record({
      gvk: fc.constantFrom(...GVKS),
      operations: rare(fc.array(fc.constantFrom('CREATE', 'UPDATE', 'UPDATE', '*', 'DELETE'), { maxLength: 2 }), 3),
    })
    .map((a) => ({ ...a.gvk, ...(a.operations ? { operations: a.operations } : {}) })),
  { minLength: 1, maxLength: 2 },
);

const name = fc.constantFrom('m0', 'm1', 'm2', 'm3', 'm4', 'm5');
const mutation = (kind: string) => ({ apiVersion: 'mutations.gatekeeper.sh/v1', kind });

const assignValue = fc.oneof(
  { weight: 10, arbitrary: fc.record({ value: jsonValue }) },
  {
    weight: 2,
    arbitrary: fc.record({
      value: fc.record(
        { name: fc.constantFrom('a', 'b', 'c'), image: fc.constantFrom('x', 'y') },
        { requiredKeys: [] },
      ),
    }),
  },
  { weight: 2, arbitrary: fc.record({ fromMetadata: fc.record({ field: fc.constantFrom('name', 'namespace') }) }) },
  { weight: 1, arbitrary: fc.constant({ value: 'x', fromMetadata: { field: 'name' } }) },
  { weight: 1, arbitrary: fc.constant({ fromMetadata: { field: 'uid' } }) },
);

const assign = fc
  .tuple(name, location, applyTo, fc.option(match, { freq: 2 }), assignValue, fc.boolean())
  .chain(([n, loc, at, m, value, withTests]) =>
    (withTests ? pathTests(loc) : fc.constant(undefined)).map((pt) => ({
      ...mutation('Assign'),
      metadata: { name: n },
      spec: {
        applyTo: at,
        location: loc.text,
        ...(m ? { match: m } : {}),
        parameters: { assign: value, ...(pt ? { pathTests: pt } : {}) },
      },
    })),
  );

const assignMetadata = fc
  .tuple(
    name,
    fc.oneof(
      {
        weight: 6,
        arbitrary: fc
          .tuple(
            fc.constantFrom('labels', 'annotations', "'labels'"),
            fc.constantFrom('team', 'owner', '"x.io/y"', "'env'"),
          )
          .map(([a, b]) => `metadata.${a}.${b}`),
      },
      { weight: 1, arbitrary: fc.constantFrom('metadata.name', 'spec.x', 'metadata.labels', 'metadata.labels[a: b]') },
    ),
    fc.option(match, { freq: 2 }),
    fc.oneof(
      { weight: 5, arbitrary: fc.record({ value: fc.constantFrom('a', 'b', 'platform') }) },
      { weight: 1, arbitrary: fc.record({ value: scalar }) },
      { weight: 2, arbitrary: fc.record({ fromMetadata: fc.record({ field: fc.constantFrom('name', 'namespace') }) }) },
    ),
  )
  .map(([n, loc, m, value]) => ({
    ...mutation('AssignMetadata'),
    metadata: { name: n },
    spec: { location: loc, ...(m ? { match: m } : {}), parameters: { assign: value } },
  }));

const modifySet = fc
  .tuple(
    name,
    location,
    applyTo,
    fc.option(match, { freq: 2 }),
    fc.constantFrom('merge', 'prune'),
    fc.array(jsonValue, { maxLength: 3 }),
    fc.boolean(),
  )
  .chain(([n, loc, at, m, op, values, withTests]) =>
    (withTests ? pathTests(loc) : fc.constant(undefined)).map((pt) => ({
      ...mutation('ModifySet'),
      metadata: { name: n },
      spec: {
        applyTo: at,
        location: loc.text,
        ...(m ? { match: m } : {}),
        parameters: { operation: op, values: { fromList: values }, ...(pt ? { pathTests: pt } : {}) },
      },
    })),
  );

const assignImage = fc
  .tuple(
    name,
    fc.oneof(
      {
        weight: 3,
        arbitrary: fc.constantFrom(
          'spec.containers[name: *].image',
          'spec.containers[name: a].image',
          'spec.image',
          'spec.template.spec.containers[name:*].image',
        ),
      },
      { weight: 2, arbitrary: location.map((l) => l.text) },
    ),
    applyTo,
    fc.option(match, { freq: 3 }),
    fc.record(
      {
        assignDomain: fc.constantFrom('reg.io', 'localhost:5000', 'bad', 'a.b.c:80', ''),
        assignPath: fc.constantFrom('lib/app', 'app', 'Bad', 'reg.io/app', ''),
        assignTag: fc.constantFrom(':v2', '@sha256:0123456789abcdef0123456789abcdef', 'v2', ''),
      },
      { requiredKeys: [] },
    ),
  )
  .map(([n, loc, at, m, params]) => ({
    ...mutation('AssignImage'),
    metadata: { name: n },
    spec: { applyTo: at, location: loc, ...(m ? { match: m } : {}), parameters: params },
  }));

const mutator = fc.oneof(
  { weight: 4, arbitrary: assign },
  { weight: 2, arbitrary: assignMetadata },
  { weight: 2, arbitrary: modifySet },
  { weight: 2, arbitrary: assignImage },
);

const container = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.record(
      {
        name: fc.constantFrom('a', 'b', 'c', '*'),
        image: fc.constantFrom(
          'app:1',
          'reg.io/lib/app:1',
          'localhost/x@sha256:0123456789abcdef0123456789abcdef',
          'nginx',
          'a/b/c',
        ),
        args: fc.array(jsonValue, { maxLength: 2 }),
        ports: fc.array(
          fc.record(
            { containerPort: fc.constantFrom(8080, 80, '8080'), name: fc.constantFrom('a', 'http') },
            { requiredKeys: [] },
          ),
          { maxLength: 2 },
        ),
        id: fc.constantFrom(8080, 'a'),
      },
      { requiredKeys: [] },
    ),
  },
  { weight: 1, arbitrary: scalar },
);

const spec = fc.record(
  {
    containers: fc.oneof(
      { weight: 6, arbitrary: fc.array(container, { maxLength: 3 }) },
      { weight: 1, arbitrary: jsonValue },
    ),
    replicas: fc.integer({ min: 0, max: 5 }),
    image: fc.constantFrom('app:1', 'reg.io/x'),
    x: jsonValue,
    template: fc.record({ spec: fc.record({ containers: fc.array(container, { maxLength: 2 }) }) }),
  },
  { requiredKeys: [] },
);

const KINDS = [
  { apiVersion: 'v1', kind: 'Pod', namespaced: true },
  { apiVersion: 'apps/v1', kind: 'Deployment', namespaced: true },
  { apiVersion: 'v1', kind: 'Namespace', namespaced: false },
  { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', namespaced: false },
];

const object = fc
  .record({
    k: fc.constantFrom(...KINDS),
    naming: fc.constantFrom('name', 'name', 'generateName', 'both'),
    name: fc.constantFrom('web', 'web-1', 'api', 'job-x'),
    ns: fc.constantFrom(...NAMESPACES),
    labels: fc.option(
      fc.dictionary(fc.constantFrom('team', 'env', 'owner'), fc.constantFrom('a', 'b'), { maxKeys: 2 }),
      { freq: 2 },
    ),
    annotations: fc.option(
      fc.dictionary(fc.constantFrom('owner', 'x.io/y'), fc.constantFrom('a', 'b'), { maxKeys: 2 }),
      { freq: 3 },
    ),
    spec: fc.option(spec, { freq: 6 }),
  })
  .map(({ k, naming, name: n, ns, labels, annotations, spec: s }) => {
    const metadata: Obj = {};
    if (naming !== 'generateName') metadata.name = n;
    if (naming !== 'name') metadata.generateName = `${n}-`;
    if (k.namespaced) metadata.namespace = ns;
    if (labels) metadata.labels = labels;
    if (annotations) metadata.annotations = annotations;
    return { apiVersion: k.apiVersion, kind: k.kind, metadata, ...(s ? { spec: s } : {}) };
  });

export const diffCase: fc.Arbitrary<DiffCase> = fc
  .record({
    mutators: fc.uniqueArray(mutator, { minLength: 1, maxLength: 4, selector: (m) => `${m.kind}/${m.metadata.name}` }),
    object,
    operation: fc.constantFrom('CREATE', 'UPDATE'),
    namespaceLabels: fc.dictionary(fc.constantFrom('team', 'env'), fc.constantFrom('a', 'b'), { maxKeys: 2 }),
  })
  .map((c) => c as DiffCase);
