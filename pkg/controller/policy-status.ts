// What the controller says on each policy's status: how many templates it claims (propagation policies) or
// overrides (override policies), how many of those fail to render and why, and whether the controller
// refused the policy itself. Kept from the reconciles' results, one template at a time, so the cost of
// a reconcile does not grow with the number of templates; a policy's status is computed when it is
// written (PolicyStatusBook.statusOf), from counters and the first errors only.
//
// Which render errors count on which policy:
//   - a propagation policy: every error of a template it claims, whatever caused it (a user looking at the
//     policy wants to know that what it propagates does not arrive);
//   - an override policy: the errors of its own rules (the engine names the rule's policy).
// An override policy "overrides" a template when one of its rules applied to at least one cluster's copy,
// or failed there.

import type { DetailedRenderError } from '../engine/render.js';
import type { PolicyRef } from '../engine/types.js';

/** How many failing templates a Ready condition names; the count says how many there are. */
const NAMED_FAILURES = 3;
const MAX_FAILURE_TEXT = 300;
const MAX_MESSAGE = 1_024;

export const policyKey = (p: PolicyRef): string => JSON.stringify([p.kind, p.namespace ?? '', p.name]);

export interface PolicyCondition {
  type: 'Ready';
  status: 'True' | 'False';
  reason: 'Claimed' | 'Overriding' | 'NoTemplates' | 'RenderErrors' | 'Invalid';
  message: string;
}

export interface PolicyStatus {
  templates: number;
  failedTemplates: number;
  condition: PolicyCondition;
}

/** One reconcile's answer for a template, as the book reads it. */
export interface TemplateOutcome {
  /** The claiming propagation policy; absent when none claims the template. */
  policy?: PolicyRef | undefined;
  /** Every override policy applied to a cluster's copy (placements[].overrides). */
  overrides: readonly PolicyRef[];
  errors: readonly DetailedRenderError[];
}

/** What one template counts on: policy key → the first error it has against that policy ('' when none). */
type Contribution = Map<string, string>;

interface Tally {
  templates: Set<string>;
  /** Template key → its first error against this policy. */
  failed: Map<string, string>;
}

const PROPAGATION_KINDS = new Set(['PropagationPolicy', 'ClusterPropagationPolicy']);

export class PolicyStatusBook {
  private readonly byTemplate = new Map<string, Contribution>();
  private readonly byPolicy = new Map<string, Tally>();
  /** Policy key → why the controller does not use it. */
  private readonly refused = new Map<string, string>();
  private readonly dirtyKeys = new Set<string>();

  /** Records a template's latest outcome; `label` names it in messages (e.g. `Deployment shop/web`). */
  record(templateKey: string, label: string, outcome: TemplateOutcome): void {
    const to = new Map<string, string>();
    const firstError = outcome.errors[0];
    if (outcome.policy) to.set(policyKey(outcome.policy), firstError ? failureText(label, firstError) : '');
    for (const o of outcome.overrides) {
      const k = policyKey(o);
      if (!to.has(k)) to.set(k, '');
    }
    for (const e of outcome.errors) {
      if (!e.policy || PROPAGATION_KINDS.has(e.policy.kind)) continue;
      const k = policyKey(e.policy);
      if (!to.get(k)) to.set(k, failureText(label, e));
    }
    // A template no policy claims or overrides counts nowhere: nothing is kept for it.
    this.replace(templateKey, to.size > 0 ? to : undefined);
  }

  /** The template is gone (deleted, or no longer held): it counts nowhere. */
  forget(templateKey: string): void {
    this.replace(templateKey, undefined);
  }

  /** The controller refused the policy (it cannot be used): its status says why. */
  refuse(p: PolicyRef, message: string): void {
    const k = policyKey(p);
    if (this.refused.get(k) === message) return;
    this.refused.set(k, message);
    this.dirtyKeys.add(k);
  }

  /** The policy is used (again). */
  accept(p: PolicyRef): void {
    const k = policyKey(p);
    if (this.refused.delete(k)) this.dirtyKeys.add(k);
  }

  /** The policy was deleted: nothing is written for it any more (its templates are recorded again as they are reconciled). */
  drop(p: PolicyRef): void {
    const k = policyKey(p);
    this.refused.delete(k);
    this.dirtyKeys.delete(k);
  }

  /** Marks a policy to be written even if no count changed (a new generation to observe). */
  touch(p: PolicyRef): void {
    this.dirtyKeys.add(policyKey(p));
  }

  /** The policies whose status may have changed since the last call, emptied. */
  takeDirty(): string[] {
    const keys = [...this.dirtyKeys];
    this.dirtyKeys.clear();
    return keys;
  }

  statusOf(key: string): PolicyStatus {
    const kind = parseKey(key).kind;
    const propagation = PROPAGATION_KINDS.has(kind);
    const refused = this.refused.get(key);
    const tally = this.byPolicy.get(key);
    const templates = tally?.templates.size ?? 0;
    const failedTemplates = tally?.failed.size ?? 0;
    if (refused !== undefined) {
      return {
        templates,
        failedTemplates,
        condition: {
          type: 'Ready',
          status: 'False',
          reason: 'Invalid',
          message: cut(`not used: ${refused}`, MAX_MESSAGE),
        },
      };
    }
    if (tally && failedTemplates > 0) {
      const named = [...tally.failed.values()].slice(0, NAMED_FAILURES);
      const more = failedTemplates - named.length;
      const message = `${failedTemplates} of ${templates} template${templates === 1 ? '' : 's'} cannot be rendered: ${named.join('; ')}${more > 0 ? `; and ${more} more` : ''}`;
      return {
        templates,
        failedTemplates,
        condition: { type: 'Ready', status: 'False', reason: 'RenderErrors', message: cut(message, MAX_MESSAGE) },
      };
    }
    const verb = propagation ? 'claims' : 'overrides';
    if (templates === 0)
      return {
        templates,
        failedTemplates,
        condition: { type: 'Ready', status: 'True', reason: 'NoTemplates', message: `${verb} no template` },
      };
    return {
      templates,
      failedTemplates,
      condition: {
        type: 'Ready',
        status: 'True',
        reason: propagation ? 'Claimed' : 'Overriding',
        message: `${verb} ${templates} template${templates === 1 ? '' : 's'}; all render`,
      },
    };
  }

  private replace(templateKey: string, next: Contribution | undefined): void {
    const before = this.byTemplate.get(templateKey);
    if (before) {
      for (const [k, error] of before) {
        if (next?.get(k) === error) continue;
        const t = this.byPolicy.get(k);
        if (!t) continue;
        t.templates.delete(templateKey);
        t.failed.delete(templateKey);
        if (t.templates.size === 0) this.byPolicy.delete(k);
        this.dirtyKeys.add(k);
      }
    }
    if (!next) {
      this.byTemplate.delete(templateKey);
      return;
    }
    this.byTemplate.set(templateKey, next);
    for (const [k, error] of next) {
      if (before?.get(k) === error) continue;
      let t = this.byPolicy.get(k);
      if (!t) this.byPolicy.set(k, (t = { templates: new Set(), failed: new Map() }));
      t.templates.add(templateKey);
      if (error) t.failed.set(templateKey, error);
      this.dirtyKeys.add(k);
    }
  }
}

export function parseKey(key: string): PolicyRef {
  const [kind, namespace, name] = JSON.parse(key) as [string, string, string];
  return { kind, name, ...(namespace ? { namespace } : {}) };
}

function failureText(label: string, e: DetailedRenderError): string {
  return cut(`${label}${e.cluster ? ` on ${e.cluster}` : ''}: ${e.message}`, MAX_FAILURE_TEXT);
}

function cut(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
