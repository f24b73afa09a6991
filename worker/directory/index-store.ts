// The Directory object's search index, persisted in its SQLite next to the cards (directory.ts), so a
// start-up reads a few compact rows instead of re-indexing every card. Covered by
// test/worker/directory/persisted-index.test.ts.
//
// Layout (row formats in index-rows.ts): per chunk of 16,384 unit ids one row of unit arrays (agent,
// skill, length) and the first term of each of its postings blocks; blocks of ~16 KB holding a sorted
// run of the chunk's terms and their entries; agent names by ordinal; a meta row with the format.
// A start-up loads the unit arrays and names (~6 MB of rows at 100,000 cards) and replays the pending
// cards, nothing else: a search reads, for each of its terms, the one block per chunk that may hold it,
// and keeps the entries decoded in a bounded cache.
//
// Changes since the last commit live in memory (TermIndex's recent units) and, durably, as names in
// search_pending, one row per changed card, replayed at start-up from the cards table. Every
// COMPACT_AT changed cards a commit appends the new units to the chunk at the end of the id space (ids
// are never reused, so no other chunk's blocks change) and marks the replaced units dead in their unit
// rows. Anything that does not decode or add up makes the store rebuild from the cards table.
import { CHUNK_UNITS, BLOCK_IDS, NAMES_PER_ROW, blockFor, blockTerms, byChunk, checkEntries, decodeBlock, decodeStrings, decodeUnits, encodeBlocks, encodeUnits, entriesOf, joinPieces, liveEntries, mergePostings } from "./index-rows.ts";
import type { Piece } from "./index-rows.ts";
import type { IndexStats } from "./index-stats.ts";
import type { AgentCard } from "./card.ts";
import type { SearchResult } from "./search-index.ts";
import { IndexFormatError, TermIndex } from "./term-index.ts";
import type { BaseList, BasePostings, Postings } from "./term-index.ts";
import type { RankedAgent, Ranking } from "./search-scratch.ts";

/** Bump when a row's meaning changes: an index of another format is rebuilt, never misread. */
const FORMAT = 2;
/** Changed cards replayed at start-up at most (~0.1 ms each), and so the cards per commit. */
export const COMPACT_AT = 1000;
/** Dead ids beyond the live ones (plus this) and a commit renumbers instead, by a rebuild. */
const SPARE_IDS = 65_536;
const REBUILD_PAGE = 500;
/** The reason for building an index where there is none yet (a new directory, or one from before the format). */
const NO_INDEX = "no persisted index";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS search_meta (id INTEGER PRIMARY KEY CHECK (id = 1), json TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS search_units (chunk INTEGER PRIMARY KEY, agent BLOB NOT NULL, skill BLOB NOT NULL, length BLOB NOT NULL, blocks TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS search_blocks (id INTEGER PRIMARY KEY, terms TEXT NOT NULL, ids BLOB NOT NULL, tfs BLOB NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS search_agents (row INTEGER PRIMARY KEY, names TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS search_pending (name TEXT PRIMARY KEY) WITHOUT ROWID`,
];
const TABLES = ["search_meta", "search_units", "search_blocks", "search_agents", "search_pending"];

export interface StoreOptions {
  /** Changed cards that make a commit (COMPACT_AT). */
  compactAt?: number;
  /** Bytes of decoded postings cached (postings.ts DEFAULT_CACHE_BYTES). */
  cacheBytes?: number | undefined;
  /** Dead unit ids tolerated beyond the live ones before a commit renumbers (SPARE_IDS). */
  spareIds?: number;
}

export class StoredIndex implements BasePostings {
  private readonly storage: DurableObjectStorage;
  private readonly sql: SqlStorage;
  private readonly compactAt: number;
  private readonly cacheBytes: number | undefined;
  private readonly spareIds: number;
  private index: TermIndex;
  /** Per chunk, the first term of each of its blocks. */
  private dirs: string[][] = [];
  private readonly pending = new Set<string>();
  private namesStored = 0;
  private rowsWritten = 0;
  private commits = 0;
  private rebuilds = 0;
  private opened = "loaded";

  /** Loads the persisted index, or rebuilds it from the cards table when there is none or it does not hold together. */
  constructor(storage: DurableObjectStorage, options: StoreOptions = {}) {
    this.storage = storage;
    this.sql = storage.sql;
    this.compactAt = options.compactAt ?? COMPACT_AT;
    this.cacheBytes = options.cacheBytes;
    this.spareIds = options.spareIds ?? SPARE_IDS;
    this.index = new TermIndex({ cacheBytes: this.cacheBytes });
    for (const statement of SCHEMA) this.sql.exec(statement);
    try {
      this.load();
    } catch (err) {
      if (!(err instanceof IndexFormatError)) throw err;
      this.rebuild(err.message);
    }
  }

  private write(query: string, ...bindings: unknown[]): void {
    this.rowsWritten += this.sql.exec(query, ...bindings).rowsWritten;
  }

  private load(): void {
    const meta = this.sql.exec(`SELECT json FROM search_meta`).toArray()[0];
    if (!meta) throw new IndexFormatError(NO_INDEX);
    let parsed: { format?: unknown; units?: unknown; agents?: unknown } = {};
    try {
      parsed = JSON.parse(String(meta.json)) as typeof parsed;
    } catch {
      // Reported below as an unknown format.
    }
    const { format, units, agents } = parsed;
    if (format !== FORMAT || !Number.isSafeInteger(units) || !Number.isSafeInteger(agents)) throw new IndexFormatError(`persisted index of format ${String(format)}, not ${FORMAT}`);
    const count = units as number;
    const chunks = Math.ceil(count / CHUNK_UNITS);
    const agent = new Int32Array(count);
    const skill = new Int16Array(count);
    const length = new Float64Array(count);
    const unitRows = this.sql.exec(`SELECT chunk, agent, skill, length, blocks FROM search_units ORDER BY chunk`).toArray();
    if (unitRows.length !== chunks) throw new IndexFormatError(`${unitRows.length} unit chunks stored, ${chunks} expected`);
    this.dirs = unitRows.map((row, chunk) => {
      if (row.chunk !== chunk) throw new IndexFormatError(`unit chunk ${chunk} is missing`);
      decodeUnits(chunk, row, agent, skill, length);
      return decodeStrings(row.blocks, null, `block list of chunk ${chunk}`);
    });
    const rows = Math.ceil((agents as number) / NAMES_PER_ROW);
    const nameRows = this.sql.exec(`SELECT row, names FROM search_agents ORDER BY row`).toArray();
    if (nameRows.length !== rows) throw new IndexFormatError(`${nameRows.length} name rows stored, ${rows} expected`);
    const names = nameRows.flatMap((row, i) => {
      if (row.row !== i) throw new IndexFormatError(`name row ${i} is missing`);
      return decodeStrings(row.names, i < rows - 1 ? NAMES_PER_ROW : (agents as number) - i * NAMES_PER_ROW, `name row ${i}`);
    });
    this.index.loadBase(this, { count, agent, skill, length, names });
    this.namesStored = names.length;
    // Cards changed since the last commit: their units in the blocks are stale, the card row is current.
    for (const row of this.sql.exec(`SELECT name FROM search_pending`).toArray()) {
      const name = String(row.name);
      const card = this.sql.exec(`SELECT card FROM cards WHERE name = ?`, name).toArray()[0];
      if (card) this.index.upsert(JSON.parse(String(card.card)) as AgentCard);
      else this.index.remove(name);
      this.pending.add(name);
    }
    const stored = Number(this.sql.exec(`SELECT COUNT(*) AS n FROM cards`).one().n);
    if (stored !== this.index.size) throw new IndexFormatError(`the index holds ${this.index.size} cards, the directory ${stored}`);
  }

  /** Drops the persisted index and indexes every card again, committing a chunk's worth at a time. */
  private rebuild(reason: string): void {
    if (reason !== NO_INDEX) console.warn(`Directory search index: rebuilding from the cards (${reason})`);
    this.storage.transactionSync(() => {
      for (const table of TABLES) this.write(`DELETE FROM ${table}`);
      this.index = new TermIndex({ cacheBytes: this.cacheBytes });
      this.dirs = [];
      this.pending.clear();
      this.namesStored = 0;
      for (let after = -1; ; ) {
        const page = this.sql.exec(`SELECT rowid AS r, card FROM cards WHERE rowid > ? ORDER BY rowid LIMIT ?`, after, REBUILD_PAGE).toArray();
        for (const row of page) {
          this.index.upsert(JSON.parse(String(row.card)) as AgentCard);
          if (this.index.recentUnits >= CHUNK_UNITS) this.commit();
        }
        if (page.length < REBUILD_PAGE) break;
        after = Number(page.at(-1)!.r);
      }
      this.commit();
    });
    this.rebuilds++;
    this.opened = `rebuilt: ${reason}`;
  }

  upsert(card: AgentCard): void {
    this.index.upsert(card);
    this.changed(card.name);
  }

  remove(name: string): void {
    if (this.index.remove(name)) this.changed(name);
  }

  private changed(name: string): void {
    if (!this.pending.has(name)) {
      this.write(`INSERT OR IGNORE INTO search_pending (name) VALUES (?)`, name);
      this.pending.add(name);
    }
    if (this.pending.size < this.compactAt && this.index.recentUnits < CHUNK_UNITS) return;
    const { live, ids } = this.index.unitCounts;
    if (ids > 2 * live + this.spareIds) this.rebuild(`${ids - live} dead unit ids`);
    else {
      this.storage.transactionSync(() => this.commit());
      this.commits++;
    }
  }

  /**
   * Writes the recent units into the chunks at the end of the id space, the unit rows that changed, new
   * names and the meta row, then empties search_pending. Memory follows only once every write went through.
   */
  private commit(): void {
    const { base: from, ids: to } = this.index.unitCounts;
    const units = this.index.units();
    const recent = byChunk(this.index.recentPostings());
    const dirs = new Map<number, string[]>();
    for (let chunk = Math.floor(from / CHUNK_UNITS); to > from && chunk * CHUNK_UNITS < to; chunk++) {
      // The chunk `from` falls in may already hold blocks: read them back, dropping entries of dead units.
      const merged = chunk * CHUNK_UNITS < from ? this.readChunk(chunk, from, units.agent) : new Map<string, Postings>();
      const blocks = encodeBlocks(chunk, mergePostings(merged, recent.get(chunk)));
      this.write(`DELETE FROM search_blocks WHERE id >= ? AND id < ?`, chunk * BLOCK_IDS, (chunk + 1) * BLOCK_IDS);
      blocks.forEach((block, i) => this.write(`INSERT INTO search_blocks (id, terms, ids, tfs) VALUES (?, ?, ?, ?)`, chunk * BLOCK_IDS + i, block.terms, block.ids, block.tfs));
      dirs.set(chunk, blocks.map((block) => block.first));
    }
    const unitChunks = new Set(dirs.keys());
    for (const id of this.index.killedBaseUnits()) unitChunks.add(Math.floor(id / CHUNK_UNITS));
    for (const chunk of unitChunks) {
      const row = encodeUnits(chunk, units.agent, units.skill, units.length);
      const blocks = JSON.stringify(dirs.get(chunk) ?? this.dirs[chunk]);
      this.write(`INSERT OR REPLACE INTO search_units (chunk, agent, skill, length, blocks) VALUES (?, ?, ?, ?, ?)`, chunk, row.agent, row.skill, row.length, blocks);
    }
    const names = units.names;
    for (let row = Math.floor(this.namesStored / NAMES_PER_ROW); row * NAMES_PER_ROW < names.length; row++) {
      this.write(`INSERT OR REPLACE INTO search_agents (row, names) VALUES (?, ?)`, row, JSON.stringify(names.slice(row * NAMES_PER_ROW, (row + 1) * NAMES_PER_ROW)));
    }
    this.write(`INSERT OR REPLACE INTO search_meta (id, json) VALUES (1, ?)`, JSON.stringify({ format: FORMAT, units: to, agents: names.length }));
    if (this.pending.size > 0) this.write(`DELETE FROM search_pending`);
    for (const [chunk, dir] of dirs) this.dirs[chunk] = dir;
    this.namesStored = names.length;
    this.pending.clear();
    this.index.commit(this);
  }

  /** Every live entry of a chunk's blocks, by term (entries past the `base` units stored are refused). */
  private readChunk(chunk: number, base: number, agent: Int32Array): Map<string, Postings> {
    const postings = new Map<string, Postings>();
    const dir = this.dirs[chunk] ?? [];
    dir.forEach((first, i) => {
      const block = this.readBlock(chunk, i, first);
      checkEntries(block, 0, block.ids.length, Math.min(CHUNK_UNITS, base - chunk * CHUNK_UNITS), `block ${i} of chunk ${chunk}`);
      liveEntries(block, chunk, agent, postings);
    });
    return postings;
  }

  private readBlock(chunk: number, i: number, first: string) {
    const what = `block ${i} of chunk ${chunk}`;
    const row = this.sql.exec(`SELECT terms, ids, tfs FROM search_blocks WHERE id = ?`, chunk * BLOCK_IDS + i).toArray()[0];
    if (!row) throw new IndexFormatError(`${what} is missing`);
    return decodeBlock(row, first, what);
  }

  /** BasePostings: the entries of `term` in every chunk, from the one block per chunk that may hold it. */
  list(term: string): BaseList {
    const base = this.index.unitCounts.base;
    const pieces: Piece[] = [];
    this.dirs.forEach((dir, chunk) => {
      const i = blockFor(dir, term);
      if (i < 0) return;
      const block = this.readBlock(chunk, i, dir[i]!);
      const from = entriesOf(block, term);
      if (!from) return;
      const [at, count] = from;
      checkEntries(block, at, at + count, Math.min(CHUNK_UNITS, base - chunk * CHUNK_UNITS), `block ${i} of chunk ${chunk}`);
      pieces.push({ chunk, offsets: block.ids.subarray(at, at + count), tfs: block.tfs.subarray(at, at + count) });
    });
    return joinPieces(pieces);
  }

  /** BasePostings: every block's terms, from the headers only (read once, by the first typo fallback). */
  *terms(): Iterable<string> {
    for (const row of this.sql.exec(`SELECT id, terms FROM search_blocks`)) yield* blockTerms(row.terms, `block ${String(row.id)}`);
  }

  /** Ranked hits with their cards (≤ 50, read from the cards table); rebuilds once if the index proves inconsistent. */
  find(query: string, limit: number, keepWeak = false): SearchResult {
    try {
      return this.withCards(this.index.rank(query, limit, keepWeak), keepWeak);
    } catch (err) {
      if (!(err instanceof IndexFormatError)) throw err;
      this.rebuild(err.message);
      return this.withCards(this.index.rank(query, limit, keepWeak), keepWeak);
    }
  }

  private withCards({ hits, total, weak }: Ranking, keepWeak: boolean): SearchResult {
    const all = [...hits, ...weak];
    const rows = all.length === 0 ? [] : this.sql.exec(`SELECT name, card FROM cards WHERE name IN (${all.map(() => "?").join(", ")})`, ...all.map((hit) => hit.name)).toArray();
    const cards = new Map(rows.map((row) => [String(row.name), JSON.parse(String(row.card)) as AgentCard]));
    const withCard = ({ name, score, skill }: RankedAgent) => {
      const card = cards.get(name);
      const best = skill < 0 ? null : card?.skills[skill]?.id;
      if (!card || best === undefined || (skill < 0) !== (card.skills.length === 0)) throw new IndexFormatError(`the index disagrees with the card of ${name}`);
      return { card, score, best_skill_id: best };
    };
    return { hits: hits.map(withCard), total, ...(keepWeak ? { weak: weak.map(withCard) } : {}) };
  }

  stats(): IndexStats {
    return {
      cards: this.index.size,
      units: this.index.unitCounts,
      pending: this.pending.size,
      cache: this.index.cacheUse,
      memoryBytes: this.index.memoryBytes(),
      rowsWritten: this.rowsWritten,
      commits: this.commits,
      rebuilds: this.rebuilds,
      opened: this.opened,
    };
  }
}
