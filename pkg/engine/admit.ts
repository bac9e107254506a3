// Overrides at admission time: one object, admitted in one cluster, gets the override rules that select
// it and target this cluster (and act on the admission's operation), then the Gatekeeper mutators that
// match it. The same functions as rendering do the work (overrideObject, applyMutators), so for a CREATE
// the answer is the one `render --cluster` gives for the same template.
//
// Idempotence: admitting an object again (the apiserver's reinvocation after another webhook changed it,
// or an UPDATE of an object the route admitted before) gives each override once. Most overriders are
// idempotent by nature (set a label, replace an image); the ones that append record what they added
// (additions.ts), and an addition that is recorded and still there is not made again.

import { cloneJson, isObject, jsonEqual, obj, stringMap, type JsonObject } from './json.js';
import { OverrideCatalog, type AdmissionOperation, type OverrideRule } from './overrides.js';
import { AdditionLedger, mergeAdditions, readAdditions, writeAdditions, type AdditionRecord } from './additions.js';
import { BoundedCache } from '../../api/internal/cache.js';
import { overrideObject } from './copy.js';
import { admitMutators, MutationError, type UnusableMutator } from './admit-mutators.js';
import { isClusterScoped, refOf, sortInputs, type Template } from './inputs.js';
import { isMutator, type Mutator } from './gatekeeper.js';
import type { AppliedRule, Change, ClusterInfo } from './types.js';
import { errorClass } from '../../api/internal/errors.js';

export class AdmissionOverrideError extends errorClass('AdmissionOverrideError', 'ADMISSION_OVERRIDE') {}

export interface AdmitRequest {
  object: unknown;
  operation: AdmissionOperation;
  /**
   * UPDATE: the object as stored (the AdmissionReview's oldObject). Its record of what the overrides
   * added counts too, so an UPDATE whose new object lost the record (a replace from a file) adds nothing
   * that is still there.
   */
  oldObject?: unknown;
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
    let before: AdditionRecord;
    try {
      before = readAdditions(req.object);
    } catch (err: unknown) {
      throw new AdmissionOverrideError(err instanceof Error ? err.message : String(err), { cause: err });
    }
    if (req.operation === 'UPDATE' && req.oldObject !== undefined) {
      let stored: AdditionRecord;
      try {
        stored = readAdditions(req.oldObject);
      } catch {
        stored = undefined; // the stored object's record is only a fallback; the new object's is what counts
      }
      before = mergeAdditions(before, stored);
    }
    return this.apply(req.object, req, new AdditionLedger(before));
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

  private apply(input: JsonObject, req: AdmitRequest, additions: AdditionLedger): AdmitResult {
    const { catalog, mutators } = this.build();
    const ref = refOf(input);
    if (isClusterScoped(ref.kind)) delete ref.namespace;
    else ref.namespace ??= 'default';
    const template: Template = { ref, labels: stringMap(obj(input.metadata)?.labels), object: input, index: 0 };
    const changes: Change[] | undefined = req.explain ? [] : undefined;
    let doc: unknown = cloneJson(input);
    let rules: AppliedRule[];
    try {
      const all = this.rulesFor(template, catalog);
      const out = overrideObject(doc, ref.kind, this.cluster, all, req.operation, changes, additions);
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
    writeAdditions(doc, additions.digests);
    return {
      object: doc,
      changed: !jsonEqual(doc, input),
      rules,
      mutators: gk.applied,
      changes: changes ?? [],
      warnings: gk.warnings,
    };
  }
}

function keyOf(apiVersion: string, kind: string, namespace: string | undefined, name: string): string {
  const group = apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
  return `${group}/${kind}/${namespace ?? ''}/${name}`;
}
