// What a workload needs to run, for `propagateDeps` (Karmada's dependencies interpreter for native
// kinds): the ConfigMaps, Secrets, ServiceAccounts and PersistentVolumeClaims its pod template names,
// in the workload's namespace. Pure: it reads the template and nothing else.
//
// Read, as Karmada reads them (Kubernetes' VisitPodSecretNames / VisitPodConfigmapNames):
//   - every container (containers, initContainers, ephemeralContainers): env[].valueFrom
//     configMapKeyRef / secretKeyRef, envFrom[] configMapRef / secretRef;
//   - volumes: configMap, secret, projected sources (configMap, secret), persistentVolumeClaim, and the
//     secret references of azureFile, cephfs, cinder, flexVolume, iscsi, rbd, scaleIO, storageos and csi
//     (nodePublishSecretRef);
//   - imagePullSecrets, and serviceAccountName unless empty or "default" (every namespace has that one);
//   - never the ConfigMap kube-root-ca.crt: every namespace of every cluster has its own, kept by that
//     cluster (Flotilla's addition: copying the hub's over a member's would break its service accounts);
//   - Ingress: spec.tls[].secretName.
// Workloads: Deployment, StatefulSet, DaemonSet, ReplicaSet (apps/v1), Job, CronJob (batch/v1), Pod (v1),
// Ingress (networking.k8s.io/v1). ReplicaSet is Flotilla's addition; Karmada's ServiceImport dependencies
// (the derived Service and its EndpointSlices) are not read: Flotilla does not derive services.

import { arr, isObject, obj, str, type JsonObject } from './json.js';
import type { ObjectRef } from './types.js';

/** One object a workload names, with where it first names it (a field path, for messages). */
export interface Dependency {
  ref: ObjectRef & { namespace: string };
  path: string;
}

/** Kept by every cluster in every namespace (kube-controller-manager's root CA publisher). */
const ROOT_CA_CONFIGMAP = 'kube-root-ca.crt';

/** The kinds a workload can depend on, in the order dependenciesOf() lists them. */
export const DEPENDENCY_KINDS = ['ConfigMap', 'Secret', 'ServiceAccount', 'PersistentVolumeClaim'] as const;
type DependencyKind = (typeof DEPENDENCY_KINDS)[number];

/** Where the pod spec is in each workload kind (apiVersion/kind → path of objects). */
const POD_SPEC_PATHS: Readonly<Record<string, readonly string[]>> = {
  'apps/v1/Deployment': ['spec', 'template', 'spec'],
  'apps/v1/StatefulSet': ['spec', 'template', 'spec'],
  'apps/v1/DaemonSet': ['spec', 'template', 'spec'],
  'apps/v1/ReplicaSet': ['spec', 'template', 'spec'],
  'batch/v1/Job': ['spec', 'template', 'spec'],
  'batch/v1/CronJob': ['spec', 'jobTemplate', 'spec', 'template', 'spec'],
  'v1/Pod': ['spec'],
};

/** Volume sources whose secret reference is `<source>.secretRef.name` (or another field, named). */
const VOLUME_SECRET_REFS: ReadonlyArray<readonly [source: string, ...path: string[]]> = [
  ['azureFile', 'secretName'],
  ['cephfs', 'secretRef', 'name'],
  ['cinder', 'secretRef', 'name'],
  ['flexVolume', 'secretRef', 'name'],
  ['iscsi', 'secretRef', 'name'],
  ['rbd', 'secretRef', 'name'],
  ['scaleIO', 'secretRef', 'name'],
  ['storageos', 'secretRef', 'name'],
  ['csi', 'nodePublishSecretRef', 'name'],
];

/** Whether dependenciesOf() reads anything from this kind. */
export function hasDependencies(apiVersion: string, kind: string): boolean {
  return Object.hasOwn(POD_SPEC_PATHS, `${apiVersion}/${kind}`) || isIngress(apiVersion, kind);
}

function isIngress(apiVersion: string, kind: string): boolean {
  return apiVersion === 'networking.k8s.io/v1' && kind === 'Ingress';
}

function at(o: unknown, path: readonly string[]): unknown {
  let v = o;
  for (const k of path) {
    if (!isObject(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}

/**
 * The objects a workload names, deduplicated, in DEPENDENCY_KINDS order then by name. `namespace` is the
 * workload's (a template without one is in "default", as the engine reads it). Nothing for other kinds.
 */
export function dependenciesOf(ref: ObjectRef, object: JsonObject): Dependency[] {
  const namespace = ref.namespace ?? 'default';
  const found = new Map<string, Dependency>();
  const add = (kind: DependencyKind, name: unknown, path: string): void => {
    if (typeof name !== 'string' || name === '') return;
    if (kind === 'ConfigMap' && name === ROOT_CA_CONFIGMAP) return;
    const key = `${kind}/${name}`;
    if (!found.has(key)) found.set(key, { ref: { apiVersion: 'v1', kind, namespace, name }, path });
  };
  if (isIngress(ref.apiVersion, ref.kind)) {
    arr(at(object, ['spec', 'tls']))?.forEach((t, i) =>
      add('Secret', at(t, ['secretName']), `spec.tls[${i}].secretName`),
    );
  } else {
    const specPath = Object.hasOwn(POD_SPEC_PATHS, `${ref.apiVersion}/${ref.kind}`)
      ? POD_SPEC_PATHS[`${ref.apiVersion}/${ref.kind}`]
      : undefined;
    const spec = specPath ? obj(at(object, specPath)) : undefined;
    if (spec && specPath) podSpecDependencies(spec, specPath.join('.'), add);
  }
  const order = (k: string) => DEPENDENCY_KINDS.indexOf(k as DependencyKind);
  return [...found.values()].sort(
    (a, b) => order(a.ref.kind) - order(b.ref.kind) || (a.ref.name < b.ref.name ? -1 : a.ref.name > b.ref.name ? 1 : 0),
  );
}

function podSpecDependencies(
  spec: JsonObject,
  base: string,
  add: (kind: DependencyKind, name: unknown, path: string) => void,
): void {
  for (const list of ['containers', 'initContainers', 'ephemeralContainers']) {
    arr(at(spec, [list]))?.forEach((c, i) => {
      const p = `${base}.${list}[${i}]`;
      arr(at(c, ['env']))?.forEach((e, j) => {
        add('ConfigMap', at(e, ['valueFrom', 'configMapKeyRef', 'name']), `${p}.env[${j}].valueFrom.configMapKeyRef`);
        add('Secret', at(e, ['valueFrom', 'secretKeyRef', 'name']), `${p}.env[${j}].valueFrom.secretKeyRef`);
      });
      arr(at(c, ['envFrom']))?.forEach((e, j) => {
        add('ConfigMap', at(e, ['configMapRef', 'name']), `${p}.envFrom[${j}].configMapRef`);
        add('Secret', at(e, ['secretRef', 'name']), `${p}.envFrom[${j}].secretRef`);
      });
    });
  }
  arr(at(spec, ['volumes']))?.forEach((v, i) => {
    const p = `${base}.volumes[${i}]`;
    add('ConfigMap', at(v, ['configMap', 'name']), `${p}.configMap`);
    add('Secret', at(v, ['secret', 'secretName']), `${p}.secret`);
    add('PersistentVolumeClaim', at(v, ['persistentVolumeClaim', 'claimName']), `${p}.persistentVolumeClaim`);
    arr(at(v, ['projected', 'sources']))?.forEach((s, j) => {
      add('ConfigMap', at(s, ['configMap', 'name']), `${p}.projected.sources[${j}].configMap`);
      add('Secret', at(s, ['secret', 'name']), `${p}.projected.sources[${j}].secret`);
    });
    for (const [source, ...rest] of VOLUME_SECRET_REFS)
      add('Secret', at(v, [source, ...rest]), `${p}.${source}.${rest[0] ?? ''}`);
  });
  arr(at(spec, ['imagePullSecrets']))?.forEach((s, i) =>
    add('Secret', at(s, ['name']), `${base}.imagePullSecrets[${i}]`),
  );
  const sa = str(at(spec, ['serviceAccountName']));
  if (sa !== 'default') add('ServiceAccount', sa, `${base}.serviceAccountName`);
}
