// The skill vectors in the Directory's SQLite: one row per card with the model and vector length they were
// made with, the vectors as a BLOB of 8-bit values (vector-codec.ts). Keeps count of the cards and of those
// whose vectors are for the current model, so a search knows without a query whether any card is pending.
// Cards the model refused alone are *set aside* (table set_aside_cards: model, reason, when): neither
// embedded nor pending, so they hold up no one; tried again as embed-alarm.ts says.
// Imported by card-embeddings.ts; covered by test/worker/directory/hybrid-embedding.test.ts.
import type { AgentCard } from "../card.ts";
import { fromBytes } from "./vector-codec.ts";
import type { CardVectors } from "./vector-codec.ts";

/**
 * Bump when a row's meaning changes: rows of another format are dropped and their cards re-embedded.
 * Format 0 is the `vectors (name, json)` table of float arrays from before vectors carried their model.
 */
const VECTOR_FORMAT = 1;

/** The model vectors are current for: its id and, when known, its vector length. */
export interface ModelKey { model: string; dims: number | null }

export class VectorStore {
  private readonly sql: SqlStorage;
  private key: ModelKey | null = null;
  private cardCount = 0;
  private embeddedCount = 0;
  private storedBytes = 0;
  private storedVectors = 0;
  private setAsideCount = 0;
  rowsWritten = 0;

  constructor(storage: DurableObjectStorage) {
    this.sql = storage.sql;
    this.sql.exec(`CREATE TABLE IF NOT EXISTS vector_meta (id INTEGER PRIMARY KEY CHECK (id = 1), format INTEGER NOT NULL)`);
    const format = this.sql.exec(`SELECT format FROM vector_meta`).toArray()[0]?.format ?? 0;
    if (format !== VECTOR_FORMAT) {
      if (format !== 0) console.warn(`Directory vectors: format ${String(format)} stored, ${VECTOR_FORMAT} read; every card is embedded again`);
      storage.transactionSync(() => {
        this.sql.exec(`DROP TABLE IF EXISTS vectors`);
        this.sql.exec(`DROP TABLE IF EXISTS skill_vectors`);
        this.sql.exec(`CREATE TABLE skill_vectors (name TEXT PRIMARY KEY, model TEXT NOT NULL, dims INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL)`);
        this.sql.exec(`INSERT OR REPLACE INTO vector_meta (id, format) VALUES (1, ?)`, VECTOR_FORMAT);
      });
    }
    this.sql.exec(`CREATE TABLE IF NOT EXISTS set_aside_cards (name TEXT PRIMARY KEY, model TEXT NOT NULL, reason TEXT NOT NULL, failed_at INTEGER NOT NULL)`);
    this.recount();
  }

  /** Vectors count as current when made by this model (and of its length, when known); null: none are. */
  useModel(key: ModelKey | null): void {
    this.key = key;
    this.recount();
  }

  /** Counts cards, current vectors and their bytes from the tables (at open, on a model change, after each batch). */
  recount(): void {
    this.cardCount = Number(this.sql.exec(`SELECT COUNT(*) AS n FROM cards`).one().n);
    if (!this.key) {
      this.embeddedCount = 0;
      this.storedBytes = 0;
      this.storedVectors = 0;
      this.setAsideCount = 0;
      return;
    }
    this.setAsideCount = Number(this.sql.exec(`SELECT COUNT(*) AS n FROM set_aside_cards s JOIN cards c ON c.name = s.name WHERE s.model = ?`, this.key.model).one().n);
    const row = this.sql.exec(`SELECT COUNT(*) AS n, COALESCE(SUM(LENGTH(v.data)), 0) AS bytes, COALESCE(SUM(v.count), 0) AS vectors FROM skill_vectors v JOIN cards c ON c.name = v.name WHERE ${this.currentClause("v")}`, ...this.currentBindings()).one();
    this.embeddedCount = Number(row.n);
    this.storedBytes = Number(row.bytes);
    this.storedVectors = Number(row.vectors);
  }

  private currentClause(table: string): string {
    return `${table}.model = ? AND (? IS NULL OR ${table}.dims = ?)`;
  }

  private currentBindings(): unknown[] {
    return [this.key?.model ?? null, this.key?.dims ?? null, this.key?.dims ?? null];
  }

  private isCurrent(model: unknown, dims: unknown): boolean {
    return this.key !== null && model === this.key.model && (this.key.dims === null || dims === this.key.dims);
  }

  /** Cards, those with current vectors, those set aside, those still to embed, and the current vectors' count and bytes. */
  get counts(): { cards: number; embedded: number; setAside: number; pending: number; vectors: number; bytes: number } {
    const pending = this.key ? Math.max(0, this.cardCount - this.embeddedCount - this.setAsideCount) : 0;
    return { cards: this.cardCount, embedded: this.embeddedCount, setAside: this.setAsideCount, pending, vectors: this.storedVectors, bytes: this.storedBytes };
  }

  /** Sets `name` aside for the current model with the model's `reason` (again: a later try failed too). */
  setAside(name: string, reason: string, now: number): void {
    if (!this.key) return;
    const before = this.sql.exec(`SELECT model FROM set_aside_cards WHERE name = ?`, name).toArray()[0];
    this.rowsWritten += this.sql.exec(`INSERT OR REPLACE INTO set_aside_cards (name, model, reason, failed_at) VALUES (?, ?, ?, ?)`, name, this.key.model, reason, now).rowsWritten;
    if (before?.model !== this.key.model) this.setAsideCount++;
  }

  /** Forgets that `name` was set aside (embedded at last, changed, or gone). */
  private clearSetAside(name: string): void {
    const old = this.sql.exec(`SELECT model FROM set_aside_cards WHERE name = ?`, name).toArray()[0];
    if (!old) return;
    this.rowsWritten += this.sql.exec(`DELETE FROM set_aside_cards WHERE name = ?`, name).rowsWritten;
    if (this.key && old.model === this.key.model) this.setAsideCount--;
  }

  /** Up to `limit` cards set aside for the current model at or before `before`, longest aside first. */
  setAsideDue(before: number, limit: number): AgentCard[] {
    if (!this.key) return [];
    const rows = this.sql.exec(`SELECT c.card FROM set_aside_cards s JOIN cards c ON c.name = s.name WHERE s.model = ? AND s.failed_at <= ? ORDER BY s.failed_at LIMIT ?`, this.key.model, before, limit).toArray();
    return rows.map((row) => JSON.parse(String(row.card)) as AgentCard);
  }

  /** When the earliest card still set aside for the current model was set aside; null when none is. */
  oldestSetAsideAt(): number | null {
    if (!this.key || this.setAsideCount === 0) return null;
    const row = this.sql.exec(`SELECT MIN(s.failed_at) AS oldest FROM set_aside_cards s JOIN cards c ON c.name = s.name WHERE s.model = ?`, this.key.model).one();
    return row.oldest === null ? null : Number(row.oldest);
  }

  /** "name: reason" of the card most recently set aside for the current model; null when none is. */
  lastSetAsideReason(): string | null {
    if (!this.key || this.setAsideCount === 0) return null;
    const row = this.sql.exec(`SELECT s.name || ': ' || s.reason AS last FROM set_aside_cards s JOIN cards c ON c.name = s.name WHERE s.model = ? ORDER BY s.failed_at DESC LIMIT 1`, this.key.model).toArray()[0];
    return row?.last === undefined || row.last === null ? null : String(row.last);
  }

  /** A card row was added (not replaced). */
  cardAdded(): void {
    this.cardCount++;
  }

  /** Whether the stored card `card` already has current vectors (a restarting agent republishes the same card). */
  hasCurrent(card: AgentCard): boolean {
    const row = this.sql.exec(`SELECT v.model, v.dims FROM skill_vectors v JOIN cards c ON c.name = v.name WHERE c.name = ? AND c.card = ?`, card.name, JSON.stringify(card)).toArray()[0];
    return row !== undefined && this.isCurrent(row.model, row.dims);
  }

  /** Whether the stored card of `name` is `card` and set aside for the current model (its republish, unchanged, is not tried again). */
  isSetAside(card: AgentCard): boolean {
    if (!this.key || this.setAsideCount === 0) return false;
    return this.sql.exec(`SELECT 1 FROM set_aside_cards s JOIN cards c ON c.name = s.name WHERE s.name = ? AND s.model = ? AND c.card = ?`, card.name, this.key.model, JSON.stringify(card)).toArray().length > 0;
  }

  put(name: string, model: string, vectors: CardVectors): void {
    this.delete(name);
    const count = vectors.inverseNorms.length;
    this.rowsWritten += this.sql.exec(`INSERT INTO skill_vectors (name, model, dims, count, data) VALUES (?, ?, ?, ?, ?)`, name, model, vectors.dims, count, bytesOf(vectors.values)).rowsWritten;
    if (this.isCurrent(model, vectors.dims)) {
      this.embeddedCount++;
      this.storedBytes += vectors.values.byteLength;
      this.storedVectors += count;
    }
  }

  /** Drops a card's vectors (its card changed or is gone); `cardGone` also counts the card out. */
  delete(name: string, cardGone = false): void {
    if (cardGone) this.cardCount--;
    this.clearSetAside(name);
    const old = this.sql.exec(`SELECT model, dims, count, LENGTH(data) AS bytes FROM skill_vectors WHERE name = ?`, name).toArray()[0];
    if (!old) return;
    this.rowsWritten += this.sql.exec(`DELETE FROM skill_vectors WHERE name = ?`, name).rowsWritten;
    if (this.isCurrent(old.model, old.dims)) {
      this.embeddedCount--;
      this.storedBytes -= Number(old.bytes);
      this.storedVectors -= Number(old.count);
    }
  }

  /** Up to `limit` cards without current vectors and not set aside, oldest rows first. */
  pending(limit: number): AgentCard[] {
    if (!this.key) return [];
    const rows = this.sql.exec(`SELECT c.card FROM cards c LEFT JOIN skill_vectors v ON v.name = c.name AND ${this.currentClause("v")} WHERE v.name IS NULL AND NOT EXISTS (SELECT 1 FROM set_aside_cards s WHERE s.name = c.name AND s.model = ?) ORDER BY c.rowid LIMIT ?`, ...this.currentBindings(), this.key.model, limit).toArray();
    return rows.map((row) => JSON.parse(String(row.card)) as AgentCard);
  }

  /** Whether the stored card of `name` is still `card` (a batch's card may change while it is embedded). */
  stillStored(card: AgentCard): boolean {
    return this.sql.exec(`SELECT 1 FROM cards WHERE name = ? AND card = ?`, card.name, JSON.stringify(card)).toArray().length > 0;
  }

  /** Every current card's vectors, to `visit`; a row whose bytes are not whole vectors is dropped (its card becomes pending). */
  load(visit: (name: string, vectors: CardVectors) => void): void {
    const broken: string[] = [];
    for (const row of this.sql.exec(`SELECT v.name, v.dims, v.count, v.data FROM skill_vectors v JOIN cards c ON c.name = v.name WHERE ${this.currentClause("v")}`, ...this.currentBindings())) {
      const data = row.data instanceof ArrayBuffer ? new Int8Array(row.data) : null;
      const vectors = data && fromBytes(data, Number(row.dims), Number(row.count));
      if (vectors) visit(String(row.name), vectors);
      else broken.push(String(row.name));
    }
    if (broken.length > 0) console.warn(`Directory vectors: ${broken.length} rows that do not decode (first ${broken[0]}); those cards are embedded again`);
    for (const name of broken) this.delete(name);
  }
}

/** The bytes of a view as SQLite takes a BLOB: an ArrayBuffer holding exactly them. */
function bytesOf(view: Int8Array): ArrayBuffer {
  const { buffer, byteOffset, byteLength } = view;
  return byteOffset === 0 && byteLength === buffer.byteLength && buffer instanceof ArrayBuffer ? buffer : view.slice().buffer;
}
