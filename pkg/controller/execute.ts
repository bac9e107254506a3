// execute(): one member's part of a template's plan, carried out on that member alone. Each member has
// its own work queue of template keys (work is queued per template and member), so a member that answers
// slowly, or not at all, holds back no other member: its queue grows while the others drain.
//
// A step's outcome is reported back (the binding's line for that cluster), with the plan's version, so a
// report for an older plan is never shown as the current one. Failures requeue the pair: an unreachable
// member after RETRY_UNREACHABLE_MS, an apiserver error with the queue's backoff.

import type { ObjectRef } from '../engine/types.js';
import type { JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import { WorkQueue } from '../runtime/queue.js';
import type { ClusterStatus } from '../../api/work/v1alpha1/types.js';
import type { EventRecorder } from './events.js';
import type { Member } from './member.js';
import { describeTemplate, type TemplateIdentity } from './ownership.js';
import { stepFor, type TemplatePlan } from './plan.js';
import { SharedValues } from './shared-values.js';

/** A failed member is tried again after this long even when nothing changed. */
export const RETRY_UNREACHABLE_MS = 5_000;

export interface MemberReport {
  version: number;
  status: ClusterStatus;
  /** The member copy as last seen (Applied only): for the template's aggregated status. */
  observed?: { generation?: number; status?: JsonObject };
}

export interface ExecuteOptions {
  /** The current plan of a template, or undefined when it has none (not claimed, deleted). */
  plan(key: string): TemplatePlan | undefined;
  /** The template's own reference, for removal (the object under its name). */
  ref(key: string): ObjectRef | undefined;
  /** A member reported on a template. */
  report(key: string, member: string, r: MemberReport): void;
  events: EventRecorder;
  logger: Logger;
  concurrency: number;
  onMemberResult?: ((member: string, state: string) => void) | undefined;
}

/** The per-member work queues. */
export class MemberWork {
  private readonly queues = new Map<string, { queue: WorkQueue; stop: AbortController; member: Member }>();
  /** Equal report parts (status, observed) across templates, shared: reports are never changed in place. */
  private readonly parts = new SharedValues();
  /** `member template-key` → its execution in flight. */
  private readonly running = new Map<string, Promise<unknown>>();
  private signal: AbortSignal = new AbortController().signal;

  constructor(private readonly o: ExecuteOptions) {}

  start(signal: AbortSignal): void {
    this.signal = signal;
  }

  /** Queues template `key` on every member given. */
  add(key: string, members: Iterable<Member>): void {
    for (const m of members) this.queueOf(m).add(key);
  }

  /**
   * Resolves once member `member`'s execution of template `key` in flight, if any, has ended: a cleanup
   * waits for an apply of an earlier plan that the member has not answered yet (it would otherwise land
   * after the cleanup looked, and stay).
   */
  async settled(member: string, key: string): Promise<void> {
    await this.running.get(`${member} ${key}`)?.catch(() => undefined);
  }

  /** Keys waiting, over every member. */
  get depth(): number {
    let n = 0;
    for (const q of this.queues.values()) n += q.queue.depth;
    return n;
  }

  /** Stops and forgets the queue of a member that went away. */
  drop(name: string): void {
    this.queues.get(name)?.stop.abort();
    this.queues.delete(name);
  }

  private queueOf(m: Member): WorkQueue {
    const current = this.queues.get(m.name);
    if (current) {
      current.member = m;
      return current.queue;
    }
    const stop = new AbortController();
    const entry: { member: Member; stop: AbortController; queue: WorkQueue } = {
      member: m,
      stop,
      queue: new WorkQueue<string>(
        { reconcile: (key: string, signal: AbortSignal) => this.tracked(entry.member, key, signal) },
        {
          concurrency: this.o.concurrency,
          onResult: (e) => {
            if (e.outcome === 'error')
              this.o.logger.warn('member work failed; retrying with backoff', {
                member: m.name,
                template: e.key,
                error: String(e.error),
              });
          },
        },
      ),
    };
    this.queues.set(m.name, entry);
    void entry.queue.start(AbortSignal.any([this.signal, stop.signal]));
    return entry.queue;
  }

  /** execute(), known as in flight until it ends (settled()). */
  private tracked(m: Member, key: string, signal: AbortSignal): Promise<{ requeueAfter?: number } | undefined> {
    const id = `${m.name} ${key}`;
    const run = this.execute(m, key, signal);
    this.running.set(id, run);
    const forget = () => {
      if (this.running.get(id) === run) this.running.delete(id);
    };
    run.then(forget, forget);
    return run;
  }

  /** Carries out member `m`'s step of template `key`'s current plan. */
  async execute(m: Member, key: string, signal: AbortSignal): Promise<{ requeueAfter?: number } | undefined> {
    const p = this.o.plan(key);
    if (!p) return undefined;
    const step = stepFor(p, m.name);
    const report = (status: ClusterStatus, observed?: MemberReport['observed']) =>
      this.o.report(key, m.name, {
        version: p.version,
        status: this.parts.share(status),
        // A copy's status (a workload's) differs from template to template: only what carries none is shared.
        ...(observed ? { observed: observed.status === undefined ? this.parts.share(observed) : observed } : {}),
      });
    // Suspended: nothing is written there, whatever changed (the binding already says Suspended).
    if (step.action === 'suspended') return undefined;
    if (m.readiness.ready === false) {
      // Skipped; the registry queues every template again when the member is ready.
      if (step.action === 'apply')
        report({
          name: m.name,
          state: 'Unreachable',
          message: `not ready: ${m.readiness.message ?? 'its /readyz probe fails'}`,
        });
      return undefined;
    }
    if (step.action === 'keep') return undefined;
    const ref = this.o.ref(key);
    if (step.action === 'remove') {
      if (!ref) return undefined;
      const gone = await this.remove(m, p.identity, ref, signal);
      if (gone === 'absent' || gone === 'removed') {
        if (gone === 'removed')
          this.o.events.record(p.identity, 'Normal', 'Pruned', `removed from ${m.name}: no longer targeted`);
        report({ name: m.name, state: 'Applied' });
        return undefined;
      }
      report({ name: m.name, state: 'Removing', message: gone.error });
      return { requeueAfter: RETRY_UNREACHABLE_MS };
    }
    const outcome = await m.apply(step.object, p.identity, p.conflictResolution, signal, step.hash);
    this.o.onMemberResult?.(m.name, outcome.state === 'Applied' && !outcome.changed ? 'Unchanged' : outcome.state);
    this.o.logger.debug('applied', { template: describeTemplate(p.identity), cluster: m.name, state: outcome.state });
    if (outcome.state !== 'Applied') {
      report({ name: m.name, state: outcome.state, message: outcome.message });
      if (outcome.state === 'Failed')
        this.o.events.record(p.identity, 'Warning', 'ApplyFailed', `${m.name}: ${outcome.message}`);
      if (outcome.state === 'Conflict')
        this.o.events.record(p.identity, 'Warning', 'Conflict', `${m.name}: ${outcome.message}`);
      return outcome.state === 'Conflict' ? undefined : { requeueAfter: RETRY_UNREACHABLE_MS };
    }
    // An override that renames the object (or moves it) leaves its old copy: it goes.
    let retry = false;
    if (ref) {
      const gone = await this.remove(m, p.identity, ref, signal, outcome.key);
      if (gone === 'removed') {
        const text = `removed the previous copy from ${m.name}: the overrides now give the object another name or namespace`;
        this.o.events.record(p.identity, 'Normal', 'Pruned', text);
      } else if (gone !== 'absent') retry = true;
    }
    report(
      {
        name: m.name,
        state: 'Applied',
        health: outcome.health,
        ...(p.generation === undefined ? {} : { observedGeneration: p.generation }),
        ...(outcome.retained
          ? {
              replicas: outcome.retained.replicas,
              message: `spec.replicas is left as the member has it (${outcome.retained.replicas}): ${outcome.retained.why}`,
            }
          : {}),
      },
      outcome.observed,
    );
    return retry ? { requeueAfter: RETRY_UNREACHABLE_MS } : undefined;
  }

  /** Leaves the template's objects on a member, released (preserveResourcesOnDeletion): 'removed' when any was. */
  async release(
    m: Member,
    t: TemplateIdentity,
    at: ObjectRef,
    signal: AbortSignal,
  ): Promise<'removed' | 'absent' | { error: string }> {
    try {
      const released = await m.releaseAll(t, at, signal);
      if (released.length === 0) return 'absent';
      this.o.logger.info('released on a member', { template: describeTemplate(t), cluster: m.name, objects: released });
      return 'removed';
    } catch (err: unknown) {
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }

  /** Removes the template's objects from a member but the one at `keep`: 'removed' or 'absent', else why not. */
  async remove(
    m: Member,
    t: TemplateIdentity,
    at: ObjectRef,
    signal: AbortSignal,
    keep?: string,
  ): Promise<'removed' | 'absent' | { error: string }> {
    try {
      const removed = await m.removeAll(t, at, keep, signal);
      if (removed.length === 0) return 'absent';
      this.o.onMemberResult?.(m.name, 'Removed');
      this.o.logger.info('removed from a member', { template: describeTemplate(t), cluster: m.name, objects: removed });
      return 'removed';
    } catch (err: unknown) {
      this.o.onMemberResult?.(m.name, 'Failed');
      return { error: err instanceof Error ? err.message : String(err) };
    }
  }
}
