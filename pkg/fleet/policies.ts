// The policies of both groups: what each selects, how many templates the controller counts for it, its
// Ready condition, and the Karmada fields it carries that Flotilla accepts but does not act upon (the
// same sentences admission warns with). Pure.

import { convertObject } from '../../api/conversion/index.js';
import { propagationNotActedUpon } from '../../api/validation/not-acted-upon.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { HubSnapshot } from './hub.js';
import { describeRef, policyRefOf } from './rows.js';
import type { PolicyFact } from './types.js';

const list = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.filter(isObject) : []);
const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function selectorText(s: JsonObject, policyNamespace: string | undefined): string {
  const apiVersion = ownString(s, 'apiVersion') ?? '*';
  const kind = ownString(s, 'kind') ?? '*';
  const ns = ownString(s, 'namespace') ?? policyNamespace;
  const name = ownString(s, 'name');
  const where = name ? `${ns ? `${ns}/` : ''}${name}` : ns ? `${ns}/*` : '*';
  const labels = isObject(s.labelSelector) ? labelSelectorText(s.labelSelector) : '';
  return `${apiVersion} ${kind} ${where}${labels ? ` ${labels}` : ''}`;
}

function labelSelectorText(ls: JsonObject): string {
  const parts: string[] = [];
  if (isObject(ls.matchLabels))
    for (const [k, v] of Object.entries(ls.matchLabels)) if (typeof v === 'string') parts.push(`${k}=${v}`);
  for (const e of list(ls.matchExpressions)) {
    const values = Array.isArray(e.values) ? e.values.filter((v) => typeof v === 'string').join(',') : '';
    parts.push(`${ownString(e, 'key') ?? ''} ${ownString(e, 'operator') ?? ''}${values ? ` (${values})` : ''}`);
  }
  return parts.length > 0 ? `[${parts.join(', ')}]` : '';
}

/** The Karmada-shape (v1alpha1) spec of a stored policy, which is what the not-acted-upon rules read. */
function v1alpha1Spec(o: JsonObject): JsonObject {
  const apiVersion = ownString(o, 'apiVersion') ?? '';
  let shaped = o;
  if (apiVersion.startsWith('policy.flotilla.io/') && apiVersion !== 'policy.flotilla.io/v1alpha1') {
    try {
      shaped = convertObject(o, 'policy.flotilla.io/v1alpha1');
    } catch {
      // unreadable annotation: the stored spec is still what the controller reads
    }
  }
  return isObject(shaped.spec) ? shaped.spec : {};
}

export function policyFact(o: JsonObject, bindings: number): PolicyFact {
  const meta = isObject(o.metadata) ? o.metadata : {};
  const kind = ownString(o, 'kind') ?? '';
  const role = kind.endsWith('PropagationPolicy') ? 'propagation' : 'override';
  const namespace = ownString(meta, 'namespace');
  const spec = isObject(o.spec) ? o.spec : {};
  const status = isObject(o.status) ? o.status : {};
  const ready = list(status.conditions).find((c) => c.type === 'Ready');
  const readyStatus = ownString(ready, 'status');
  const fact: PolicyFact = {
    apiVersion: ownString(o, 'apiVersion') ?? '',
    kind,
    ...(namespace ? { namespace } : {}),
    name: ownString(meta, 'name') ?? '',
    role,
    selects: list(spec.resourceSelectors).map((s) => selectorText(s, namespace)),
    bindings,
    ready: readyStatus === 'True' || readyStatus === 'False' ? readyStatus : 'Unknown',
    notActedUpon: role === 'propagation' ? propagationNotActedUpon(v1alpha1Spec(o)) : [],
  };
  if (role === 'override' && fact.selects.length === 0)
    fact.selects.push(namespace ? `every resource in ${namespace}` : 'every resource');
  if (typeof status.templates === 'number') fact.templates = status.templates;
  const reason = ownString(ready, 'reason');
  if (reason) fact.readyReason = reason;
  const message = ownString(ready, 'message');
  if (message) fact.readyMessage = message;
  if (typeof spec.priority === 'number') fact.priority = spec.priority;
  const cr = ownString(spec, 'conflictResolution');
  if (cr) fact.conflictResolution = cr;
  return fact;
}

/** Every policy of both groups, sorted by kind, namespace and name. */
export function policyFacts(snapshot: HubSnapshot): PolicyFact[] {
  const claims = new Map<string, number>();
  for (const b of snapshot.bindings) {
    const p = policyRefOf(isObject(b.spec) ? b.spec.policy : undefined);
    if (p) claims.set(describeRef(p), (claims.get(describeRef(p)) ?? 0) + 1);
  }
  return snapshot.policies
    .map((o) => {
      const meta = isObject(o.metadata) ? o.metadata : {};
      const ref = {
        kind: ownString(o, 'kind') ?? '',
        namespace: ownString(meta, 'namespace'),
        name: ownString(meta, 'name') ?? '',
      };
      return policyFact(o, claims.get(describeRef(ref.namespace ? ref : { kind: ref.kind, name: ref.name })) ?? 0);
    })
    .sort(
      (a, b) =>
        compare(a.kind, b.kind) ||
        compare(a.namespace ?? '', b.namespace ?? '') ||
        compare(a.name, b.name) ||
        compare(a.apiVersion, b.apiVersion),
    );
}
