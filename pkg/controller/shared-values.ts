// Equal small values and strings shared instead of copied. A plan's cluster entries and the members' reports repeat
// a few values across templates (every member Pending, then Applied and Healthy): one object per
// template-member pair for each adds up at hundreds of clusters, one object per distinct value does not.
// A value handed out is shared: it is never changed in place. Bounded: a value whose JSON is longer than
// MAX_JSON (a long message) is not pooled, and past MAX_VALUES distinct values the pool starts again.

const MAX_VALUES = 4096;
const MAX_JSON = 512;
const MAX_STRINGS = 65_536;

export class SharedValues {
  private readonly values = new Map<string, unknown>();

  /** `value`, or an equal one (same JSON) handed out before. */
  share<T>(value: T): T {
    const key = JSON.stringify(value);
    if (key.length > MAX_JSON) return value;
    const seen = this.values.get(key);
    if (seen !== undefined) return seen as T;
    if (this.values.size >= MAX_VALUES) this.values.clear();
    this.values.set(key, value);
    return value;
  }

  /** How many distinct values it holds. */
  get size(): number {
    return this.values.size;
  }
}

/** Values by key in two generations: once the current one holds `max`, it becomes the previous one. */
class Generations<V> {
  private current = new Map<string, V>();
  private previous = new Map<string, V>();

  constructor(private readonly max: number) {}

  /** The value kept under `key`, or `value`, now kept under it. */
  keep(key: string, value: V): V {
    const seen = this.current.get(key);
    if (seen !== undefined) return seen;
    const kept = this.previous.get(key) ?? value;
    if (this.current.size >= this.max) {
      this.previous = this.current;
      this.current = new Map<string, V>();
    }
    this.current.set(key, kept);
    return kept;
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }
}

/**
 * Equal strings, and equal small maps of strings, shared instead of copied: what every member's watch
 * keeps of a template's copies (its name, namespace, uid label, template annotation, the digest of the
 * controller's fields) is the same on every member, parsed anew from each member's events. Generational:
 * once a generation holds MAX_STRINGS, it becomes the previous one (looked up, and what is still asked for
 * moved on) and the one before is dropped, so values no longer kept anywhere do not stay.
 */
export class SharedStrings {
  private readonly strings: Generations<string>;
  private readonly maps: Generations<Readonly<Record<string, string>>>;

  constructor(max = MAX_STRINGS) {
    this.strings = new Generations(max);
    this.maps = new Generations(max);
  }

  /** `s`, or an equal string handed out before. */
  share(s: string): string {
    return this.strings.keep(s, s);
  }

  /** `m` (its values shared strings), or an equal map handed out before; never to be changed in place. */
  shareMap<T extends Readonly<Record<string, string>>>(m: T): T {
    return this.maps.keep(JSON.stringify(m), m) as T;
  }

  /** How many strings and maps it holds, over both generations. */
  get size(): number {
    return this.strings.size + this.maps.size;
  }
}
