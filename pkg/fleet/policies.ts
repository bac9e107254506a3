// The policies of both groups: what each selects, how many templates the controller counts for it, its
// Ready condition, and the Karmada fields it carries that Flotilla accepts but does not act upon (the
// same sentences admission warns with). Pure.

import { convertObject } from '../../api/conversion/index.js';
import { formatFieldError, validateObject } from '../../api/validation/index.js';
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

/**
 * A stored policy as admission sees it: the Karmada shape (v1alpha1; Flotilla's storage version converted
 * back), its spec and the metadata a user writes, without what the apiserver and the controller added.
 */
function asAdmitted(o: JsonObject): JsonObject {
  const apiVersion = ownString(o, 'apiVersion') ?? '';
  let shaped = o;
  if (apiVersion.startsWith('policy.flotilla.io/') && apiVersion !== 'policy.flotilla.io/v1alpha1') {
    try {
      shaped = convertObject(o, 'policy.flotilla.io/v1alpha1');
    } catch {
      // unreadable conversion annotation: the stored spec is still what the controller reads
    }
  }
  const meta = isObject(shaped.metadata) ? shaped.metadata : {};
  const metadata: JsonObject = {};
  for (const k of ['name', 'namespace', 'labels', 'annotations']) if (Object.hasOwn(meta, k)) metadata[k] = meta[k];
  return { apiVersion: shaped.apiVersion, kind: shaped.kind, metadata, spec: shaped.spec };
}

const NOT_ACTED = 'is accepted but not acted upon';

/** What admission says of the policy now (against the hub's clusters): Karmada fields not acted upon, other warnings, errors. */
function findings(
  o: JsonObject,
  clusters: readonly JsonObject[],
): { notActedUpon: string[]; warnings: string[]; errors: string[] } {
  const known = clusters.map((c) => {
    const meta = isObject(c.metadata) ? c.metadata : {};
    const labels: Record<string, string> = {};
    if (isObject(meta.labels))
      for (const [k, v] of Object.entries(meta.labels)) if (typeof v === 'string') labels[k] = v;
    return { metadata: { name: ownString(meta, 'name') ?? '', labels }, spec: isObject(c.spec) ? c.spec : {} };
  });
  const r = validateObject(asAdmitted(o), { clusters: known });
  return {
    notActedUpon: r.warnings.filter((w) => w.includes(NOT_ACTED)),
    warnings: r.warnings.filter((w) => !w.includes(NOT_ACTED)),
    errors: r.errors.map(formatFieldError),
  };
}

export function policyFact(o: JsonObject, bindings: number, clusters: readonly JsonObject[] = []): PolicyFact {
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
    ...findings(o, clusters),
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
      return policyFact(
        o,
        claims.get(describeRef(ref.namespace ? ref : { kind: ref.kind, name: ref.name })) ?? 0,
        snapshot.clusters,
      );
    })
    .sort(
      (a, b) =>
        compare(a.kind, b.kind) ||
        compare(a.namespace ?? '', b.namespace ?? '') ||
        compare(a.name, b.name) ||
        compare(a.apiVersion, b.apiVersion),
    );
}
