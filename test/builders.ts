// Builders for test objects, shared by the unit tests. Each returns a fresh object; pass overrides to
// change what a test is about and leave the rest ordinary.

export type Obj = Record<string, unknown>;

export function deployment(
  name = 'web',
  namespace = 'default',
  extra: { replicas?: number; labels?: Record<string, string>; containers?: Obj[]; initContainers?: Obj[] } = {},
): Obj {
  const podSpec: Obj = { containers: extra.containers ?? [{ name: 'web', image: 'nginx:1.25' }] };
  if (extra.initContainers) podSpec.initContainers = extra.initContainers;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace, ...(extra.labels ? { labels: extra.labels } : {}) },
    spec: {
      ...(extra.replicas === undefined ? {} : { replicas: extra.replicas }),
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: podSpec },
    },
  };
}

export function configMap(
  name = 'cfg',
  namespace = 'default',
  data: Record<string, string> = {},
  labels?: Record<string, string>,
): Obj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, ...(labels ? { labels } : {}) }, data };
}

export function cluster(
  name: string,
  opts: { labels?: Record<string, string>; provider?: string; region?: string; zones?: string[]; taints?: Obj[] } = {},
): Obj {
  const spec: Obj = {};
  if (opts.provider) spec.provider = opts.provider;
  if (opts.region) spec.region = opts.region;
  if (opts.zones) spec.zones = opts.zones;
  if (opts.taints) spec.taints = opts.taints;
  return {
    apiVersion: 'cluster.flotilla.io/v1alpha1',
    kind: 'Cluster',
    metadata: { name, ...(opts.labels ? { labels: opts.labels } : {}) },
    spec,
  };
}

export function propagationPolicy(
  name: string,
  namespace: string,
  selectors: Obj[],
  placement?: Obj,
  extra: Obj = {},
): Obj {
  return {
    apiVersion: 'policy.flotilla.io/v1alpha1',
    kind: 'PropagationPolicy',
    metadata: { name, namespace },
    spec: { resourceSelectors: selectors, ...(placement ? { placement } : {}), ...extra },
  };
}

export function clusterPropagationPolicy(name: string, selectors: Obj[], placement?: Obj, extra: Obj = {}): Obj {
  return {
    apiVersion: 'policy.flotilla.io/v1alpha1',
    kind: 'ClusterPropagationPolicy',
    metadata: { name },
    spec: { resourceSelectors: selectors, ...(placement ? { placement } : {}), ...extra },
  };
}

export function overridePolicy(name: string, namespace: string, rules: Obj[], selectors?: Obj[]): Obj {
  return {
    apiVersion: 'policy.flotilla.io/v1alpha1',
    kind: 'OverridePolicy',
    metadata: { name, namespace },
    spec: { ...(selectors ? { resourceSelectors: selectors } : {}), overrideRules: rules },
  };
}

export function clusterOverridePolicy(name: string, rules: Obj[], selectors?: Obj[]): Obj {
  return {
    apiVersion: 'policy.flotilla.io/v1alpha1',
    kind: 'ClusterOverridePolicy',
    metadata: { name },
    spec: { ...(selectors ? { resourceSelectors: selectors } : {}), overrideRules: rules },
  };
}

export const selectDeployment = (name?: string): Obj => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  ...(name ? { name } : {}),
});

/** Reads a nested value by dotted path with [i] indices, for assertions. */
export function at(o: unknown, path: string): unknown {
  let cur: unknown = o;
  for (const part of path.split('.').flatMap((p) => p.split(/\[(\d+)\]/).filter(Boolean))) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}
