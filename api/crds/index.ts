// The CustomResourceDefinitions of policy.flotilla.io, cluster.flotilla.io and (in work.ts) work.flotilla.io, as data.
// The chart's crds/ (deploy/helm/flotilla/crds/*.yaml) is rendered from here by hack/update-crds and checked
// by hack/verify-crds; deploy/crds is rendered from the chart by hack/update-deploy.
//
// One source for the constraints: the structural schemas are generated from the schemas api/validation
// checks objects against (types, enums, required fields, minItems, lengths, minimums), so what the
// apiserver rejects by itself and what `flotilla validate` rejects offline cannot drift apart. This file
// adds what only a CRD has: Karmada's server-side defaults, list/map types, descriptions, versions,
// printer columns and the conversion webhook.

import { CLUSTER_SPEC, OVERRIDE_SPEC, PROPAGATION_SPEC, type Schema } from '../validation/schema.js';
import {
  AGE,
  CONDITIONS,
  LABELS,
  int,
  topLevel,
  type CustomResourceDefinition,
  type JSONSchemaProps,
  type PrinterColumn,
} from './props.js';
import { KARMADA_CATEGORY } from '../work/karmada/types.js';
import { karmadaWorkCRDs } from './karmada-work.js';
import { bindingCRD, workCRD } from './work.js';

export type { CustomResourceDefinition, JSONSchemaProps, PrinterColumn } from './props.js';
export { BINDING, GROUP as WORK_GROUP, WORK } from '../work/v1alpha1/types.js';

export const POLICY_GROUP = 'policy.flotilla.io';
export const CLUSTER_GROUP = 'cluster.flotilla.io';
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

export const KARMADA_POLICY_GROUP = 'policy.karmada.io';
export const KARMADA_CLUSTER_GROUP = 'cluster.karmada.io';
export { KARMADA_CATEGORY };

/**
 * Karmada's API groups for a hub that does not run Karmada (the chart's `karmadaAPI.enabled`): the four
 * policy kinds in policy.karmada.io v1alpha1 (the v1alpha1 schema; validated and defaulted by Flotilla's
 * webhook, no conversion) and Cluster in cluster.karmada.io v1alpha1. Same schemas, status and printer
 * columns as Flotilla's own. They carry Karmada's short names (pp, cpp, op, cop) and category
 * (karmada-io), so a Karmada user's `kubectl get pp` or `kubectl delete pp X` reaches Karmada's group;
 * and work.karmada.io's ResourceBinding, ClusterResourceBinding and Work (karmada-work.ts), which the
 * controller writes as Karmada would (`kubectl get rb`; Flotilla's own binding answers to frb);
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
    ...karmadaWorkCRDs(),
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
