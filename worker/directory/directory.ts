// The agent directory: one Durable Object holding every published card in SQLite and the search index
// persisted beside them (index-store.ts), loaded on the first search or publish: a start-up reads the
// index's unit arrays, not every card, so it stays quick as the directory grows (docs/directory.md, "Scale").
// Skill vectors too when an embeddings binding is set (embeddings/card-embeddings.ts: search is hybrid once every card
// has vectors of the current model; the alarm embeds the cards still pending). Search is off the message
// path, so one object serves the whole relay.
import { DurableObject } from "cloudflare:workers";
import { RelayError } from "../../protocol/index.ts";
import type { DirectoryRpc, Env } from "../env.ts";
import { asRpcResult } from "../rpc-result.ts";
import type { RpcResult } from "../rpc-result.ts";
import { StoredIndex } from "./index-store.ts";
import type { DirectoryStats } from "./index-stats.ts";
import { CardEmbeddings } from "./embeddings/card-embeddings.ts";
import type { Embedded } from "./embeddings/card-embeddings.ts";
import type { EmbedDeadlines } from "./embeddings/embed-calls.ts";
import { EMBEDDING_MODELS, PRODUCTION_EMBEDDING_MODEL, floorFor } from "./embeddings/embedding-models.ts";
import { HYBRID, combineHybrid } from "./embeddings/hybrid-rank.ts";
import { workersAiEmbedder } from "./embeddings/semantic-index.ts";
import type { EmbeddingSource } from "./embeddings/semantic-index.ts";
import type { AgentCard } from "./card.ts";
import type { SearchResult } from "./search-index.ts";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS cards (
     name TEXT PRIMARY KEY,
     agent_id TEXT NOT NULL UNIQUE,
     card TEXT NOT NULL,
     signed_at INTEGER NOT NULL
   )`,
];

/** The embeddings source the deployment binds: env.AI with EMBEDDING_MODEL (its floor from the table or EMBEDDING_FLOOR). */
export function sourceFromEnv(env: Env): EmbeddingSource | null {
  if (!env.AI) return null;
  const model = env.EMBEDDING_MODEL ?? PRODUCTION_EMBEDDING_MODEL;
  const dims = EMBEDDING_MODELS[model]?.dimensions ?? null;
  const floor = floorFor(model, env.EMBEDDING_FLOOR);
  // Said once per object start: an unusable floor (a typo such as "0,6") otherwise only shows as search by words alone.
  if (floor === null && env.EMBEDDING_FLOOR?.trim()) console.warn(`Directory: EMBEDDING_FLOOR "${env.EMBEDDING_FLOOR}" is not a cosine between 0 and 1; search ranks lexically (by words alone) until it is fixed`);
  return { model, dims, floor, embed: workersAiEmbedder(env.AI, model, dims) };
}

export class Directory extends DurableObject<Env> implements DirectoryRpc {
  private stored: StoredIndex | null = null;
  private semantic: CardEmbeddings | null = null;
  private source: EmbeddingSource | null;
  /** When the alarm for the cards to embed is known to be set (checked against storage once per object start). */
  private alarmAt: number | null = null;
  /** Rows the cards and vectors tables took since the object started (the index counts its own). */
  private cardRowsWritten = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    for (const statement of SCHEMA) ctx.storage.sql.exec(statement);
    this.source = sourceFromEnv(env);
  }

  /** The semantic half, opened on first use; like the index, it must be open before a card row changes (it counts them as it opens). */
  private get embeddings(): CardEmbeddings {
    return (this.semantic ??= new CardEmbeddings(this.ctx.storage, this.source));
  }

  /**
   * The search index, opened on first use so a card look-up on a cold object does not wait for it. It
   * must be open before a card row changes: it checks itself against the cards table as it loads.
   */
  private get index(): StoredIndex {
    return (this.stored ??= new StoredIndex(this.ctx.storage));
  }

  private write(query: string, ...bindings: unknown[]): void {
    this.cardRowsWritten += this.ctx.storage.sql.exec(query, ...bindings).rowsWritten;
  }

  /** Replaces the embeddings source (tests: a stand-in model, shorter deadlines); null = lexical only. Vectors of another model become pending. */
  useEmbedder(source: EmbeddingSource | null, deadlines?: EmbedDeadlines): void {
    this.source = source;
    if (this.semantic || deadlines) this.embeddings.use(source, deadlines);
    this.alarmAt = null;
  }

  /**
   * Publishes or updates `card`. A name stays with the first agent that took it until released;
   * an agent holds one name (publishing another releases the old). `signedAt` orders updates, so a
   * replayed older publish cannot undo a newer one.
   */
  async publish(card: AgentCard, signedAt: number): Promise<RpcResult<{ created: boolean }>> {
    // Embedded before the ownership checks, so the checks and writes below run without an await
    // between them (no other publish can interleave). A failure leaves the card pending for the alarm.
    const embedded = await this.embeddings.embedCard(card);
    const result = await asRpcResult(() => this.store(card, signedAt, embedded));
    await this.scheduleEmbedding();
    return result;
  }

  release(name: string, agentId: string): Promise<RpcResult<void>> {
    return asRpcResult(() => this.remove(name, agentId));
  }

  private store(card: AgentCard, signedAt: number, embedded: Embedded | null): { created: boolean } {
    const index = this.index;
    const embeddings = this.embeddings;
    const sql = this.ctx.storage.sql;
    const owner = sql.exec(`SELECT agent_id, signed_at, card FROM cards WHERE name = ?`, card.name).toArray()[0];
    if (owner && owner.agent_id !== card.agent_id) {
      throw new RelayError(409, "name_taken", `the name "${card.name}" belongs to another agent; choose another name`);
    }
    if (owner && Number(owner.signed_at) > signedAt) {
      throw new RelayError(409, "stale_card", "a newer version of this card was already published; sign the request again");
    }
    const previous = sql.exec(`SELECT name FROM cards WHERE agent_id = ? AND name != ?`, card.agent_id, card.name).toArray()[0];
    if (previous) this.forget(String(previous.name));
    const json = JSON.stringify(card);
    if (owner && String(owner.card) === json) {
      // The same card again (an agent restarting): only its signing time moves, the index stays.
      this.write(`UPDATE cards SET signed_at = ? WHERE name = ?`, signedAt, card.name);
      embeddings.cardStored(card.name, false, false, embedded);
      return { created: false };
    }
    this.write(`INSERT OR REPLACE INTO cards (name, agent_id, card, signed_at) VALUES (?, ?, ?, ?)`, card.name, card.agent_id, json, signedAt);
    embeddings.cardStored(card.name, !owner, true, embedded);
    index.upsert(card);
    return { created: !owner };
  }

  private remove(name: string, agentId: string): void {
    const owner = this.ctx.storage.sql.exec(`SELECT agent_id FROM cards WHERE name = ?`, name).toArray()[0];
    if (!owner) throw new RelayError(404, "agent_not_found", `no agent named "${name}" is in the directory`);
    if (owner.agent_id !== agentId) throw new RelayError(403, "not_owner", `"${name}" belongs to another agent`);
    this.forget(name);
  }

  private forget(name: string): void {
    // Both open before the card row goes: each counts the cards as it opens.
    const index = this.index;
    const embeddings = this.embeddings;
    this.write(`DELETE FROM cards WHERE name = ?`, name);
    embeddings.cardForgotten(name);
    index.remove(name);
  }

  async card(name: string): Promise<AgentCard | null> {
    const row = this.ctx.storage.sql.exec(`SELECT card FROM cards WHERE name = ?`, name).toArray()[0];
    return row ? (JSON.parse(String(row.card)) as AgentCard) : null;
  }

  /** Hybrid when every card has vectors of a calibrated model (embeddings/card-embeddings.ts); lexical otherwise, and whenever the model fails. */
  async search(query: string, limit: number): Promise<SearchResult> {
    await this.scheduleEmbedding();
    const semantic = await this.embeddings.closest(query);
    const index = this.index;
    if (!semantic) return index.find(query, limit);
    return combineHybrid(index.find(query, HYBRID.lexicalPool, true), semantic.closest, semantic.floor, limit, (names) => this.cardsNamed(names));
  }

  private cardsNamed(names: string[]): Map<string, AgentCard> {
    const rows = this.ctx.storage.sql.exec(`SELECT name, card FROM cards WHERE name IN (${names.map(() => "?").join(", ")})`, ...names).toArray();
    return new Map(rows.map((row) => [String(row.name), JSON.parse(String(row.card)) as AgentCard]));
  }

  /**
   * Sets the alarm for the cards to embed (or set aside and due again), unless one is set no later: an
   * outage's pause keeps its time, a day's wait for set-aside cards gives way to a card newly pending.
   */
  private async scheduleEmbedding(): Promise<void> {
    // Searches call this: with an alarm set and no card pending, only set-aside cards could be due, and the
    // alarm reschedules them itself when it runs — no need to read their times on every search.
    if (this.alarmAt !== null && this.embeddings.pendingCards === 0) return;
    const at = this.embeddings.nextAlarmAt(Date.now());
    if (at === null || (this.alarmAt !== null && this.alarmAt <= at)) return;
    const set = await this.ctx.storage.getAlarm();
    if (set === null || set > at) await this.ctx.storage.setAlarm(at);
    this.alarmAt = set === null || set > at ? at : set;
  }

  /** Embeds a batch of pending cards (embeddings/embed-alarm.ts); again at once while cards remain, after a growing pause on an outage. */
  override async alarm(): Promise<void> {
    this.alarmAt = null;
    let next: number | null;
    try {
      const outcome = await this.embeddings.embedPendingBatch();
      next = outcome === "more" ? Date.now() : outcome === "failed" ? Date.now() + this.embeddings.retryDelayMs : this.embeddings.nextAlarmAt(Date.now());
    } catch (err) {
      // Not the model (embeddings/embed-alarm.ts catches its failures): storage. Retried like an outage.
      console.error("Directory.alarm: embedding the pending cards failed:", err);
      next = Date.now() + this.embeddings.retryDelayMs;
    }
    if (next !== null) {
      await this.ctx.storage.setAlarm(next);
      this.alarmAt = next;
    }
  }

  /** The search index's figures (npm run bench:directory, tests): size, memory, rows written, embeddings. */
  async indexStats(): Promise<DirectoryStats> {
    await this.scheduleEmbedding();
    return { ...this.index.stats(), cardRowsWritten: this.cardRowsWritten + this.embeddings.rowsWritten, embeddings: this.embeddings.stats() };
  }
}
