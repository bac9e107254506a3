// Template kinds the hub keeps watching although no policy selects them any more: a template that was
// claimed carries the finalizer flotilla.io/member-cleanup, keeps its copies on the members after its
// policy goes (Karmada's rule), and must still be seen when it is deleted, or it stays Terminating with
// its copies left behind. So a kind stays watched while any object of it in the informer's cache carries
// the finalizer, and after a restart the kinds the hub's ResourceBindings name are watched until their
// informers have listed once (a binding exists for every template that holds the finalizer).

import type { KubeClient } from '../kube/client.js';
import { listPages } from '../kube/list-pages.js';
import { isObject, ownString, type JsonObject } from '../kube/objects.js';
import type { Logger } from '../runtime/log.js';
import { FINALIZER } from './ownership.js';

export interface KindRef {
  apiVersion: string;
  kind: string;
}

/** `apiVersion/kind`: how the controller names a template kind. */
export function kindId(r: KindRef): string {
  return `${r.apiVersion}/${r.kind}`;
}

/** Whether an object carries the member-cleanup finalizer. */
export function holdsFinalizer(o: JsonObject): boolean {
  const meta = isObject(o.metadata) ? o.metadata : undefined;
  return Array.isArray(meta?.finalizers) && meta.finalizers.includes(FINALIZER);
}

function anyHoldsFinalizer(objects: Iterable<JsonObject>): boolean {
  for (const o of objects) if (holdsFinalizer(o)) return true;
  return false;
}

/** The template kinds some ResourceBinding names (`spec.resource`), by kindId. */
export function boundKinds(bindings: Iterable<unknown>): Map<string, KindRef> {
  const out = new Map<string, KindRef>();
  for (const b of bindings) {
    const spec = isObject(b) && isObject(b.spec) ? b.spec : undefined;
    const resource = spec && isObject(spec.resource) ? spec.resource : undefined;
    const apiVersion = resource ? ownString(resource, 'apiVersion') : undefined;
    const kind = resource ? ownString(resource, 'kind') : undefined;
    if (apiVersion && kind) out.set(kindId({ apiVersion, kind }), { apiVersion, kind });
  }
  return out;
}

const PAGE = 500;
const MAX_PAGES = 200;

/** Lists the hub's ResourceBindings (paginated, bounded) and returns the template kinds they name. */
export async function listBoundKinds(
  hub: KubeClient,
  path: string,
  signal: AbortSignal,
): Promise<Map<string, KindRef>> {
  const { items } = await listPages(hub, path, { signal, pageSize: PAGE, maxPages: MAX_PAGES });
  return boundKinds(items);
}

/**
 * The kinds watched for their finalizers only. `add` puts them among the kinds to watch; `keep` says
 * whether a kind no policy selects stays watched; `releasing` whether a template event may let one go.
 */
export class HeldKinds {
  /** Named by a binding at start: watched at least until their informer has listed once. */
  private readonly seeded = new Map<string, KindRef>();
  /** Watched now only because of their finalizers. */
  private readonly held = new Set<string>();

  seed(kinds: ReadonlyMap<string, KindRef>): void {
    for (const [id, r] of kinds) this.seeded.set(id, r);
  }

  /** Seeds the kinds the hub's ResourceBindings name; a failed list is logged and seeds none. */
  async seedFromBindings(hub: KubeClient, path: string, signal: AbortSignal, logger: Logger): Promise<void> {
    try {
      this.seed(await listBoundKinds(hub, path, signal));
    } catch (err: unknown) {
      if (signal.aborted) return;
      logger.warn(
        'cannot list the ResourceBindings; templates of kinds no policy selects are not watched for their deletion',
        { error: err instanceof Error ? err.message : String(err) },
      );
    }
  }

  /** Adds the seeded kinds no policy selects to `wanted`, and returns `wanted`. */
  add(wanted: Map<string, KindRef>): Map<string, KindRef> {
    for (const [id, r] of this.seeded) if (!wanted.has(id)) wanted.set(id, r);
    return wanted;
  }

  /**
   * Whether a watched kind that no policy selects stays watched: its informer has not listed yet, or an
   * object in its cache carries the finalizer. Call with `selected` true for a kind a policy selects.
   */
  keep(id: string, selected: boolean, informer: { synced: boolean; values(): Iterable<JsonObject> }): boolean {
    if (selected) {
      this.held.delete(id);
      this.seeded.delete(id);
      return true;
    }
    const keep = !informer.synced || anyHoldsFinalizer(informer.values());
    if (keep) this.held.add(id);
    else {
      this.held.delete(id);
      this.seeded.delete(id);
    }
    return keep;
  }

  /** Whether a template event of this kind may release a kind held for its finalizers. */
  releasing(o: JsonObject): boolean {
    const apiVersion = ownString(o, 'apiVersion');
    const kind = ownString(o, 'kind');
    return apiVersion !== undefined && kind !== undefined && this.held.has(kindId({ apiVersion, kind }));
  }
}
