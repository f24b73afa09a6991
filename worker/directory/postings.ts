// The postings a TermIndex keeps (term-index.ts): those of its recent units in memory, and those of its
// persisted units read term by term (index-store.ts supplies them), decoded and cached by term, least
// recently used first, up to a byte budget. Platform-free; covered by
// test/worker/directory/ranking.test.ts and persisted-index.test.ts.

/** Decoded persisted postings kept between searches (6 bytes an entry). */
export const DEFAULT_CACHE_BYTES = 32 * 1024 * 1024;

/**
 * The units containing one term, with the term's field-weighted frequency in each. Parallel arrays
 * rather than a Map: with the flat per-unit arrays, they took the search bench's median search
 * from ~2 ms to ~0.2 ms.
 */
export interface Postings { ids: number[]; tfs: number[] }

/** Postings of units held in memory, by term, with each unit's terms so it can be taken out again. */
export class MemoryPostings {
  private readonly lists = new Map<string, Postings>();
  private readonly unitTerms = new Map<number, string[]>();

  /** Units held. */
  get units(): number {
    return this.unitTerms.size;
  }

  get(term: string): Postings | undefined {
    return this.lists.get(term);
  }

  /** Every term's list (all ids added and not removed). */
  all(): ReadonlyMap<string, Postings> {
    return this.lists;
  }

  add(id: number, tfs: ReadonlyMap<string, number>): void {
    for (const [term, weighted] of tfs) {
      let list = this.lists.get(term);
      if (!list) this.lists.set(term, (list = { ids: [], tfs: [] }));
      list.ids.push(id);
      list.tfs.push(weighted);
    }
    this.unitTerms.set(id, [...tfs.keys()]);
  }

  remove(id: number): void {
    for (const term of this.unitTerms.get(id) ?? []) {
      // Swap-remove: order within a postings list does not affect scores. indexOf over a few
      // thousand numbers costs microseconds, and cards change far less often than they are searched.
      const list = this.lists.get(term)!;
      const at = list.ids.indexOf(id);
      const lastId = list.ids.pop()!;
      const lastTf = list.tfs.pop()!;
      if (at < list.ids.length) {
        list.ids[at] = lastId;
        list.tfs[at] = lastTf;
      }
      if (list.ids.length === 0) this.lists.delete(term);
    }
    this.unitTerms.delete(id);
  }

  clear(): void {
    this.lists.clear();
    this.unitTerms.clear();
  }

  /** Rough bytes held (V8 overheads estimated). */
  memoryBytes(): number {
    let bytes = 0;
    for (const [term, list] of this.lists) bytes += 2 * term.length + 96 + 16 * list.ids.length;
    for (const terms of this.unitTerms.values()) bytes += 64 + 8 * terms.length;
    return bytes;
  }
}

/**
 * Persisted units containing one term, in segments: segment s holds the entries up to ends[s], unit
 * id = bases[s] + offset. Six bytes an entry, so the cache holds more of them.
 */
export interface BaseList { bases: Int32Array; ends: Int32Array; offsets: Uint16Array; tfs: Float32Array }

/** Postings of the units below the base's count, kept elsewhere (index-store.ts), read term by term. */
export interface BasePostings {
  /** Every persisted unit containing `term` (dead ones included), empty for none; throws IndexFormatError. */
  list(term: string): BaseList;
  /** Every term with persisted entries (some perhaps only of dead units), each once; throws IndexFormatError. */
  terms(): Iterable<string>;
}

/** A cached list, with how many of its units are live as of `deaths` (the index's count of killed units). */
export interface CachedList extends BaseList { live: number; deaths: number }

export class PostingsCache {
  private readonly lists = new Map<string, CachedList>();
  private bytes = 0;
  private readonly limit: number;

  constructor(limit = DEFAULT_CACHE_BYTES) {
    this.limit = limit;
  }

  /** `term`'s list, read from `base` on a miss; its live count recounted when units died since (unitAgent -1). */
  get(term: string, base: BasePostings, unitAgent: Int32Array, deaths: number): CachedList {
    let list = this.lists.get(term);
    if (list) {
      this.lists.delete(term);
    } else {
      list = { ...base.list(term), live: 0, deaths: -1 };
      this.bytes += cost(term, list);
      for (const [oldest, old] of this.lists) {
        if (this.bytes <= this.limit) break;
        this.lists.delete(oldest);
        this.bytes -= cost(oldest, old);
      }
    }
    this.lists.set(term, list);
    if (list.deaths !== deaths) {
      const { bases, ends, offsets } = list;
      let live = 0;
      for (let s = 0, i = 0; s < bases.length; s++) {
        for (const at = bases[s]!, end = ends[s]!; i < end; i++) if (unitAgent[at + offsets[i]!]! >= 0) live++;
      }
      list.live = live;
      list.deaths = deaths;
    }
    return list;
  }

  clear(): void {
    this.lists.clear();
    this.bytes = 0;
  }

  get use(): { terms: number; bytes: number } {
    return { terms: this.lists.size, bytes: this.bytes };
  }
}

const cost = (term: string, list: BaseList) => 6 * list.offsets.length + 8 * list.bases.length + 2 * term.length + 160;
