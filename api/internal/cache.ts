// A parse cache whose memory is bounded whatever the input: entries are charged by key length, keys
// longer than `maxKeyLength` are never stored (parsing them again is linear, and keeping them is what
// lets a stream of large one-off inputs grow the heap), and the oldest entries go first when the entry
// count or the total charge would pass its limit. Eviction is by insertion order, not by use: a hit costs
// one Map lookup (reordering on every hit costs more than the parses it saves on the render path), and an
// evicted entry that is still in use is simply parsed and stored again.

export interface CacheLimits {
  /** Most entries kept. */
  maxEntries: number;
  /** Longest key (in UTF-16 code units) that is stored at all. */
  maxKeyLength: number;
  /** Most key code units kept in total, counting `ENTRY_OVERHEAD` per entry on top of the key. */
  maxTotalLength: number;
}

/** What one entry costs besides its key, in the same unit: the map slot and the parsed value's objects. */
export const ENTRY_OVERHEAD = 64;

export class BoundedCache<V> {
  private readonly entries = new Map<string, V>();
  private total = 0;

  constructor(private readonly limits: CacheLimits) {}

  get(key: string): V | undefined {
    return this.entries.get(key);
  }

  /** Stores the entry unless its key is too long to be worth keeping; evicts the oldest entries to fit. */
  set(key: string, value: V): void {
    if (key.length > this.limits.maxKeyLength) return;
    const cost = key.length + ENTRY_OVERHEAD;
    if (this.entries.has(key)) {
      this.entries.delete(key);
      this.total -= cost;
    }
    while (
      this.entries.size > 0 &&
      (this.entries.size >= this.limits.maxEntries || this.total + cost > this.limits.maxTotalLength)
    ) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
      this.total -= oldest.length + ENTRY_OVERHEAD;
    }
    if (cost > this.limits.maxTotalLength || this.limits.maxEntries < 1) return;
    this.entries.set(key, value);
    this.total += cost;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Total charge of the stored entries (keys plus ENTRY_OVERHEAD each). */
  get totalLength(): number {
    return this.total;
  }
}
