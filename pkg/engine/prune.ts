// Fields of a template that the hub's apiserver (or a controller on the hub) wrote for the hub's own copy,
// and that a member must not get: it rejects them (a Job's generated selector names the hub's uid), or
// they would collide with the member's own (a Service's cluster IP), or they name something that exists
// only on the hub. Karmada removes the same fields before a Work is written (its native resource
// interpreter's prune step); the kinds and fields here are the ones it names:
//
//   Deployment (apps)    annotations deployment.kubernetes.io/revision and /revision-history
//   Job (batch)          unless spec.manualSelector: the generated selector's controller-uid labels, and the
//                        pod template's controller-uid and job-name labels (both spellings, with and
//                        without batch.kubernetes.io/); spec.ttlSecondsAfterFinished (a member's TTL
//                        controller deleting a finished copy would otherwise have it re-created)
//   Secret (core)        of type kubernetes.io/service-account-token: data, and the annotation
//                        kubernetes.io/service-account.uid (the member's token controller fills both)
//   ServiceAccount       secrets named `<name>-token-…` (the hub's generated token Secrets)
//   Service (core)       spec.clusterIP and spec.clusterIPs, unless clusterIP is None (headless)
//   PVC (core)           annotation volume.kubernetes.io/selected-node (a node of the hub's)
//
// Pure: changes the object in place and returns it. Kinds are matched with their group, so a custom
// resource that happens to be called Job is left alone.

import { isObject, obj, type JsonObject } from './json.js';

const JOB_SELECTOR_LABELS = ['controller-uid', 'batch.kubernetes.io/controller-uid'];
const JOB_TEMPLATE_LABELS = [...JOB_SELECTOR_LABELS, 'job-name', 'batch.kubernetes.io/job-name'];
const DEPLOYMENT_ANNOTATIONS = ['deployment.kubernetes.io/revision', 'deployment.kubernetes.io/revision-history'];
const SA_UID_ANNOTATION = 'kubernetes.io/service-account.uid';
const SELECTED_NODE_ANNOTATION = 'volume.kubernetes.io/selected-node';

/** Deletes `keys` from the map at `parent[field]`, and the map itself when nothing is left in it. */
function deleteKeys(parent: JsonObject | undefined, field: string, keys: readonly string[]): void {
  const map = obj(parent?.[field]);
  if (!parent || !map) return;
  for (const k of keys) delete map[k];
  if (Object.keys(map).length === 0) delete parent[field];
}

function group(apiVersion: unknown): string | undefined {
  if (typeof apiVersion !== 'string') return undefined;
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

function pruneJob(o: JsonObject): void {
  const spec = obj(o.spec);
  if (!spec) return;
  delete spec.ttlSecondsAfterFinished;
  if (spec.manualSelector === true) return;
  const selector = obj(spec.selector);
  if (selector) {
    deleteKeys(selector, 'matchLabels', JOB_SELECTOR_LABELS);
    if (Object.keys(selector).length === 0) delete spec.selector;
  }
  const template = obj(spec.template);
  deleteKeys(obj(template?.metadata), 'labels', JOB_TEMPLATE_LABELS);
}

function pruneService(o: JsonObject): void {
  const spec = obj(o.spec);
  if (!spec || !Object.hasOwn(spec, 'clusterIP') || spec.clusterIP === 'None') return;
  delete spec.clusterIP;
  delete spec.clusterIPs;
}

function pruneServiceAccount(o: JsonObject): void {
  const name = obj(o.metadata)?.name;
  if (typeof name !== 'string' || !Array.isArray(o.secrets)) return;
  const prefix = `${name}-token-`;
  const kept = o.secrets.filter((s) => !(isObject(s) && typeof s.name === 'string' && s.name.startsWith(prefix)));
  if (kept.length === o.secrets.length) return;
  if (kept.length > 0) o.secrets = kept;
  else delete o.secrets;
}

function pruneSecret(o: JsonObject): void {
  if (o.type !== 'kubernetes.io/service-account-token') return;
  delete o.data;
  deleteKeys(obj(o.metadata), 'annotations', [SA_UID_ANNOTATION]);
}

function prunePersistentVolumeClaim(o: JsonObject): void {
  const meta = obj(o.metadata);
  const annotations = obj(meta?.annotations);
  if (typeof annotations?.[SELECTED_NODE_ANNOTATION] === 'string' && annotations[SELECTED_NODE_ANNOTATION] !== '')
    deleteKeys(meta, 'annotations', [SELECTED_NODE_ANNOTATION]);
}

/** `group/Kind` → its pruner. */
const PRUNERS: ReadonlyMap<string, (o: JsonObject) => void> = new Map([
  ['apps/Deployment', (o: JsonObject) => deleteKeys(obj(o.metadata), 'annotations', DEPLOYMENT_ANNOTATIONS)],
  ['batch/Job', pruneJob],
  ['/Secret', pruneSecret],
  ['/ServiceAccount', pruneServiceAccount],
  ['/Service', pruneService],
  ['/PersistentVolumeClaim', prunePersistentVolumeClaim],
]);

/** The kinds pruneGeneratedFields acts on, as `group/Kind` (`/Service` for the core group). */
export const PRUNED_KINDS: readonly string[] = [...PRUNERS.keys()];

/** Removes from `o` (in place) what the hub generated for its own copy of that kind; returns `o`. */
export function pruneGeneratedFields(o: JsonObject): JsonObject {
  const g = group(o.apiVersion);
  const pruner = g === undefined || typeof o.kind !== 'string' ? undefined : PRUNERS.get(`${g}/${o.kind}`);
  pruner?.(o);
  return o;
}
