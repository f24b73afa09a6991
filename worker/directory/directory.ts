// The agent directory: one Durable Object holding every published card in SQLite and, in memory,
// the search index built from them at start-up (plus skill vectors when Workers AI is bound). Search is off the message path, so one object
// serves the whole relay (README, "Directory"): a 10,000-agent index answers in milliseconds.
import { DurableObject } from "cloudflare:workers";
import { RelayError } from "../../protocol/index.ts";
import type { Env } from "../env.ts";
import { asRpcResult } from "../rpc-result.ts";
import type { RpcResult } from "../rpc-result.ts";
import { SearchIndex } from "./search-index.ts";
import { SemanticIndex, combineHybrid, skillText, workersAiEmbedder } from "./semantic-index.ts";
import type { Embedder } from "./semantic-index.ts";
import type { AgentCard, SearchResult } from "./search-index.ts";

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

export class Directory extends DurableObject<Env> {
  private readonly index = new SearchIndex();
  private readonly semantic = new SemanticIndex();
  private readonly cards = new Map<string, AgentCard>();
  private embedder: Embedder | null;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    for (const statement of SCHEMA) ctx.storage.sql.exec(statement);
    for (const row of ctx.storage.sql.exec(`SELECT card FROM cards`)) {
      const card = JSON.parse(String(row.card)) as AgentCard;
      this.cards.set(card.name, card);
      this.index.upsert(card);
    }
    for (const row of ctx.storage.sql.exec(`SELECT name, json FROM vectors`)) {
      const card = this.cards.get(String(row.name));
      if (card) this.semantic.upsert(card, (JSON.parse(String(row.json)) as number[][]).map((v) => Float32Array.from(v)));
    }
    this.embedder = env.AI ? workersAiEmbedder(env.AI, env.EMBEDDING_MODEL ?? DEFAULT_EMBEDDING_MODEL) : null;
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
        this.ctx.storage.sql.exec(`INSERT OR REPLACE INTO vectors (name, json) VALUES (?, ?)`, card.name, JSON.stringify(vectors.map((v) => [...v])));
        this.semantic.upsert(card, vectors);
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
    const sql = this.ctx.storage.sql;
    const owner = sql.exec(`SELECT agent_id, signed_at FROM cards WHERE name = ?`, card.name).toArray()[0];
    if (owner && owner.agent_id !== card.agent_id) {
      throw new RelayError(409, "name_taken", `the name "${card.name}" belongs to another agent; choose another name`);
    }
    if (owner && Number(owner.signed_at) > signedAt) {
      throw new RelayError(409, "stale_card", "a newer version of this card was already published; sign the request again");
    }
    const previous = sql.exec(`SELECT name FROM cards WHERE agent_id = ? AND name != ?`, card.agent_id, card.name).toArray()[0];
    if (previous) this.forget(String(previous.name));
    sql.exec(`INSERT OR REPLACE INTO cards (name, agent_id, card, signed_at) VALUES (?, ?, ?, ?)`, card.name, card.agent_id, JSON.stringify(card), signedAt);
    sql.exec(`DELETE FROM vectors WHERE name = ?`, card.name);
    this.semantic.remove(card.name);
    this.cards.set(card.name, card);
    this.index.upsert(card);
    return { created: !owner };
  }

  private remove(name: string, agentId: string): void {
    const owner = this.ctx.storage.sql.exec(`SELECT agent_id FROM cards WHERE name = ?`, name).toArray()[0];
    if (!owner) throw new RelayError(404, "agent_not_found", `no agent named "${name}" is in the directory`);
    if (owner.agent_id !== agentId) throw new RelayError(403, "not_owner", `"${name}" belongs to another agent`);
    this.forget(name);
  }

  private forget(name: string): void {
    this.ctx.storage.sql.exec(`DELETE FROM cards WHERE name = ?`, name);
    this.ctx.storage.sql.exec(`DELETE FROM vectors WHERE name = ?`, name);
    this.cards.delete(name);
    this.index.remove(name);
    this.semantic.remove(name);
  }

  async card(name: string): Promise<AgentCard | null> {
    const row = this.ctx.storage.sql.exec(`SELECT card FROM cards WHERE name = ?`, name).toArray()[0];
    return row ? (JSON.parse(String(row.card)) as AgentCard) : null;
  }

  /** Lexical ranking; hybrid with the semantic scores when an embeddings binding is present. */
  async search(query: string, limit: number): Promise<SearchResult> {
    if (!this.embedder || this.semantic.size === 0) return this.index.find(query, limit);
    const lexical = this.index.find(query, HYBRID_LEXICAL_POOL);
    let queryVector: Float32Array | undefined;
    try {
      [queryVector] = await this.embedder([query]);
    } catch (err) {
      console.error("Directory.search: embeddings unavailable, lexical only:", err);
    }
    if (!queryVector) return { hits: lexical.hits.slice(0, limit), total: lexical.total };
    return combineHybrid(lexical, this.semantic.scores(queryVector), (name) => this.cards.get(name), limit);
  }
}
