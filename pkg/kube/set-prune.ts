// Pruning one member's ApplySet for the command line's applier: the set's objects (its part-of label) of
// the kinds and namespaces recorded or applied, that the input no longer names. Nothing without the label
// is ever deleted; each deletion carries the object's uid as a precondition (delivery.ts).

import { PART_OF_LABEL, parseGroupKind } from './applyset.js';
import type { ApplyMode } from './applier-types.js';
import type { RunLog } from './applier-run.js';
import { apiError, type KubeClient } from './client.js';
import { CRD_GROUP } from './crd-wait.js';
import type { DeliveryCore, LiveMeta } from './delivery.js';
import { resourcePath, type Discovery, type ResourceInfo } from './discovery.js';
import { TransportError, UnknownKindError } from './errors.js';
import { ownString, withoutServerFields, type JsonObject, type ObjectId } from './objects.js';
import type { SetListings } from './set-listing.js';

export interface PrunerOptions {
  client: KubeClient;
  core: DeliveryCore;
  discovery: Discovery;
  listings: SetListings;
  log: RunLog;
  /** The ApplySet id. */
  id: string;
  mode: ApplyMode;
  signal: AbortSignal | undefined;
}

export function keyOf(group: string, kind: string, namespace: string | undefined, name: string): string {
  return `${group}|${kind}|${namespace ?? ''}|${name}`;
}

export class SetPruner {
  constructor(private readonly o: PrunerOptions) {}

  /**
   * Deletes (or, in dry-run/diff, reports) the set's objects of `kinds` (Group/Kind strings) in `namespaces`
   * that are not in `keep` (group|kind|namespace|name) or `keepNames` (kind|namespace|name). Namespaces and
   * CRDs go last. True when complete.
   */
  async prune(
    keep: ReadonlySet<string>,
    keepNames: ReadonlySet<string>,
    kinds: ReadonlySet<string>,
    namespaces: ReadonlySet<string>,
  ): Promise<boolean> {
    let complete = true;
    const candidates: Array<{ info: ResourceInfo; namespace: string | undefined; meta: LiveMeta }> = [];
    await Promise.all(
      [...kinds].map(async (gk) => {
        const { group, kind } = parseGroupKind(gk);
        let info: ResourceInfo;
        try {
          info = await this.o.discovery.resolveGroupKind(group, kind);
        } catch (err: unknown) {
          if (err instanceof UnknownKindError) return; // the kind is gone from the member, and its objects with it
          throw err;
        }
        const scopes = info.namespaced ? [...namespaces] : [undefined];
        await Promise.all(
          scopes.map(async (ns) => {
            try {
              const listing = await this.o.listings.get(info, ns, true);
              for (const meta of listing.items.values()) {
                if (ownString(meta.labels, PART_OF_LABEL) !== this.o.id || meta.deleting) continue;
                if (
                  keep.has(keyOf(info.group, info.kind, ns, meta.name)) ||
                  keepNames.has(`${info.kind}|${ns ?? ''}|${meta.name}`)
                )
                  continue;
                candidates.push({ info, namespace: ns, meta });
              }
            } catch (err: unknown) {
              if (err instanceof TransportError) throw err;
              complete = false;
              this.o.log.errors.push(`prune: ${err instanceof Error ? err.message : String(err)}`);
            }
          }),
        );
      }),
    );
    const order = (c: { info: ResourceInfo }) =>
      c.info.group === CRD_GROUP && c.info.kind === 'CustomResourceDefinition'
        ? 1
        : c.info.group === '' && c.info.kind === 'Namespace'
          ? 2
          : 0;
    for (const stage of [0, 1, 2]) {
      const now = candidates.filter((c) => order(c) === stage);
      const outcomes = await Promise.all(now.map((c) => this.pruneOne(c.info, c.namespace, c.meta)));
      if (outcomes.includes(false)) complete = false;
    }
    return complete;
  }

  private async pruneOne(info: ResourceInfo, namespace: string | undefined, meta: LiveMeta): Promise<boolean> {
    const id: ObjectId = {
      apiVersion: info.group ? `${info.group}/${info.version}` : info.version,
      kind: info.kind,
      name: meta.name,
    };
    if (namespace) id.namespace = namespace;
    const path = resourcePath(info, namespace, meta.name);
    try {
      this.o.log.checkGoing();
      if (this.o.mode === 'diff') {
        const res = await this.o.client.request<JsonObject>({ method: 'GET', path });
        if (res.status === 404) return true;
        if (res.status >= 400) throw apiError(res);
        this.o.log.emit({
          ...id,
          action: 'pruned',
          live: res.body ? withoutServerFields(res.body) : null,
          after: null,
        });
        return true;
      }
      // Gone, or replaced meanwhile by an object that is not this one: nothing of the set's to delete.
      const { result } = await this.o.core.remove(info, namespace, meta.name, meta.uid, {
        dryRun: this.o.mode === 'dry-run',
        signal: this.o.signal,
      });
      if (result === 'deleted') this.o.log.emit({ ...id, action: 'pruned' });
      return true;
    } catch (err: unknown) {
      if (err instanceof TransportError) this.o.log.markUnreachable(err);
      const f = this.o.log.failure(err);
      this.o.log.emit({ ...id, action: 'failed', ...f, message: f.unreachable ? f.message : `prune: ${f.message}` });
      return false;
    }
  }
}
