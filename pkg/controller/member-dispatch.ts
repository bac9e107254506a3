// Which members a template's new plan is handed to. A plan that gives every member the same step as the
// last one (the same object to apply, keep, remove or leave suspended, under the same conflictResolution)
// keeps the last plan's version and goes only to the members that need to look again: one whose copy
// changed there (its owned-object watch: drift, status), one whose last report is not a success, and every
// member after a resync or a member's (re)connection (`all`). So a template reconciled again for what does
// not concern its members (its own claim record, a Cluster's label, the echo of an apply on one member)
// is not applied again on the others, whose watch caches may not show that apply yet.

import { createHash } from 'node:crypto';

import type { MemberReport } from './execute.js';
import { stepFor, type MemberStep, type TemplatePlan } from './plan.js';

/** A step as the digest of a plan's steps reads it: an apply by its copy's applied hash when the plan has it, not its whole object again. */
function stepKey(s: MemberStep): unknown {
  return s.action === 'apply' && s.hash !== undefined ? ['apply', s.hash] : s;
}

export class MemberDispatch {
  /** Template key → the digest of its last plan's steps, by member. */
  private readonly steps = new Map<string, string>();
  /** Templates whose next plan goes to every member. */
  private readonly full = new Set<string>();
  /** Template key → the members whose copy changed since its last plan. */
  private readonly touched = new Map<string, Set<string>>();

  /** The next plan of `key` goes to every member. */
  everyMember(key: string): void {
    this.full.add(key);
  }

  /** An object of template `key` changed on member `member`: its next plan goes there. */
  changedOn(member: string, key: string): void {
    let members = this.touched.get(key);
    if (!members) this.touched.set(key, (members = new Set<string>()));
    members.add(member);
  }

  /**
   * The members plan `p` goes to, out of `own`; when its steps are those of `prev`, `p` takes `prev`'s
   * version (the members' reports on it stay current).
   */
  targets<M extends { name: string }>(
    key: string,
    p: TemplatePlan,
    prev: TemplatePlan | undefined,
    own: readonly M[],
    reports: ReadonlyMap<string, MemberReport> | undefined,
  ): M[] {
    const digest = createHash('sha256')
      .update(JSON.stringify([p.conflictResolution, own.map((m) => [m.name, stepKey(stepFor(p, m.name))])]))
      .digest('base64');
    const same = prev !== undefined && !this.full.has(key) && this.steps.get(key) === digest;
    const touched = this.touched.get(key);
    this.steps.set(key, digest);
    this.full.delete(key);
    this.touched.delete(key);
    if (!same) return [...own];
    p.version = prev.version;
    return own.filter((m) => {
      const r = reports?.get(m.name);
      const done = r?.version === prev.version && (r.status.state === 'Applied' || r.status.state === 'Suspended');
      return !done || touched?.has(m.name) === true;
    });
  }

  forget(key: string): void {
    this.steps.delete(key);
    this.full.delete(key);
    this.touched.delete(key);
  }
}
