// A template's cleanup: deleted (its deletionTimestamp set while it carries the controller's finalizer),
// or a dependency no workload requires any more and no policy claims ('unneeded'). Its objects go from
// every member this process works on (or are released, when the template is deleted and its policy says
// preserveResourcesOnDeletion); a pull cluster's agent, or sharded the replica owning a member, does its
// own and clears its entry, which is waited for; then the binding, the Works and the finalizer go.
// Unreachable members hold the finalizer for cleanupTimeoutMs, retried every RETRY_UNREACHABLE_MS.

import { refOf } from '../engine/inputs.js';
import type { JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import type { BindingWriter } from './binding-writer.js';
import type { TemplateClaims } from './claims.js';
import type { EventRecorder } from './events.js';
import { RETRY_UNREACHABLE_MS, type MemberWork } from './execute.js';
import { describeTemplate, type TemplateIdentity } from './ownership.js';
import type { Reach } from './reach.js';

export interface CleanupOptions {
  reach: Reach;
  work: MemberWork;
  bindings: BindingWriter;
  claims: TemplateClaims;
  events: EventRecorder;
  logger: Logger;
  /** How long a deleted template waits for unreachable members before its finalizer is released. */
  cleanupTimeoutMs: number;
}

/** How a cleanup ended: to be tried again; this replica's part done (sharded, not the coordinator); all done. */
export type CleanupOutcome = { requeueAfter: number } | 'own-done' | 'done';

export class TemplateCleanup {
  /** Template key → since when its cleanup has waited for members. */
  private readonly since = new Map<string, number>();
  /** Template key → the uid of the deleted template whose finalizer this process released. */
  private readonly released = new Map<string, string>();

  constructor(private readonly o: CleanupOptions) {}

  async run(
    key: string,
    template: JsonObject,
    t: TemplateIdentity,
    signal: AbortSignal,
    why: 'deleted' | 'unneeded',
    preserve: boolean,
  ): Promise<CleanupOutcome> {
    // Released already: the template seen again before the hub's event of that release reached the cache.
    if (why === 'deleted' && this.released.get(key) === t.uid) return 'done';
    const { reach, logger: log } = this.o;
    const unreachable: string[] = [];
    const removedFrom: string[] = [];
    const ref = refOf(template);
    const reason =
      why === 'deleted' ? 'the template is being deleted' : 'no workload requires it any more and no policy claims it';
    await Promise.all(
      reach.ownMembers().map(async (m) => {
        // An apply of an earlier plan still in flight there lands first (the plan is gone: nothing new starts).
        await this.o.work.settled(m.name, key);
        const gone = preserve
          ? await this.o.work.release(m, t, ref, signal)
          : await this.o.work.remove(m, t, ref, signal);
        if (gone === 'removed') removedFrom.push(m.name);
        else if (gone !== 'absent') unreachable.push(`${m.name}: ${gone.error}`);
      }),
    );
    if (!reach.coordinator()) {
      // Sharded: this replica's members are clean; its entries go, and the coordinator, which waits for
      // them, releases the finalizer.
      if (unreachable.length > 0) return { requeueAfter: RETRY_UNREACHABLE_MS };
      await this.o.bindings.putEntries(t, []);
      return 'own-done';
    }
    // A pull cluster's agent removes its copy, then clears its Work's status (sharded, another replica
    // removes its entry from the binding): wait for that.
    if (why === 'deleted')
      for (const [cluster] of reach.entries(t))
        if (reach.remote(cluster))
          unreachable.push(
            reach.registry.isPull(cluster)
              ? `${cluster}: its agent has not removed its copy yet (pull mode)`
              : `${cluster}: the replica working on it has not removed its copy yet (sharded)`,
          );
    if (unreachable.length > 0) {
      const since = this.since.get(key) ?? Date.now();
      this.since.set(key, since);
      if (Date.now() - since < this.o.cleanupTimeoutMs) {
        log.warn('members not cleaned yet', { template: describeTemplate(t), reason, members: unreachable });
        return { requeueAfter: RETRY_UNREACHABLE_MS };
      }
      log.error('releasing the finalizer although some members could not be cleaned', {
        template: describeTemplate(t),
        reason,
        members: unreachable,
        waitedMs: Date.now() - since,
      });
    }
    this.since.delete(key);
    if (removedFrom.length > 0 && preserve)
      this.o.events.record(
        t,
        'Normal',
        'Preserved',
        `left on ${removedFrom.join(', ')} without Flotilla's ownership labels: the template is being deleted and its policy says preserveResourcesOnDeletion`,
      );
    else if (removedFrom.length > 0)
      this.o.events.record(t, 'Normal', 'Pruned', `removed from ${removedFrom.join(', ')}: ${reason}`);
    await this.o.bindings.delete(t);
    await this.o.claims.releaseFinalizer(ref, template);
    if (why === 'deleted') this.released.set(key, t.uid);
    log.info(
      preserve
        ? 'template deleted; its objects stay on the members (preserveResourcesOnDeletion)'
        : `removed from every member: ${reason}`,
      { template: describeTemplate(t), members: removedFrom },
    );
    return 'done';
  }

  /** The template is gone from the hub. */
  forget(key: string): void {
    this.since.delete(key);
    this.released.delete(key);
  }
}
