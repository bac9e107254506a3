// Gatekeeper mutation behaviour, as cases: each is a behaviour described in Gatekeeper's mutation docs
// (mutation.md, "Examples", "Path tests", "Match", "AssignMetadata") or exercised by its mutator unit
// tests (pkg/mutation/mutators/assign, assignmeta, match), restated in our words with our own objects.
// `expect` is the object after admission, or 'unchanged'; `error` is a fragment of the message a mutator
// that cannot be used gets.

type Obj = Record<string, unknown>;

export interface GatekeeperCase {
  name: string;
  source: string;
  mutators: Obj[];
  object: Obj;
  namespaceLabels?: Record<string, string>;
  expect?: Obj | 'unchanged';
  error?: string;
}

const pod = (spec: Obj = {}, meta: Obj = {}): Obj => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'p', namespace: 'apps', ...meta },
  spec: { containers: [{ name: 'app', image: 'app:1' }], ...spec },
});

const assign = (name: string, spec: Obj, version = 'v1'): Obj => ({
  apiVersion: `mutations.gatekeeper.sh/${version}`,
  kind: 'Assign',
  metadata: { name },
  spec: { applyTo: [{ groups: [''], versions: ['v1'], kinds: ['Pod'] }], ...spec },
});

const assignMeta = (name: string, spec: Obj, version = 'v1'): Obj => ({
  apiVersion: `mutations.gatekeeper.sh/${version}`,
  kind: 'AssignMetadata',
  metadata: { name },
  spec,
});

const value = (v: unknown): Obj => ({ assign: { value: v } });

export const GATEKEEPER_CASES: GatekeeperCase[] = [
  {
    name: 'AssignMetadata adds a label that is absent',
    source: 'docs: AssignMetadata example (owner label)',
    mutators: [assignMeta('owner', { location: 'metadata.labels.owner', parameters: value('admin') })],
    object: pod(),
    expect: pod({}, { labels: { owner: 'admin' } }),
  },
  {
    name: 'AssignMetadata never changes a label already set',
    source: 'docs: "AssignMetadata can add metadata but not modify it"',
    mutators: [assignMeta('owner', { location: 'metadata.labels.owner', parameters: value('admin') })],
    object: pod({}, { labels: { owner: 'alice' } }),
    expect: 'unchanged',
  },
  {
    name: 'AssignMetadata adds an annotation, creating the map',
    source: 'unit: assignmeta, annotations',
    mutators: [assignMeta('a', { location: 'metadata.annotations.audited', parameters: value('yes') })],
    object: pod(),
    expect: pod({}, { annotations: { audited: 'yes' } }),
  },
  {
    name: 'AssignMetadata takes a quoted key with dots and slashes',
    source: 'docs: location syntax, quoted keys',
    mutators: [
      assignMeta('a', { location: 'metadata.labels."app.kubernetes.io/managed-by"', parameters: value('platform') }),
    ],
    object: pod(),
    expect: pod({}, { labels: { 'app.kubernetes.io/managed-by': 'platform' } }),
  },
  {
    name: 'AssignMetadata fromMetadata copies the namespace',
    source: 'docs: fromMetadata',
    mutators: [
      assignMeta('ns', {
        location: 'metadata.labels.ns',
        parameters: { assign: { fromMetadata: { field: 'namespace' } } },
      }),
    ],
    object: pod(),
    expect: pod({}, { labels: { ns: 'apps' } }),
  },
  {
    name: 'AssignMetadata may only set labels or annotations',
    source:
      'docs: AssignMetadata location must be metadata.labels or metadata.annotations; assignmeta_mutator.go isValidMetadataPath',
    mutators: [assignMeta('bad', { location: 'metadata.name', parameters: value('x') })],
    object: pod(),
    error: 'invalid location for assignmetadata',
  },
  {
    name: 'AssignMetadata value must be a string',
    source: 'unit: assignmeta, non-string value refused',
    mutators: [assignMeta('bad', { location: 'metadata.labels.n', parameters: value(3) })],
    object: pod(),
    error: 'must be a string for AssignMetadata',
  },
  {
    name: 'Assign sets imagePullPolicy on every container with a glob',
    source: 'docs: Assign example (imagePullPolicy Always)',
    mutators: [assign('pull', { location: 'spec.containers[name:*].imagePullPolicy', parameters: value('Always') })],
    object: pod({
      containers: [
        { name: 'a', image: 'a' },
        { name: 'b', image: 'b', imagePullPolicy: 'Never' },
      ],
    }),
    expect: pod({
      containers: [
        { name: 'a', image: 'a', imagePullPolicy: 'Always' },
        { name: 'b', image: 'b', imagePullPolicy: 'Always' },
      ],
    }),
  },
  {
    name: 'Assign under a glob creates nothing when the list is absent',
    source: 'unit: assign, glob over missing list',
    mutators: [
      assign('pull', { location: 'spec.initContainers[name:*].imagePullPolicy', parameters: value('Always') }),
    ],
    object: pod(),
    expect: 'unchanged',
  },
  {
    name: 'Assign adds a sidecar by its key',
    source: 'docs: Assign example (adding a sidecar)',
    mutators: [
      assign('sidecar', {
        location: 'spec.containers[name:networking]',
        parameters: value({ name: 'networking', image: 'proxy:1', args: ['--description', 'A sidecar'] }),
      }),
    ],
    object: pod(),
    expect: pod({
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 'networking', image: 'proxy:1', args: ['--description', 'A sidecar'] },
      ],
    }),
  },
  {
    name: 'Assign of a keyed item whose value lacks the key is refused',
    source: 'unit: assign, list item value must keep its key; assign_mutator.go validateObjectAssignedToList',
    mutators: [assign('bad', { location: 'spec.containers[name:networking]', parameters: value({ image: 'x' }) })],
    object: pod(),
    error: 'adding object to list with different key',
  },
  {
    name: 'Assign sets a scalar field (dnsPolicy)',
    source: 'docs: Assign example (dnsPolicy)',
    mutators: [assign('dns', { location: 'spec.dnsPolicy', parameters: value('None') })],
    object: pod(),
    expect: pod({ dnsPolicy: 'None' }),
  },
  {
    name: 'Assign creates missing parents and a missing keyed item',
    source: 'unit: assign, create path',
    mutators: [
      assign('sc', { location: 'spec.containers[name:extra].securityContext.privileged', parameters: value(false) }),
    ],
    object: pod(),
    expect: pod({
      containers: [
        { name: 'app', image: 'app:1' },
        { name: 'extra', securityContext: { privileged: false } },
      ],
    }),
  },
  {
    name: 'pathTests: MustExist on the container stops creating it',
    source: 'docs: Path tests example (container must exist)',
    mutators: [
      assign('nonroot', {
        location: 'spec.containers[name:foo].securityContext.runAsNonRoot',
        parameters: {
          ...value(true),
          pathTests: [
            { subPath: 'spec.containers[name:foo]', condition: 'MustExist' },
            { subPath: 'spec.containers[name:foo].securityContext.runAsNonRoot', condition: 'MustNotExist' },
          ],
        },
      }),
    ],
    object: pod(),
    expect: 'unchanged',
  },
  {
    name: 'pathTests: with the container present and the field absent, it is set',
    source: 'docs: Path tests example',
    mutators: [
      assign('nonroot', {
        location: 'spec.containers[name:foo].securityContext.runAsNonRoot',
        parameters: {
          ...value(true),
          pathTests: [
            { subPath: 'spec.containers[name:foo]', condition: 'MustExist' },
            { subPath: 'spec.containers[name:foo].securityContext.runAsNonRoot', condition: 'MustNotExist' },
          ],
        },
      }),
    ],
    object: pod({ containers: [{ name: 'foo', image: 'f' }] }),
    expect: pod({ containers: [{ name: 'foo', image: 'f', securityContext: { runAsNonRoot: true } }] }),
  },
  {
    name: 'pathTests: MustNotExist keeps a value already set',
    source: 'docs: Path tests example',
    mutators: [
      assign('nonroot', {
        location: 'spec.containers[name:foo].securityContext.runAsNonRoot',
        parameters: {
          ...value(true),
          pathTests: [{ subPath: 'spec.containers[name:foo].securityContext.runAsNonRoot', condition: 'MustNotExist' }],
        },
      }),
    ],
    object: pod({ containers: [{ name: 'foo', image: 'f', securityContext: { runAsNonRoot: false } }] }),
    expect: 'unchanged',
  },
  {
    name: 'pathTests under a glob are judged per item',
    source: 'unit: assign, path tests with globs',
    mutators: [
      assign('pull', {
        location: 'spec.containers[name:*].imagePullPolicy',
        parameters: {
          ...value('Always'),
          pathTests: [{ subPath: 'spec.containers[name:*].imagePullPolicy', condition: 'MustNotExist' }],
        },
      }),
    ],
    object: pod({
      containers: [
        { name: 'a', image: 'a' },
        { name: 'b', image: 'b', imagePullPolicy: 'Never' },
      ],
    }),
    expect: pod({
      containers: [
        { name: 'a', image: 'a', imagePullPolicy: 'Always' },
        { name: 'b', image: 'b', imagePullPolicy: 'Never' },
      ],
    }),
  },
  {
    name: 'a pathTest subPath must be a prefix of the location',
    source: 'docs: subPath must be a prefix of location',
    mutators: [
      assign('bad', {
        location: 'spec.dnsPolicy',
        parameters: { ...value('None'), pathTests: [{ subPath: 'spec.hostNetwork', condition: 'MustExist' }] },
      }),
    ],
    object: pod(),
    error: 'is not a prefix of the location',
  },
  {
    name: 'applyTo: another kind is not mutated',
    source: 'docs: applyTo',
    mutators: [
      {
        ...assign('dns', { location: 'spec.dnsPolicy', parameters: value('None') }),
        spec: {
          applyTo: [{ groups: ['apps'], versions: ['v1'], kinds: ['Deployment'] }],
          location: 'spec.dnsPolicy',
          parameters: value('None'),
        },
      },
    ],
    object: pod(),
    expect: 'unchanged',
  },
  {
    name: 'Assign requires applyTo',
    source: 'docs: applyTo is required for Assign',
    mutators: [
      {
        apiVersion: 'mutations.gatekeeper.sh/v1',
        kind: 'Assign',
        metadata: { name: 'x' },
        spec: { location: 'spec.a', parameters: value(1) },
      },
    ],
    object: pod(),
    error: 'applyTo required for Assign mutator x',
  },
  {
    name: 'Assign may not change metadata',
    source: 'docs: Assign cannot modify metadata; assign_mutator.go hasMetadataRoot',
    mutators: [assign('bad', { location: 'metadata.name', parameters: value('x') })],
    object: pod(),
    error: "can't change metadata",
  },
  {
    name: 'match.namespaces with a prefix glob',
    source: 'docs: match namespaces, prefix wildcards',
    mutators: [
      assignMeta('m', { match: { namespaces: ['ap*'] }, location: 'metadata.labels.x', parameters: value('y') }),
    ],
    object: pod(),
    expect: pod({}, { labels: { x: 'y' } }),
  },
  {
    name: 'match.excludedNamespaces keeps a namespace out',
    source: 'docs: match excludedNamespaces',
    mutators: [
      assignMeta('m', {
        match: { excludedNamespaces: ['kube-*', 'apps'] },
        location: 'metadata.labels.x',
        parameters: value('y'),
      }),
    ],
    object: pod(),
    expect: 'unchanged',
  },
  {
    name: 'match.scope Cluster skips namespaced objects',
    source: 'docs: match scope',
    mutators: [assignMeta('m', { match: { scope: 'Cluster' }, location: 'metadata.labels.x', parameters: value('y') })],
    object: pod(),
    expect: 'unchanged',
  },
  {
    name: 'match.kinds by group and kind',
    source: 'docs: match kinds',
    mutators: [
      assignMeta('m', {
        match: { kinds: [{ apiGroups: ['apps'], kinds: ['Deployment'] }] },
        location: 'metadata.labels.x',
        parameters: value('y'),
      }),
    ],
    object: pod(),
    expect: 'unchanged',
  },
  {
    name: 'match.kinds with * matches every kind',
    source: 'docs: match kinds wildcard',
    mutators: [
      assignMeta('m', {
        match: { kinds: [{ apiGroups: ['*'], kinds: ['*'] }] },
        location: 'metadata.labels.x',
        parameters: value('y'),
      }),
    ],
    object: pod(),
    expect: pod({}, { labels: { x: 'y' } }),
  },
  {
    name: 'match.labelSelector on the object',
    source: 'docs: match labelSelector',
    mutators: [
      assignMeta('m', {
        match: { labelSelector: { matchLabels: { tier: 'web' } } },
        location: 'metadata.labels.x',
        parameters: value('y'),
      }),
    ],
    object: pod({}, { labels: { tier: 'db' } }),
    expect: 'unchanged',
  },
  {
    name: 'match.namespaceSelector reads the namespace labels',
    source: 'docs: match namespaceSelector',
    mutators: [
      assignMeta('m', {
        match: { namespaceSelector: { matchExpressions: [{ key: 'env', operator: 'In', values: ['prod'] }] } },
        location: 'metadata.labels.x',
        parameters: value('y'),
      }),
    ],
    object: pod(),
    namespaceLabels: { env: 'prod' },
    expect: pod({}, { labels: { x: 'y' } }),
  },
  {
    name: 'match.name with a glob',
    source: 'docs: match name',
    mutators: [assignMeta('m', { match: { name: 'q*' }, location: 'metadata.labels.x', parameters: value('y') })],
    object: pod(),
    expect: 'unchanged',
  },
  {
    name: 'assignIf is not honoured: it left Gatekeeper in v3.7 and its CRDs prune it',
    source: 'unversioned.Parameters has no assignIf (v3.23); a cluster sets the value',
    mutators: [
      assign('dns', {
        location: 'spec.dnsPolicy',
        parameters: { ...value('Default'), assignIf: { in: ['ClusterFirst'] } },
      }),
    ],
    object: pod({ dnsPolicy: 'None' }),
    expect: pod({ dnsPolicy: 'Default' }),
  },
  {
    name: 'mutators apply in name order; the later one has the last word',
    source: 'docs: mutation order (sorted by id)',
    mutators: [
      assign('b-second', { location: 'spec.dnsPolicy', parameters: value('None') }),
      assign('a-first', { location: 'spec.dnsPolicy', parameters: value('Default') }),
    ],
    object: pod(),
    expect: pod({ dnsPolicy: 'None' }),
  },
  {
    name: 'v1beta1 and v1alpha1 mutators are read the same',
    source: 'docs: served versions',
    mutators: [
      assignMeta('old', { location: 'metadata.labels.a', parameters: value('1') }, 'v1alpha1'),
      assign('beta', { location: 'spec.dnsPolicy', parameters: value('None') }, 'v1beta1'),
    ],
    object: pod(),
    expect: pod({ dnsPolicy: 'None' }, { labels: { a: '1' } }),
  },
  {
    name: 'externalData is refused with a message',
    source: 'docs: external data (not supported by Flotilla)',
    mutators: [
      assign('ext', { location: 'spec.dnsPolicy', parameters: { assign: { externalData: { provider: 'p' } } } }),
    ],
    object: pod(),
    error: 'externalData',
  },
];
