// Overrides at admission time: one object, admitted in one cluster, gets the override rules that select
// it and target this cluster (and act on the admission's operation), then the Gatekeeper mutators that
// match it. The same functions as rendering do the work (overrideObject, applyMutators), so for a CREATE
// the answer is the one `render --cluster` gives for the same template.
//
// Idempotence: admitting the output again changes nothing. Most overriders are idempotent by nature
// (set a label, replace an image); a few are not (appending to a command, plaintext `add` at `/-`). When
// applying the rules to the output would change it again, the output carries ADMITTED_DIGEST_ANNOTATION,
// a digest of itself, and an object whose digest matches its annotation is left as it is.

import { createHash } from 'node:crypto';
import { cloneJson, isObject, jsonEqual, obj, str, stringMap, type JsonObject } from './json.js';
import {
  OverrideCatalog,
  ruleActsOn,
  ruleMayRepeat,
  withoutRepeatable,
  type AdmissionOperation,
  type OverrideRule,
} from './overrides.js';
import { BoundedCache } from '../../api/internal/cache.js';
import { overrideObject } from './render.js';
import { admitMutators, MutationError, type UnusableMutator } from './admit-mutators.js';
import { isClusterScoped, refOf, sortInputs, type Template } from './inputs.js';
import { isMutator, type Mutator } from './gatekeeper.js';
import type { AppliedRule, Change, ClusterInfo } from './types.js';

export const ADMITTED_DIGEST_ANNOTATION = 'override.flotilla.io/admitted-digest';

export class AdmissionOverrideError extends Error {
  readonly code = 'ADMISSION_OVERRIDE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'AdmissionOverrideError';
  }
}

export interface AdmitRequest {
  object: unknown;
  operation: AdmissionOperation;
  /**
   * The admission request's uid (the same when the apiserver calls again for reinvocation). With it, a
   * reinvocation does not apply appending rules a second time.
   */
  requestUid?: string | undefined;
  /** Labels of the object's namespace (mutators' namespaceSelector); unknown: undefined. */
  namespaceLabels?: Readonly<Record<string, string>> | undefined;
  explain?: boolean;
}

function newRulesCache(): BoundedCache<readonly OverrideRule[]> {
  return new BoundedCache({ maxEntries: 4096, maxKeyLength: 2048, maxTotalLength: 4 * 1024 * 1024 });
}

export interface AdmitResult {
  /** The object as admitted (a new object; the input is never changed). */
  object: JsonObject;
  changed: boolean;
  rules: AppliedRule[];
  mutators: string[];
  changes: Change[];
  /** Why a Gatekeeper mutator that selects the object is not (fully) applied. */
  warnings: string[];
}

/** The mark's value: `<digest>`, or `<digest> <request uid>` when the admission request is known. */
function formatMark(digest: string, requestUid: string | undefined): string {
  return requestUid ? `${digest} ${requestUid}` : digest;
}

function parseMark(value: string | undefined): { digest: string; request: string | undefined } | undefined {
  if (value === undefined) return undefined;
  const space = value.indexOf(' ');
  return space < 0
    ? { digest: value, request: undefined }
    : { digest: value.slice(0, space), request: value.slice(space + 1) };
}

const VOLATILE_METADATA = ['resourceVersion', 'managedFields', 'generation', 'uid', 'creationTimestamp'];

/** A digest of what the overrides read and write: the object without status and server-kept metadata. */
export function admittedDigest(o: JsonObject): string {
  const copy = { ...o };
  delete copy.status;
  const meta = obj(o.metadata);
  if (meta) {
    const m = { ...meta };
    for (const k of VOLATILE_METADATA) delete m[k];
    const ann = obj(meta.annotations);
    if (ann && Object.hasOwn(ann, ADMITTED_DIGEST_ANNOTATION)) {
      const a = { ...ann };
      delete a[ADMITTED_DIGEST_ANNOTATION];
      m.annotations = a;
    }
    copy.metadata = m;
  }
  return createHash('sha256').update(stableJson(copy)).digest('hex').slice(0, 32);
}

function stableJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(stableJson).join(',')}]`;
  if (isObject(v))
    return `{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson(v[k])}`)
      .join(',')}}`;
  return JSON.stringify(v) ?? 'null';
}

/**
 * The override policies and mutators one cluster admits with, kept current by upsert/remove (the webhook's
 * watches) or built once from files (`flotilla admit`).
 */
export class OverrideSet {
  private cluster: ClusterInfo;
  private readonly policies = new Map<string, JsonObject>();
  private readonly mutatorObjects = new Map<string, JsonObject>();
  private catalog: OverrideCatalog | undefined;
  private mutators: Mutator[] | undefined;
  /** Rules by object identity and labels: most admissions are of objects seen before. Dropped on any change. */
  private rulesCache = newRulesCache();
  private readonly problems = new Map<string, string>();
  /** Gatekeeper mutators held but refused, by key: warned about on the objects they select. */
  private readonly unusable = new Map<string, UnusableMutator>();

  constructor(cluster: ClusterInfo) {
    this.cluster = cluster;
  }

  get clusterInfo(): ClusterInfo {
    return this.cluster;
  }

  setCluster(cluster: ClusterInfo): void {
    this.cluster = cluster;
  }

  /** Policies and mutators held, for metrics and logs. */
  get size(): { policies: number; mutators: number } {
    return { policies: this.policies.size, mutators: this.mutatorObjects.size };
  }

  /** Why held objects cannot be used, by key. */
  get errors(): ReadonlyMap<string, string> {
    return this.problems;
  }

  /** Holds an override policy (either group, any version) or a Gatekeeper mutator; returns why it cannot be used, if so. */
  upsert(o: unknown): string | undefined {
    const ref = refOf(o);
    const key = keyOf(ref.apiVersion, ref.kind, ref.namespace, ref.name);
    this.problems.delete(key);
    this.unusable.delete(key);
    const inputs = sortInputs([o]);
    this.catalog = undefined;
    this.mutators = undefined;
    this.rulesCache = newRulesCache();
    this.policies.delete(key);
    this.mutatorObjects.delete(key);
    if (inputs.errors.length > 0) {
      const message = inputs.errors.map((e) => e.message).join('; ');
      this.problems.set(key, message);
      if (isMutator(o)) this.unusable.set(key, { object: o as JsonObject, problem: message });
      return message;
    }
    if (inputs.overrides.length > 0) this.policies.set(key, o as JsonObject);
    else if (inputs.mutators.length > 0) this.mutatorObjects.set(key, o as JsonObject);
    else return `${ref.kind} is not an override policy or a Gatekeeper mutator`;
    return undefined;
  }

  remove(ref: { apiVersion: string; kind: string; namespace?: string | undefined; name: string }): void {
    const key = keyOf(ref.apiVersion, ref.kind, ref.namespace, ref.name);
    this.problems.delete(key);
    this.unusable.delete(key);
    if (this.policies.delete(key) || this.mutatorObjects.delete(key)) {
      this.catalog = undefined;
      this.mutators = undefined;
      this.rulesCache = newRulesCache();
    }
  }

  private build(): { catalog: OverrideCatalog; mutators: Mutator[] } {
    if (!this.catalog || !this.mutators) {
      const inputs = sortInputs([...this.policies.values(), ...this.mutatorObjects.values()]);
      this.catalog = new OverrideCatalog(inputs.overrides);
      this.mutators = inputs.mutators;
    }
    return { catalog: this.catalog, mutators: this.mutators };
  }

  /** The object as this cluster admits it. Throws AdmissionOverrideError when a rule fails. */
  admit(req: AdmitRequest): AdmitResult {
    if (!isObject(req.object)) throw new AdmissionOverrideError('the object is not a JSON object');
    const input = req.object;
    const annotations = obj(obj(input.metadata)?.annotations);
    const mark = parseMark(annotations ? str(annotations[ADMITTED_DIGEST_ANNOTATION]) : undefined);
    if (mark && mark.digest === admittedDigest(input))
      return { object: cloneJson(input), changed: false, rules: [], mutators: [], changes: [], warnings: [] };
    // Called again in the same admission request (reinvocation after another webhook changed the
    // object): the appending rules already ran; the others are applied again so the override holds.
    const reinvoked = mark !== undefined && req.requestUid !== undefined && mark.request === req.requestUid;

    const first = this.apply(input, req, reinvoked);
    if (!first.changed || (!first.mayRepeat && !reinvoked)) return first.result;
    // Would a second admission change the output again? Then mark it, so it does not.
    const again = reinvoked ? first : this.apply(first.result.object, { ...req, explain: false }, false);
    if (again.result.changed) {
      const out = first.result.object;
      const meta = obj(out.metadata) ?? (out.metadata = {});
      const ann = obj(meta.annotations) ?? (meta.annotations = {});
      ann[ADMITTED_DIGEST_ANNOTATION] = formatMark(admittedDigest(out), req.requestUid);
    }
    return first.result;
  }

  private rulesFor(t: Template, catalog: OverrideCatalog): readonly OverrideRule[] {
    if (Object.keys(t.labels).length > 32) return catalog.rulesFor(t);
    const key = `${t.ref.apiVersion}\u0000${t.ref.kind}\u0000${t.ref.namespace ?? ''}\u0000${t.ref.name}\u0000${JSON.stringify(t.labels)}`;
    const hit = this.rulesCache.get(key);
    if (hit) return hit;
    const rules = catalog.rulesFor(t);
    this.rulesCache.set(key, rules);
    return rules;
  }

  private apply(
    input: JsonObject,
    req: AdmitRequest,
    skipRepeatable: boolean,
  ): { result: AdmitResult; changed: boolean; mayRepeat: boolean } {
    const { catalog, mutators } = this.build();
    const ref = refOf(input);
    if (isClusterScoped(ref.kind)) delete ref.namespace;
    else ref.namespace ??= 'default';
    const template: Template = { ref, labels: stringMap(obj(input.metadata)?.labels), object: input, index: 0 };
    const changes: Change[] | undefined = req.explain ? [] : undefined;
    let doc: unknown = cloneJson(input);
    let rules: AppliedRule[];
    let mayRepeat = false;
    try {
      const all = this.rulesFor(template, catalog);
      mayRepeat = all.some((r) => ruleActsOn(r, req.operation) && ruleMayRepeat(r));
      const candidates = skipRepeatable ? all.map(withoutRepeatable) : all;
      const out = overrideObject(doc, ref.kind, this.cluster, candidates, req.operation, changes);
      doc = out.doc;
      rules = out.applied;
    } catch (err: unknown) {
      throw new AdmissionOverrideError(err instanceof Error ? err.message : String(err), { cause: err });
    }
    if (!isObject(doc))
      throw new AdmissionOverrideError('the overrides replaced the object with something that is not an object');
    const ns = template.ref.namespace;
    const namespace = ns === undefined ? undefined : { name: ns, labels: req.namespaceLabels };
    let gk: { applied: string[]; warnings: string[] };
    try {
      gk = admitMutators(doc, mutators, this.unusable.values(), namespace, req.operation, changes);
    } catch (err: unknown) {
      if (!(err instanceof MutationError)) throw err;
      throw new AdmissionOverrideError(`Gatekeeper mutation failed: ${err.message}`, { cause: err });
    }
    const changed = !jsonEqual(doc, input);
    return {
      result: { object: doc, changed, rules, mutators: gk.applied, changes: changes ?? [], warnings: gk.warnings },
      changed,
      mayRepeat,
    };
  }
}

function keyOf(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return `${group}/${kind}/${namespace ?? ''}/${name}`;
}
