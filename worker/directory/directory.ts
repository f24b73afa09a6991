// The agent directory: one Durable Object holding every published card in SQLite and, in memory,
// the search index built from them at start-up. Search is off the message path, so one object
// serves the whole relay (README, "Directory"): a 10,000-agent index answers in milliseconds.
import { DurableObject } from "cloudflare:workers";
import { RelayError } from "../../protocol/index.ts";
import type { Env } from "../env.ts";
import { asRpcResult } from "../rpc-result.ts";
import type { RpcResult } from "../rpc-result.ts";
import { SearchIndex } from "./search-index.ts";
import type { AgentCard, SearchHit } from "./search-index.ts";

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS cards (
     name TEXT PRIMARY KEY,
     agent_id TEXT NOT NULL UNIQUE,
     card TEXT NOT NULL,
     signed_at INTEGER NOT NULL
   )`,
];

export class Directory extends DurableObject<Env> {
  private readonly index = new SearchIndex();

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    for (const statement of SCHEMA) ctx.storage.sql.exec(statement);
    for (const row of ctx.storage.sql.exec(`SELECT card FROM cards`)) this.index.upsert(JSON.parse(String(row.card)) as AgentCard);
  }

  /**
   * Publishes or updates `card`. A name stays with the first agent that took it until released;
   * an agent holds one name (publishing another releases the old). `signedAt` orders updates, so a
   * replayed older publish cannot undo a newer one.
   */
  publish(card: AgentCard, signedAt: number): Promise<RpcResult<{ created: boolean }>> {
    return asRpcResult(() => this.store(card, signedAt));
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
    if (previous) {
      sql.exec(`DELETE FROM cards WHERE name = ?`, previous.name);
      this.index.remove(String(previous.name));
    }
    sql.exec(`INSERT OR REPLACE INTO cards (name, agent_id, card, signed_at) VALUES (?, ?, ?, ?)`, card.name, card.agent_id, JSON.stringify(card), signedAt);
    this.index.upsert(card);
    return { created: !owner };
  }

  private remove(name: string, agentId: string): void {
    const owner = this.ctx.storage.sql.exec(`SELECT agent_id FROM cards WHERE name = ?`, name).toArray()[0];
    if (!owner) throw new RelayError(404, "agent_not_found", `no agent named "${name}" is in the directory`);
    if (owner.agent_id !== agentId) throw new RelayError(403, "not_owner", `"${name}" belongs to another agent`);
    this.ctx.storage.sql.exec(`DELETE FROM cards WHERE name = ?`, name);
    this.index.remove(name);
  }

  async card(name: string): Promise<AgentCard | null> {
    const row = this.ctx.storage.sql.exec(`SELECT card FROM cards WHERE name = ?`, name).toArray()[0];
    return row ? (JSON.parse(String(row.card)) as AgentCard) : null;
  }

  async search(query: string, limit: number): Promise<SearchHit[]> {
    return this.index.search(query, limit);
  }
}
