// What marks an object on a member as the controller's: labels naming the template it was rendered
// from (api/work/v1alpha1 defines them). The controller deletes only objects that carry them, watches
// members with a selector on them, and reads them back after a restart (nothing else is needed to know
// what it put where).
//
//   label  flotilla.io/template-uid        the template's uid on the hub (the owner's identity)
//   label  flotilla.io/template-kind       Kind.group of the template (`Deployment.apps`, `ConfigMap`)
//   label  flotilla.io/template-namespace  the template's namespace (absent for cluster-scoped templates)
//   label  flotilla.io/template-name       the template's name, when it fits a label value (<= 63 chars)
//   annot. flotilla.io/template            `apiVersion/Kind namespace/name`, always, whatever the name's length
//
// The uid decides: an object whose uid label names a template that no longer exists on the hub is an
// orphan (the template was deleted while the member was unreachable) and is deleted once the hub
// confirms the template is gone.

import { createHash } from 'node:crypto';

import type { LiveMeta, OwnerMark } from '../kube/delivery.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';

import {
  TEMPLATE_ANNOTATION,
  TEMPLATE_KIND_LABEL,
  TEMPLATE_NAME_LABEL,
  TEMPLATE_NAMESPACE_LABEL,
  TEMPLATE_UID_LABEL,
} from '../../api/work/v1alpha1/types.js';

export { TEMPLATE_ANNOTATION, TEMPLATE_KIND_LABEL, TEMPLATE_NAME_LABEL, TEMPLATE_NAMESPACE_LABEL, TEMPLATE_UID_LABEL };
/** The member watch selector: every object the controller applied, and nothing else. */
export const OWNED_SELECTOR = TEMPLATE_UID_LABEL;
/** What preserveResourcesOnDeletion takes off an object it leaves on a member. */
export const RELEASED_LABELS: readonly string[] = [
  TEMPLATE_UID_LABEL,
  TEMPLATE_KIND_LABEL,
  TEMPLATE_NAMESPACE_LABEL,
  TEMPLATE_NAME_LABEL,
];
export const RELEASED_ANNOTATIONS: readonly string[] = [TEMPLATE_ANNOTATION, 'flotilla.io/applied-hash'];
/** On templates: the controller removes the template's objects from the members before it goes. */
export const FINALIZER = 'flotilla.io/member-cleanup';
/**
 * The controller's field manager, on members and on the hub (status, bindings, finalizers). `flotilla
 * apply` is `flotilla`: two writers on one object meet as a conflict that names the other.
 */
export const CONTROLLER_FIELD_MANAGER = 'flotilla-controller';
/** The manager the controller applied member objects with before it had its own; taken over on the next apply. */
export const PREVIOUS_MEMBER_FIELD_MANAGERS: readonly string[] = ['flotilla'];
/** Copied from templates, these would fight the members' own controllers or carry the hub's client state. */
export const DROPPED_ANNOTATIONS = [
  'kubectl.kubernetes.io/last-applied-configuration',
  'deployment.kubernetes.io/revision',
];

export interface TemplateIdentity {
  apiVersion: string;
  kind: string;
  namespace?: string;
  name: string;
  uid: string;
}

/** The owner reference of an object the controller keeps for template `t` on the hub (its bindings): removed with it. */
export function controllerReference(t: TemplateIdentity): JsonObject {
  return {
    apiVersion: t.apiVersion,
    kind: t.kind,
    name: t.name,
    uid: t.uid,
    controller: true,
    blockOwnerDeletion: false,
  };
}

const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

export function groupOf(apiVersion: string): string {
  const i = apiVersion.indexOf('/');
  return i < 0 ? '' : apiVersion.slice(0, i);
}

/** `Deployment.apps`, or `ConfigMap` for the core group (kubectl's resource.group form, with the kind). */
export function kindLabel(apiVersion: string, kind: string): string {
  const g = groupOf(apiVersion);
  return g ? `${kind}.${g}` : kind;
}

/** A label value for `v`: itself when valid, else a stable short hash (labels are capped at 63 characters). */
function labelValue(v: string): string {
  if (v.length <= 63 && LABEL_VALUE.test(v)) return v;
  return `h-${createHash('sha256').update(v).digest('hex').slice(0, 40)}`;
}

export function describeTemplate(t: Pick<TemplateIdentity, 'apiVersion' | 'kind' | 'namespace' | 'name'>): string {
  return `${t.apiVersion}/${t.kind} ${t.namespace ? `${t.namespace}/` : ''}${t.name}`;
}

/** Sets the ownership labels and annotation on a rendered object (in place) and drops the hub-only annotations. */
export function stampOwnership(object: JsonObject, t: TemplateIdentity): void {
  const meta = isObject(object.metadata) ? object.metadata : (object.metadata = {});
  const labels = isObject(meta.labels) ? meta.labels : (meta.labels = {});
  labels[TEMPLATE_UID_LABEL] = t.uid;
  labels[TEMPLATE_KIND_LABEL] = labelValue(kindLabel(t.apiVersion, t.kind));
  if (t.namespace) labels[TEMPLATE_NAMESPACE_LABEL] = t.namespace;
  else delete labels[TEMPLATE_NAMESPACE_LABEL];
  if (t.name.length <= 63 && LABEL_VALUE.test(t.name)) labels[TEMPLATE_NAME_LABEL] = t.name;
  else delete labels[TEMPLATE_NAME_LABEL];
  const annotations = isObject(meta.annotations) ? meta.annotations : (meta.annotations = {});
  for (const k of DROPPED_ANNOTATIONS) delete annotations[k];
  annotations[TEMPLATE_ANNOTATION] = describeTemplate(t);
}

/** The template uid an object on a member was applied for, or undefined when it is not the controller's. */
export function ownerUid(object: JsonObject): string | undefined {
  const meta = isObject(object.metadata) ? object.metadata : undefined;
  const uid = ownString(meta?.labels, TEMPLATE_UID_LABEL);
  return uid === '' ? undefined : uid;
}

/** The template an owned object names in its annotation, for orphan checks; undefined when unreadable. */
export function ownerTemplate(object: JsonObject): Omit<TemplateIdentity, 'uid'> | undefined {
  const meta = isObject(object.metadata) ? object.metadata : undefined;
  const text = ownString(meta?.annotations, TEMPLATE_ANNOTATION);
  if (!text) return undefined;
  const m = /^(\S+)\/([^/\s]+) (?:([^/\s]+)\/)?(\S+)$/.exec(text);
  if (!m || !m[1] || !m[2] || !m[4]) return undefined;
  return { apiVersion: m[1], kind: m[2], name: m[4], ...(m[3] ? { namespace: m[3] } : {}) };
}

/** Whether a live object on a member is the controller's copy of template `t`. */
export function ownedBy(live: LiveMeta, t: TemplateIdentity): boolean {
  const uid = ownString(live.labels, TEMPLATE_UID_LABEL);
  if (uid === undefined) return false;
  if (uid === t.uid) return true;
  // A template deleted and created again under its name has a new uid: its old copy is still its own.
  const o = ownerTemplate({ metadata: { annotations: live.annotations } });
  return (
    o !== undefined &&
    groupOf(o.apiVersion) === groupOf(t.apiVersion) &&
    o.kind === t.kind &&
    o.name === t.name &&
    (o.namespace ?? '') === (t.namespace ?? '')
  );
}

/** The controller's OwnerMark for template `t`: its labels (pkg/kube/delivery.ts). */
export function templateMark(t: TemplateIdentity): OwnerMark {
  return {
    namespaceMark: CONTROLLER_FIELD_MANAGER,
    ours: "the controller's",
    mark: (o) => stampOwnership(o, t),
    owns: (live) => ownedBy(live, t),
  };
}
