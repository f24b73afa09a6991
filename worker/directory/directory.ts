// The agent directory: one Durable Object holding every published card in SQLite and the search index
// persisted beside them (index-store.ts), loaded on the first search or publish: a start-up reads the
// index's unit arrays, not every card, so it stays quick as the directory grows (docs/directory.md, "Scale").
// Skill vectors too when Workers AI is bound. Search is off the message path, so one object serves the
// whole relay.
import { DurableObject } from "cloudflare:workers";
import { RelayError } from "../../protocol/index.ts";
import type { DirectoryRpc, Env } from "../env.ts";
import { asRpcResult } from "../rpc-result.ts";
import type { RpcResult } from "../rpc-result.ts";
import { StoredIndex } from "./index-store.ts";
import type { DirectoryStats } from "./index-stats.ts";
import { SemanticIndex, combineHybrid, skillText, workersAiEmbedder } from "./semantic-index.ts";
import type { Embedder } from "./semantic-index.ts";
import type { AgentCard } from "./card.ts";
import type { SearchResult } from "./search-index.ts";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS cards (
     name TEXT PRIMARY KEY,
     agent_id TEXT NOT NULL UNIQUE,
     card TEXT NOT NULL,
     signed_at INTEGER NOT NULL
   )`,
  // Skill vectors, only where the deployment has an embeddings binding.
  `CREATE TABLE IF NOT EXISTS vectors (name TEXT PRIMARY KEY, json TEXT NOT NULL)`,
];

export const DEFAULT_EMBEDDING_MODEL = "@cf/baai/bge-small-en-v1.5";
/** Lexical hits considered for the hybrid mix, before the final limit. */
const HYBRID_LEXICAL_POOL = 50;

export class Directory extends DurableObject<Env> implements DirectoryRpc {
  private stored: StoredIndex | null = null;
  private semantic: SemanticIndex | null = null;
  private embedder: Embedder | null;
  /** Rows the cards and vectors tables took since the object started (the index counts its own). */
  private cardRowsWritten = 0;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    for (const statement of SCHEMA) ctx.storage.sql.exec(statement);
    this.embedder = env.AI ? workersAiEmbedder(env.AI, env.EMBEDDING_MODEL ?? DEFAULT_EMBEDDING_MODEL) : null;
  }

  /**
   * The search index, opened on first use so a card look-up on a cold object does not wait for it. It
   * must be open before a card row changes: it checks itself against the cards table as it loads.
   */
  private get index(): StoredIndex {
    return (this.stored ??= new StoredIndex(this.ctx.storage));
  }

  /** Skill vectors, read on the first hybrid search (none are stored without an embeddings binding). */
  private get vectors(): SemanticIndex {
    if (!this.semantic) {
      this.semantic = new SemanticIndex();
      for (const row of this.ctx.storage.sql.exec(`SELECT c.card, v.json FROM vectors v JOIN cards c ON c.name = v.name`)) {
        this.semantic.upsert(JSON.parse(String(row.card)) as AgentCard, (JSON.parse(String(row.json)) as number[][]).map((v) => Float32Array.from(v)));
      }
    }
    return this.semantic;
  }

  private write(query: string, ...bindings: unknown[]): void {
    this.cardRowsWritten += this.ctx.storage.sql.exec(query, ...bindings).rowsWritten;
  }

  /** Replaces the embeddings source (tests use a stand-in for Workers AI); null = lexical only. */
  useEmbedder(embedder: Embedder | null): void {
    this.embedder = embedder;
  }

  /**
   * Publishes or updates `card`. A name stays with the first agent that took it until released;
   * an agent holds one name (publishing another releases the old). `signedAt` orders updates, so a
   * replayed older publish cannot undo a newer one.
   */
  async publish(card: AgentCard, signedAt: number): Promise<RpcResult<{ created: boolean }>> {
    // Embedded before the ownership checks, so the checks and writes below run without an await
    // between them (no other publish can interleave).
    const vectors = await this.embedCard(card);
    return asRpcResult(() => {
      const result = this.store(card, signedAt);
      if (vectors) {
        this.write(`INSERT OR REPLACE INTO vectors (name, json) VALUES (?, ?)`, card.name, JSON.stringify(vectors.map((v) => [...v])));
        this.semantic?.upsert(card, vectors);
      }
      return result;
    });
  }

  private async embedCard(card: AgentCard): Promise<Float32Array[] | null> {
    if (!this.embedder) return null;
    const texts = card.skills.length > 0 ? card.skills.map((skill) => skillText(card, skill)) : [skillText(card, null)];
    try {
      return await this.embedder(texts);
    } catch (err) {
      console.error(`Directory.publish: embeddings unavailable for ${card.name}, lexical only:`, err);
      return null;
    }
  }

  release(name: string, agentId: string): Promise<RpcResult<void>> {
    return asRpcResult(() => this.remove(name, agentId));
  }

  private store(card: AgentCard, signedAt: number): { created: boolean } {
    const index = this.index;
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
      return { created: false };
    }
    this.write(`INSERT OR REPLACE INTO cards (name, agent_id, card, signed_at) VALUES (?, ?, ?, ?)`, card.name, card.agent_id, json, signedAt);
    this.write(`DELETE FROM vectors WHERE name = ?`, card.name);
    this.semantic?.remove(card.name);
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
    const index = this.index;
    this.write(`DELETE FROM cards WHERE name = ?`, name);
    this.write(`DELETE FROM vectors WHERE name = ?`, name);
    index.remove(name);
    this.semantic?.remove(name);
  }

  async card(name: string): Promise<AgentCard | null> {
    const row = this.ctx.storage.sql.exec(`SELECT card FROM cards WHERE name = ?`, name).toArray()[0];
    return row ? (JSON.parse(String(row.card)) as AgentCard) : null;
  }

  /** Lexical ranking; hybrid with the semantic scores when an embeddings binding is present. */
  async search(query: string, limit: number): Promise<SearchResult> {
    const index = this.index;
    if (!this.embedder || this.vectors.size === 0) return index.find(query, limit);
    const lexical = index.find(query, HYBRID_LEXICAL_POOL);
    let queryVector: Float32Array | undefined;
    try {
      [queryVector] = await this.embedder([query]);
    } catch (err) {
      console.error("Directory.search: embeddings unavailable, lexical only:", err);
    }
    if (!queryVector) return { hits: lexical.hits.slice(0, limit), total: lexical.total };
    const semantic = this.vectors;
    return combineHybrid(lexical, semantic.scores(queryVector), (name) => semantic.card(name), limit);
  }

  /** The search index's figures (npm run bench:directory, tests): size, memory, rows written. */
  async indexStats(): Promise<DirectoryStats> {
    return { ...this.index.stats(), cardRowsWritten: this.cardRowsWritten };
  }
}
