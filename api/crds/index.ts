// The CustomResourceDefinitions of policy.flotilla.io, cluster.flotilla.io and work.flotilla.io, as data.
// The chart's crds/ (deploy/helm/flotilla/crds/*.yaml) is rendered from here by hack/update-crds and checked
// by hack/verify-crds; deploy/crds is rendered from the chart by hack/update-deploy.
//
// One source for the constraints: the structural schemas are generated from the schemas api/validation
// checks objects against (types, enums, required fields, minItems, lengths, minimums), so what the
// apiserver rejects by itself and what `flotilla validate` rejects offline cannot drift apart. This file
// adds what only a CRD has: Karmada's server-side defaults, list/map types, descriptions, versions,
// printer columns and the conversion webhook.

import { CLUSTER_SPEC, OVERRIDE_SPEC, PROPAGATION_SPEC, type Schema } from '../validation/schema.js';

export const POLICY_GROUP = 'policy.flotilla.io';
export const CLUSTER_GROUP = 'cluster.flotilla.io';
export const WORK_GROUP = 'work.flotilla.io';
/** The ResourceBinding kind the controller writes: one per template. */
export const BINDING = {
  group: WORK_GROUP,
  version: 'v1alpha1',
  apiVersion: `${WORK_GROUP}/v1alpha1`,
  kind: 'ResourceBinding',
  plural: 'resourcebindings',
} as const;

/** The Work kind: a pull cluster's share of a binding, in the cluster's namespace on the hub. */
export const WORK = {
  group: WORK_GROUP,
  version: 'v1alpha1',
  apiVersion: `${WORK_GROUP}/v1alpha1`,
  kind: 'Work',
  plural: 'works',
} as const;

/** Where the apiserver sends ConversionReviews; `flotilla certs patch` fills in the CA bundle. */
export const CONVERSION_SERVICE = {
  namespace: 'flotilla-system',
  name: 'flotilla-webhook',
  path: '/convert',
  port: 443,
} as const;

/**
 * The cert-manager Certificate the Helm chart creates for the webhook when `certificates.mode` is
 * cert-manager. The convertible CRDs name it in `cert-manager.io/inject-ca-from`, so cert-manager's CA
 * injector fills in their conversion caBundle. The chart's crds/ are not templated, so the annotation is
 * there whatever the mode: without cert-manager (or without that Certificate) nothing reads it, and
 * `flotilla certs patch` sets the caBundle instead.
 */
export const WEBHOOK_CERTIFICATE = { namespace: CONVERSION_SERVICE.namespace, name: 'flotilla-webhook' } as const;
export const INJECT_CA_FROM_ANNOTATION = 'cert-manager.io/inject-ca-from';

/** Fields v1alpha1 has and v1beta1 folds away (api/policy/v1beta1). */
const V1ALPHA1_ONLY: Readonly<Record<'propagation' | 'override', readonly string[]>> = {
  propagation: ['association'],
  override: ['targetCluster', 'overriders'],
};

/** OpenAPI v3 as CRDs take it (apiextensions.k8s.io/v1 JSONSchemaProps), the subset we emit. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'boolean';
  description?: string;
  format?: string;
  enum?: string[];
  default?: unknown;
  minimum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  items?: JSONSchemaProps;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps;
  required?: string[];
  'x-kubernetes-preserve-unknown-fields'?: true;
  'x-kubernetes-list-type'?: 'atomic' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic';
  nullable?: true;
}

/** What a CRD adds at one field path (dotted, `[]` for list items, relative to `spec`). */
interface FieldExtras {
  default?: unknown;
  description?: string;
  listType?: 'atomic';
  mapType?: 'atomic';
}

type Extras = Readonly<Record<string, FieldExtras>>;

/** Label selectors are replaced whole (metav1.LabelSelector's markers); so are requirement values. */
function selectorExtras(
  prefix: string,
  opts: { fieldSelector: boolean } = { fieldSelector: true },
): Record<string, FieldExtras> {
  return {
    [`${prefix}.labelSelector`]: { mapType: 'atomic' },
    [`${prefix}.labelSelector.matchExpressions`]: { listType: 'atomic' },
    [`${prefix}.labelSelector.matchExpressions[].values`]: { listType: 'atomic' },
    ...(opts.fieldSelector
      ? { [`${prefix}.fieldSelector.matchExpressions[].values`]: { listType: 'atomic' as const } }
      : {}),
  };
}

const PROPAGATION_EXTRAS: Extras = {
  resourceSelectors: {
    description:
      'The resource templates this policy propagates; at least one. A selector with a name ignores its labelSelector.',
  },
  association: { description: 'Deprecated: use propagateDeps. Not read.' },
  propagateDeps: {
    description: 'Propagate the ConfigMaps, Secrets, PVCs and ServiceAccounts the selected workloads reference.',
  },
  placement: { description: 'Which member clusters receive the resources and how replicas are divided among them.' },
  priority: { default: 0, description: 'Explicit priority; when several policies match a template the highest wins.' },
  preemption: {
    default: 'Never',
    description: 'Always: this policy may take over templates claimed by lower-priority policies.',
  },
  schedulerName: { default: 'default-scheduler', description: 'Scheduler for the derived bindings. Immutable.' },
  conflictResolution: {
    default: 'Abort',
    description: 'What to do with an object that already exists on a member and was not created by Flotilla.',
  },
  'placement.replicaScheduling.replicaSchedulingType': { default: 'Divided' },
  'failover.application.decisionConditions.tolerationSeconds': { default: 300 },
  'failover.application.purgeMode': { default: 'Gracefully' },
  'failover.cluster.purgeMode': { default: 'Gracefully' },
  ...selectorExtras('resourceSelectors[]', { fieldSelector: false }),
  ...selectorExtras('placement.clusterAffinity'),
  ...selectorExtras('placement.clusterAffinities[]'),
  ...selectorExtras('placement.clusterAffinities[].overflowAffinities[]'),
  ...selectorExtras('placement.replicaScheduling.weightPreference.staticWeightList[].targetCluster'),
};

const OVERRIDE_EXTRAS: Extras = {
  resourceSelectors: {
    description: 'The resources this policy overrides; empty: every resource (in its namespace for an OverridePolicy).',
  },
  overrideRules: {
    description: 'Rules applied in order, each to the clusters its targetCluster selects (all when absent).',
  },
  targetCluster: {
    description: 'Deprecated: use overrideRules[].targetCluster. Read only when overrideRules is empty.',
  },
  overriders: { description: 'Deprecated: use overrideRules[].overriders. Read only when overrideRules is empty.' },
  'overrideRules[].overriders.plaintext[].value': { description: 'Any JSON; required for add and replace.' },
  'overriders.plaintext[].value': { description: 'Any JSON; required for add and replace.' },
  ...selectorExtras('resourceSelectors[]', { fieldSelector: false }),
  ...selectorExtras('overrideRules[].targetCluster'),
  ...selectorExtras('targetCluster'),
};

const CLUSTER_EXTRAS: Extras = {
  apiEndpoint: { description: "The member cluster's kube-apiserver." },
  secretRef: { description: 'Secret holding the credentials Flotilla uses to reach the member.' },
  zone: { description: 'Deprecated: use zones. Never used for matching.' },
};

/** Renders a validation Schema as a structural OpenAPI schema, adding the CRD-only extras by path. */
export function toOpenAPI(schema: Schema, extras: Extras = {}, path = ''): JSONSchemaProps {
  const out: JSONSchemaProps = {};
  const extra = extras[path];
  if (extra?.description) out.description = extra.description;
  switch (schema.type) {
    case 'any':
      out['x-kubernetes-preserve-unknown-fields'] = true;
      break;
    case 'string':
      out.type = 'string';
      if (schema.enum) out.enum = [...schema.enum];
      if (schema.minLength !== undefined) out.minLength = schema.minLength;
      if (schema.maxLength !== undefined) out.maxLength = schema.maxLength;
      break;
    case 'integer':
      out.type = 'integer';
      if (schema.format) out.format = schema.format;
      if (schema.minimum !== undefined) out.minimum = schema.minimum;
      break;
    case 'boolean':
      out.type = 'boolean';
      break;
    case 'array':
      out.type = 'array';
      out.items = toOpenAPI(schema.items, extras, `${path}[]`);
      if (schema.minItems !== undefined) out.minItems = schema.minItems;
      break;
    case 'map':
      out.type = 'object';
      out.additionalProperties = toOpenAPI(schema.values, extras, `${path}{}`);
      break;
    case 'object': {
      out.type = 'object';
      const names = Object.keys(schema.properties).sort();
      out.properties = Object.fromEntries(
        names.map((n) => [n, toOpenAPI(schema.properties[n] as Schema, extras, path ? `${path}.${n}` : n)]),
      );
      if (schema.required && schema.required.length > 0) out.required = [...schema.required].sort();
      break;
    }
  }
  if (extra?.default !== undefined) out.default = extra.default;
  if (extra?.listType) out['x-kubernetes-list-type'] = extra.listType;
  if (extra?.mapType) out['x-kubernetes-map-type'] = extra.mapType;
  return out;
}

/** Every path toOpenAPI visits in a schema, in the notation of the extras tables. */
function pathsOf(schema: Schema, path = '', out = new Set<string>()): Set<string> {
  out.add(path);
  if (schema.type === 'array') pathsOf(schema.items, `${path}[]`, out);
  if (schema.type === 'map') pathsOf(schema.values, `${path}{}`, out);
  if (schema.type === 'object')
    for (const [n, s] of Object.entries(schema.properties)) pathsOf(s, path ? `${path}.${n}` : n, out);
  return out;
}

/** Extras naming a path their schema does not have (a typo would silently drop a default). */
export function unusedExtras(): string[] {
  const unused: string[] = [];
  for (const [schema, extras] of [
    [PROPAGATION_SPEC, PROPAGATION_EXTRAS],
    [OVERRIDE_SPEC, OVERRIDE_EXTRAS],
    [CLUSTER_SPEC, CLUSTER_EXTRAS],
  ] as const) {
    const paths = pathsOf(schema);
    unused.push(...Object.keys(extras).filter((k) => !paths.has(k)));
  }
  return unused;
}

function without(schema: Schema, fields: readonly string[]): Schema {
  if (schema.type !== 'object') return schema;
  return {
    ...schema,
    properties: Object.fromEntries(Object.entries(schema.properties).filter(([k]) => !fields.includes(k))),
  };
}

function topLevel(
  spec: JSONSchemaProps | undefined,
  opts: { specRequired: boolean; status?: boolean | JSONSchemaProps },
): JSONSchemaProps {
  const properties: Record<string, JSONSchemaProps> = {
    apiVersion: { type: 'string', description: 'Versioned schema of this representation of the object.' },
    kind: { type: 'string', description: 'REST resource this object represents.' },
    metadata: { type: 'object' },
  };
  if (spec) properties.spec = spec;
  if (opts.status === true) properties.status = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
  else if (opts.status) properties.status = opts.status;
  return { type: 'object', properties, ...(opts.specRequired ? { required: ['spec'] } : {}) };
}

export interface PrinterColumn {
  name: string;
  type: 'string' | 'integer' | 'date';
  jsonPath: string;
  priority?: number;
  description?: string;
}

const AGE: PrinterColumn = { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' };

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: {
      kind: string;
      listKind: string;
      plural: string;
      singular: string;
      shortNames?: string[];
      categories: string[];
    };
    scope: 'Namespaced' | 'Cluster';
    versions: Array<{
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      additionalPrinterColumns: PrinterColumn[];
      subresources?: { status: Record<string, never> };
    }>;
    conversion?: {
      strategy: 'Webhook';
      webhook: {
        conversionReviewVersions: string[];
        clientConfig: { service: { namespace: string; name: string; path: string; port: number } };
      };
    };
  };
}

const LABELS = { 'app.kubernetes.io/part-of': 'flotilla' };

export interface PolicyKind {
  kind: string;
  plural: string;
  /** Flotilla's short name (`kubectl get fpp`): the plain one is Karmada's, below. */
  shortName: string;
  /** Karmada's short name, carried by the policy.karmada.io CRD only. */
  karmadaShortName: string;
  scope: 'Namespaced' | 'Cluster';
  family: 'propagation' | 'override';
}

export const POLICY_KINDS: readonly PolicyKind[] = [
  {
    kind: 'PropagationPolicy',
    plural: 'propagationpolicies',
    shortName: 'fpp',
    karmadaShortName: 'pp',
    scope: 'Namespaced',
    family: 'propagation',
  },
  {
    kind: 'ClusterPropagationPolicy',
    plural: 'clusterpropagationpolicies',
    shortName: 'fcpp',
    karmadaShortName: 'cpp',
    scope: 'Cluster',
    family: 'propagation',
  },
  {
    kind: 'OverridePolicy',
    plural: 'overridepolicies',
    shortName: 'fop',
    karmadaShortName: 'op',
    scope: 'Namespaced',
    family: 'override',
  },
  {
    kind: 'ClusterOverridePolicy',
    plural: 'clusteroverridepolicies',
    shortName: 'fcop',
    karmadaShortName: 'cop',
    scope: 'Cluster',
    family: 'override',
  },
];

function policyCRD(k: PolicyKind): CustomResourceDefinition {
  const spec = k.family === 'propagation' ? PROPAGATION_SPEC : OVERRIDE_SPEC;
  const extras = k.family === 'propagation' ? PROPAGATION_EXTRAS : OVERRIDE_EXTRAS;
  const statusColumns: PrinterColumn[] = [
    { name: 'Templates', type: 'integer', jsonPath: '.status.templates' },
    { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  ];
  const columns: PrinterColumn[] =
    k.family === 'propagation'
      ? [
          { name: 'Conflict-Resolution', type: 'string', jsonPath: '.spec.conflictResolution' },
          { name: 'Priority', type: 'integer', jsonPath: '.spec.priority' },
          ...statusColumns,
          AGE,
        ]
      : [...statusColumns, AGE];
  // The status is the same in both versions (conversion copies it): the controller writes it, users read it.
  const version = (name: 'v1alpha1' | 'v1beta1') => ({
    name,
    served: true,
    storage: name === 'v1beta1',
    schema: {
      openAPIV3Schema: topLevel(toOpenAPI(name === 'v1beta1' ? without(spec, V1ALPHA1_ONLY[k.family]) : spec, extras), {
        specRequired: true,
        status: policyStatus(k.family),
      }),
    },
    additionalPrinterColumns: columns,
    subresources: { status: {} as Record<string, never> },
  });
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: {
      name: `${k.plural}.${POLICY_GROUP}`,
      labels: LABELS,
      annotations: { [INJECT_CA_FROM_ANNOTATION]: `${WEBHOOK_CERTIFICATE.namespace}/${WEBHOOK_CERTIFICATE.name}` },
    },
    spec: {
      group: POLICY_GROUP,
      names: {
        kind: k.kind,
        listKind: `${k.kind}List`,
        plural: k.plural,
        singular: k.kind.toLowerCase(),
        shortNames: [k.shortName],
        categories: ['flotilla'],
      },
      scope: k.scope,
      versions: [version('v1alpha1'), version('v1beta1')],
      conversion: {
        strategy: 'Webhook',
        webhook: { conversionReviewVersions: ['v1', 'v1beta1'], clientConfig: { service: { ...CONVERSION_SERVICE } } },
      },
    },
  };
}

/**
 * Karmada's columns for a Cluster (its aggregated apiserver's table: VERSION, MODE, READY, AGE; -o wide adds
 * ZONES, REGION, PROVIDER, API-ENDPOINT, PROXY-URL, and here MESSAGE), in both groups. READY is the Ready condition the
 * controller writes from the member's /readyz probe; empty until it has written one.
 */
export const CLUSTER_COLUMNS: readonly PrinterColumn[] = [
  { name: 'Version', type: 'string', jsonPath: '.status.kubernetesVersion' },
  { name: 'Mode', type: 'string', jsonPath: '.spec.syncMode' },
  { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].status' },
  AGE,
  { name: 'Zones', type: 'string', jsonPath: '.spec.zones', priority: 1 },
  { name: 'Region', type: 'string', jsonPath: '.spec.region', priority: 1 },
  { name: 'Provider', type: 'string', jsonPath: '.spec.provider', priority: 1 },
  { name: 'API-Endpoint', type: 'string', jsonPath: '.spec.apiEndpoint', priority: 1 },
  { name: 'Proxy-URL', type: 'string', jsonPath: '.spec.proxyURL', priority: 1 },
  // Flotilla's addition, last: the Ready condition's sentence (why a cluster is not ready).
  { name: 'Message', type: 'string', jsonPath: '.status.conditions[?(@.type=="Ready")].message', priority: 1 },
];

function clusterCRD(): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `clusters.${CLUSTER_GROUP}`, labels: LABELS },
    spec: {
      group: CLUSTER_GROUP,
      names: {
        kind: 'Cluster',
        listKind: 'ClusterList',
        plural: 'clusters',
        singular: 'cluster',
        categories: ['flotilla'],
      },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: topLevel(toOpenAPI(CLUSTER_SPEC, CLUSTER_EXTRAS), { specRequired: false, status: true }),
          },
          additionalPrinterColumns: [...CLUSTER_COLUMNS],
          subresources: { status: {} },
        },
      ],
    },
  };
}

const str = (description?: string): JSONSchemaProps =>
  description ? { type: 'string', description } : { type: 'string' };
const int = (description?: string): JSONSchemaProps =>
  description ? { type: 'integer', format: 'int64', description } : { type: 'integer', format: 'int64' };

/** metav1.Condition, as the controller writes it. */
const CONDITIONS: JSONSchemaProps = {
  type: 'array',
  'x-kubernetes-list-type': 'atomic',
  items: {
    type: 'object',
    required: ['status', 'type'],
    properties: {
      type: str(),
      status: { type: 'string', enum: ['True', 'False', 'Unknown'] },
      reason: str(),
      message: str(),
      observedGeneration: int(),
      lastTransitionTime: { type: 'string', format: 'date-time' },
    },
  },
};

/** What the controller says of a policy: the templates it claims (or overrides) and the render errors it causes. */
function policyStatus(family: 'propagation' | 'override'): JSONSchemaProps {
  const claimed = family === 'propagation' ? 'claims' : 'overrides on at least one cluster';
  return {
    type: 'object',
    description: 'Written by the controller.',
    properties: {
      observedGeneration: int('The policy generation this status is about.'),
      templates: int(`How many templates the policy ${claimed}.`),
      failedTemplates: int(
        family === 'propagation'
          ? 'How many of them have a render error, whatever its cause (the first are named in the Ready condition).'
          : "How many of them have a render error in this policy's rules (the first are named in the Ready condition).",
      ),
      conditions: CONDITIONS,
    },
  };
}

const POLICY_REF: JSONSchemaProps = {
  type: 'object',
  required: ['kind', 'name'],
  properties: { kind: str(), namespace: str(), name: str() },
};

/** work.flotilla.io ResourceBinding: one per template, written by the controller only. */
function bindingCRD(): CustomResourceDefinition {
  const spec = bindingSpec();
  const status: JSONSchemaProps = {
    type: 'object',
    description: 'Delivery to each cluster, read back from the members.',
    properties: {
      observedGeneration: int('The template generation this status is about.'),
      applied: str(
        'Target clusters that hold the copy (state Applied) / target clusters, e.g. 2/3: the APPLIED column.',
      ),
      ready: str('Ready clusters (Applied and healthy) / target clusters, e.g. 3/3: the READY column.'),
      errors: { type: 'array', items: str(), description: 'Render errors about the template as a whole (placement).' },
      notChosen: {
        type: 'array',
        description: 'Known clusters the template does not go to, and why (the first 50).',
        'x-kubernetes-list-type': 'atomic',
        items: { type: 'object', required: ['name'], properties: { name: str(), reason: str() } },
      },
      conditions: CONDITIONS,
      clusters: {
        type: 'array',
        description:
          "One entry per cluster, keyed by name: the controller writes its members' entries and those its pull agents report; sharded, each replica its own members' (server-side apply, each under its own field manager).",
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
        items: { type: 'object', required: ['name', 'state'], properties: { name: str(), ...clusterEntry() } },
      },
    },
  };
  return workGroupCRD(BINDING, { singular: 'resourcebinding', shortNames: ['rb'] }, spec, status, [
    { name: 'Kind', type: 'string', jsonPath: '.spec.resource.kind' },
    { name: 'Policy', type: 'string', jsonPath: '.spec.policy.name' },
    // Counts written by the controller: a jsonPath list such as .spec.clusters[*].name shows its first item only.
    { name: 'Applied', type: 'string', jsonPath: '.status.applied' },
    { name: 'Ready', type: 'string', jsonPath: '.status.ready' },
    { name: 'Message', type: 'string', jsonPath: '.status.conditions[?(@.type=="Applied")].message', priority: 1 },
  ]);
}

/**
 * work.flotilla.io Work: a pull cluster's share of one ResourceBinding, in the cluster's own namespace on
 * the hub (its execution space). The controller writes the spec, the cluster's agent the status: an agent
 * reads and writes only its namespace, so what one agent does never reaches another.
 */
function workCRD(): CustomResourceDefinition {
  const spec: JSONSchemaProps = {
    ...bindingSpec(),
    description:
      "The template's ResourceBinding spec as far as it concerns this cluster: the cluster (with its replicas) when placed there, its graceful eviction task, the claim.",
  };
  const status: JSONSchemaProps = {
    type: 'object',
    description: "Written by the cluster's agent: delivery of the template to the cluster. Empty: it holds no copy.",
    // An agent clears its status with an apply that owns none of its fields, which leaves `status: null`.
    nullable: true,
    properties: clusterEntry(),
  };
  // A status subresource: the agent may write status and nothing else.
  return workGroupCRD(WORK, { singular: 'work' }, spec, status, [
    { name: 'Kind', type: 'string', jsonPath: '.spec.resource.kind' },
    { name: 'Template-Namespace', type: 'string', jsonPath: '.spec.resource.namespace' },
    { name: 'Template', type: 'string', jsonPath: '.spec.resource.name' },
    { name: 'State', type: 'string', jsonPath: '.status.state' },
    { name: 'Health', type: 'string', jsonPath: '.status.health.state' },
    { name: 'Message', type: 'string', jsonPath: '.status.message', priority: 1 },
  ]);
}

/** A namespaced work.flotilla.io kind: one version, v1alpha1, with a status subresource. */
function workGroupCRD(
  kind: { kind: string; plural: string },
  names: { singular: string; shortNames?: string[] },
  spec: JSONSchemaProps,
  status: JSONSchemaProps,
  columns: PrinterColumn[],
): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${kind.plural}.${WORK_GROUP}`, labels: LABELS },
    spec: {
      group: WORK_GROUP,
      names: {
        kind: kind.kind,
        listKind: `${kind.kind}List`,
        plural: kind.plural,
        ...names,
        categories: ['flotilla'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1alpha1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: topLevel(spec, { specRequired: false, status }) },
          subresources: { status: {} },
          additionalPrinterColumns: [...columns, AGE],
        },
      ],
    },
  };
}

/** A ResourceBinding's spec (a Work's is the same, cut down to its cluster). */
function bindingSpec(): JSONSchemaProps {
  return {
    type: 'object',
    description: 'What the controller decided for the template.',
    properties: {
      resource: {
        type: 'object',
        description: 'The resource template.',
        required: ['apiVersion', 'kind', 'name'],
        properties: { apiVersion: str(), kind: str(), namespace: str(), name: str(), uid: str() },
      },
      policy: {
        ...POLICY_REF,
        description:
          'The propagation policy that claims the template; absent when none does (what was propagated stays).',
      },
      requiredBy: {
        type: 'array',
        description:
          'The workloads that take this template with them (propagateDeps), each with the clusters it is scheduled to.',
        'x-kubernetes-list-type': 'atomic',
        items: {
          type: 'object',
          required: ['apiVersion', 'kind', 'name'],
          properties: {
            apiVersion: str(),
            kind: str(),
            namespace: str(),
            name: str(),
            clusters: {
              type: 'array',
              'x-kubernetes-list-type': 'atomic',
              items: { type: 'object', required: ['name'], properties: { name: str() } },
            },
          },
        },
      },
      gracefulEvictionTasks: {
        type: 'array',
        description:
          "Clusters a NoExecute taint evicted the template from, while their copies are being dealt with (Karmada's graceful eviction).",
        'x-kubernetes-list-type': 'atomic',
        items: {
          type: 'object',
          required: ['fromCluster', 'purgeMode'],
          properties: {
            fromCluster: str(),
            purgeMode: { type: 'string', enum: ['Directly', 'Gracefully', 'Never'] },
            reason: str(),
            producer: str(),
            gracePeriodSeconds: int(),
            creationTimestamp: { type: 'string', format: 'date-time' },
          },
        },
      },
      conflictResolution: str('Abort or Overwrite, from the claiming policy.'),
      preserveResourcesOnDeletion: {
        type: 'boolean',
        description: 'From the claiming policy: the members keep their copies when the template is deleted.',
      },
      clusters: {
        type: 'array',
        description: 'Target clusters, with the replicas placement gave each (workloads).',
        'x-kubernetes-list-type': 'atomic',
        items: { type: 'object', required: ['name'], properties: { name: str(), replicas: int() } },
      },
    },
  };
}

/** What a binding's status says of one cluster (a Work's status says it of its own). */
function clusterEntry(): Record<string, JSONSchemaProps> {
  return {
    state: {
      type: 'string',
      enum: ['Applied', 'Failed', 'Conflict', 'Pending', 'Unreachable', 'Removing', 'Suspended', 'Evicting'],
    },
    message: str(
      "Why it is not Applied: the apiserver's message, the render error, the conflict; Evicting: why the evicted copy is kept.",
    ),
    keptUntil: {
      type: 'string',
      format: 'date-time',
      description:
        'Evicting: when the kept copy goes at the latest (the graceful eviction timeout), unless the new placement is healthy first; absent for purgeMode Never.',
    },
    replicas: int(),
    observedGeneration: int('The template generation last applied to this cluster.'),
    overrides: {
      type: 'array',
      'x-kubernetes-list-type': 'atomic',
      items: POLICY_REF,
      description: 'Override policies applied for this cluster, in order.',
    },
    health: {
      type: 'object',
      description:
        "The member object's status: replicas for Deployments, StatefulSets, DaemonSets and Jobs; presence for other kinds.",
      properties: {
        state: { type: 'string', enum: ['Healthy', 'Progressing', 'Unknown'] },
        replicas: int(),
        readyReplicas: int(),
        availableReplicas: int(),
        message: str(),
      },
    },
  };
}

export const KARMADA_POLICY_GROUP = 'policy.karmada.io';
export const KARMADA_CLUSTER_GROUP = 'cluster.karmada.io';
/** Karmada's CRD category (`kubectl get karmada-io`). */
export const KARMADA_CATEGORY = 'karmada-io';

/**
 * Karmada's API groups for a hub that does not run Karmada (the chart's `karmadaAPI.enabled`): the four
 * policy kinds in policy.karmada.io v1alpha1 (the v1alpha1 schema; validated and defaulted by Flotilla's
 * webhook, no conversion) and Cluster in cluster.karmada.io v1alpha1. Same schemas, status and printer
 * columns as Flotilla's own. They carry Karmada's short names (pp, cpp, op, cop) and category
 * (karmada-io), so a Karmada user's `kubectl get pp` or `kubectl delete pp X` reaches Karmada's group;
 * Flotilla's policy CRDs answer to fpp, fcpp, fop and fcop (kubectl takes a short name shared by two groups
 * from the group it lists first, which for CRD groups is the alphabetical first: Flotilla's).
 */
export function karmadaCustomResourceDefinitions(): CustomResourceDefinition[] {
  const policies = POLICY_KINDS.map((k) => {
    const crd = policyCRD(k);
    const v1alpha1 = crd.spec.versions.find((v) => v.name === 'v1alpha1');
    if (!v1alpha1) throw new Error('policy CRD without v1alpha1');
    const names = { ...crd.spec.names, shortNames: [k.karmadaShortName] };
    return {
      apiVersion: crd.apiVersion,
      kind: crd.kind,
      metadata: { name: `${k.plural}.${KARMADA_POLICY_GROUP}`, labels: LABELS },
      spec: {
        group: KARMADA_POLICY_GROUP,
        names: { ...names, categories: [KARMADA_CATEGORY] },
        scope: crd.spec.scope,
        versions: [{ ...v1alpha1, storage: true }],
      },
    } satisfies CustomResourceDefinition;
  });
  const cluster = clusterCRD();
  return [
    ...policies,
    {
      ...cluster,
      metadata: { name: `clusters.${KARMADA_CLUSTER_GROUP}`, labels: LABELS },
      spec: {
        ...cluster.spec,
        group: KARMADA_CLUSTER_GROUP,
        names: { ...cluster.spec.names, categories: [KARMADA_CATEGORY] },
      },
    },
  ];
}

/** Every CRD, in install order. */
export function customResourceDefinitions(): CustomResourceDefinition[] {
  return [...POLICY_KINDS.map(policyCRD), clusterCRD(), bindingCRD(), workCRD()];
}

/** Names of the CRDs whose conversion settings carry the webhook's CA bundle. */
export const CONVERTIBLE_CRD_NAMES: readonly string[] = POLICY_KINDS.map((k) => `${k.plural}.${POLICY_GROUP}`);

/**
 * The chart's crds/ as data: one CRD per file and nothing else (Helm installs every YAML file in crds/ as a
 * CRD, so a kustomization there would break the install). hack/crds.ts writes them as YAML (api/ holds no
 * serializer: manifests are written by pkg/yaml, as kubectl reads them); deploy/crds is rendered from the chart.
 */
export function crdFiles(): Array<{ name: string; object: object }> {
  return customResourceDefinitions().map((crd) => ({
    name: `${crd.spec.group}_${crd.spec.names.plural}.yaml`,
    object: crd,
  }));
}
