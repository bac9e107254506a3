// The command line's OwnerMark (delivery.ts): an object is ours when it is in our ApplySet.

import { PART_OF_LABEL } from './applyset.js';
import { createdFor, type OwnerMark } from './delivery.js';
import { isObject, metadataOf, ownString } from './objects.js';

/**
 * The command line's mark: membership of the ApplySet `id`. A namespace the applier created for the set's
 * objects (CREATED_BY_LABEL=<id>) is not in the set — pruning a namespace deletes everything in it — but
 * when the input later names it, it joins the set without a conflict: it was this set's doing.
 */
export function applySetMark(id: string, o: { namespaceAdoption?: boolean } = {}): OwnerMark {
  const mark: OwnerMark = {
    namespaceMark: id,
    ours: 'part of this apply set',
    mark(object) {
      const meta = metadataOf(object);
      const labels = isObject(meta.labels) ? meta.labels : (meta.labels = {});
      labels[PART_OF_LABEL] = id;
    },
    owns: (live) =>
      ownString(live.labels, PART_OF_LABEL) === id || (o.namespaceAdoption === true && createdFor(live, mark)),
  };
  return mark;
}
