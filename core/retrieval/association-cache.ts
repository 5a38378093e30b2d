// The semantic channel's in-memory association indexes, one per scope, as a store adapter keeps
// them (stores/sqlite/semantic-index.ts, stores/postgres/semantic-index.ts): each index remembers
// its scope's change token when it was read, so an adapter that reads the current token knows
// whether any writer changed the scope since. Least recently used scopes go first once too many
// memories are held. Pure: the adapters read tokens and rows and build the indexes.
import type { AssociationIndex } from "./associations.js";

/**
 * most recently written memories per scope that take part (bounds build time and memory on huge
 * scopes; the adapters read them newest first, and a memory written to a scope at the cap takes
 * the place of the oldest one held)
 */
export const SEMANTIC_SCOPE_CAP = 20_000;
/** scopes kept in memory at once (least recently used dropped first) */
export const MAX_SCOPES = 64;
/**
 * memories held in all loaded indexes at once (least recently used scopes dropped first): an index
 * takes ~0.55 KB per memory, so at most ~110 MB, where 64 full scopes would take ~700 MB
 */
export const MAX_INDEXED = 200_000;
/** scopes under this many memories rebuild in about a millisecond: the scope count drops them first */
export const CHEAP_REBUILD = 1_000;
/** What a warm-up builds: the scopes of whoever wrote last, at most this many and this many memories in all. */
export const WARM_UP = { scopes: 8, memories: 40_000 } as const;
/** which scopes of a person a warm-up builds first: the broad ones every search of theirs reads */
export const LEVEL_ORDER = ["user", "project", "session", "thread"];

/**
 * writes that add more memories than this to one scope drop its index instead of following in place
 * (a rebuild reads at most the cap, and each add at the cap scans for the oldest memory held)
 */
export const FOLLOW_MAX_ADDS = 1_000;

/** Whether a memory takes part in its scope's index: current, and not held back by a flag no person confirmed. */
export const joinsIndex = (r: { status: string; flags: readonly string[]; trust: string }): boolean =>
  (r.status === "active" || r.status === "pending") && (r.flags.length === 0 || r.trust === "user_confirmed");

/** What one write did to a scope's indexed memories (those current and not held back by a flag). */
export interface IndexDelta {
  /** memories that left the index (superseded, archived, flagged, expired, forgotten) */
  remove: number[];
  /** memories that joined it, or joined again with another conversation */
  add: { rowid: number; thread: string | null; content: string }[];
}

interface Loaded {
  ix: AssociationIndex;
  /** the scope's change token when the index was read (null: the scope had none) */
  token: number | null;
}

export class AssociationCache {
  private readonly byKey = new Map<string, Loaded>();

  /** `maxIndexed`: memories held in all loaded indexes at once; `cap`: memories per scope (tests lower it) */
  constructor(
    private readonly maxIndexed = MAX_INDEXED,
    private readonly cap = SEMANTIC_SCOPE_CAP,
  ) {}

  /** The scope's index if it was read at this token (now the most recently used); a stale one goes. */
  current(key: string, token: number | null): AssociationIndex | undefined {
    const e = this.byKey.get(key);
    if (!e) return undefined;
    this.byKey.delete(key);
    if (e.token !== token) return undefined;
    this.byKey.set(key, e);
    return e.ix;
  }

  /** A freshly read index of the scope, read at this token. */
  put(key: string, ix: AssociationIndex, token: number | null): void {
    this.byKey.delete(key);
    this.byKey.set(key, { ix, token });
  }

  /**
   * Least recently used scopes go while more than MAX_SCOPES scopes or `maxIndexed` memories are
   * held; `keep` stays. Over the scope count alone, small scopes go first: searches over many small
   * scopes (one session each) must not push out a user's large scope, whose rebuild takes ~0.3 s
   * where theirs take a millisecond.
   */
  evict(keep: Set<string>): void {
    if (this.byKey.size > MAX_SCOPES) {
      for (const [k, e] of this.byKey) {
        if (this.byKey.size <= MAX_SCOPES) break;
        if (!keep.has(k) && e.ix.size < CHEAP_REBUILD) this.byKey.delete(k);
      }
    }
    let held = this.held;
    for (const [k, e] of this.byKey) {
      if (this.byKey.size <= MAX_SCOPES && held <= this.maxIndexed) break;
      if (keep.has(k)) continue;
      this.byKey.delete(k);
      held -= e.ix.size;
    }
  }

  /**
   * One write of the adapter changed the scope's memories by `delta` and moved its token from
   * `prev` to `next`: the loaded index follows in place if it was current just before. An index
   * already read at `next` (a search rebuilt it first) stays; one read at any other token is stale
   * and goes. A memory that is re-added (its conversation or status changed) is removed first. A
   * removed memory leaves nothing behind (AssociationIndex.remove), so a forgotten one is gone from
   * memory as soon as this runs; a scope at its cap then holds one memory fewer until it is rebuilt.
   */
  updated(key: string, prev: number | null, next: number, delta: IndexDelta): void {
    const e = this.byKey.get(key);
    if (!e || e.token === next) return;
    if (e.token !== prev || delta.add.length > FOLLOW_MAX_ADDS) {
      this.byKey.delete(key);
      return;
    }
    for (const r of delta.remove) e.ix.remove(r);
    for (const a of delta.add) {
      e.ix.remove(a.rowid);
      // A scope at its cap keeps its newest memories: the oldest held makes room. (Dropping the
      // index instead rebuilt 20,000 memories, ~250 ms, in the next search after every write.)
      if (e.ix.size >= this.cap) e.ix.remove(e.ix.oldest()!);
      e.ix.add(a.rowid, a.thread, a.content);
    }
    e.token = next;
  }

  /** Memories of a scope left or changed: drop its index now (it is rebuilt on next use). */
  changed(key: string): void {
    this.byKey.delete(key);
  }

  /** Every scope rebuilds on next use. */
  clear(): void {
    this.byKey.clear();
  }

  /** Memories held in all loaded indexes. */
  get held(): number {
    let n = 0;
    for (const e of this.byKey.values()) n += e.ix.size;
    return n;
  }

  /** How many scopes are held. */
  get loaded(): number {
    return this.byKey.size;
  }
}

/**
 * Which scopes a warm-up builds, given the people who wrote last (newest first): of each person,
 * the user-level scope first and then the project scopes, since every search of theirs (or of a
 * session in that project) reads them, then their session and thread scopes; most recently written
 * first within a level. At most `maxScopes` whose indexes would hold at most `maxMemories` in all (a
 * scope over the budget is passed over). `sizeOf` is asked only for scopes that may still fit.
 */
export function warmScopes(
  users: Iterable<string>,
  keysOf: (user: string) => Iterable<{ key: string; level: string }>,
  sizeOf: (key: string) => number,
  maxScopes: number,
  maxMemories: number,
): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  let total = 0;
  for (const u of users) {
    const keys: { key: string; level: string }[] = [];
    for (const r of keysOf(u)) {
      if (!seen.has(r.key)) keys.push(r);
      seen.add(r.key);
    }
    // stable: recency order stays within a level
    keys.sort((a, b) => LEVEL_ORDER.indexOf(a.level) - LEVEL_ORDER.indexOf(b.level));
    for (const { key } of keys) {
      const n = Math.min(SEMANTIC_SCOPE_CAP, sizeOf(key));
      if (n === 0 || total + n > maxMemories) continue;
      total += n;
      out.push(key);
      // full: nothing more fits, however many small scopes are left to count
      if (out.length >= maxScopes || total >= maxMemories) return out;
    }
  }
  return out;
}
