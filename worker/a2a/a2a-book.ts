// An inbox's A2A settings and stored Agent Card, kept in SQLite's a2a table (storage/schema.ts, version 8)
// and held in memory once read; the last refused call (in memory only: a refusal writes nothing). The card
// is written only when it changed, so serving it costs no write. Held by inbox.ts; used by a2a-routes.ts;
// covered by test/worker/a2a-routes.test.ts.
import type { A2aView } from "../../protocol/index.ts";
import type { A2aSettings, StoredCard } from "./a2a-settings.ts";

export type A2aRefusal = NonNullable<A2aView["last_refusal"]>;

export class A2aBook {
  private readonly sql: SqlStorage;
  private loaded: { settings: A2aSettings | null; card: StoredCard | null } | null = null;
  private refusal: A2aRefusal | null = null;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  private state(): { settings: A2aSettings | null; card: StoredCard | null } {
    if (this.loaded) return this.loaded;
    const rows = new Map(this.sql.exec(`SELECT key, json FROM a2a`).toArray().map((row) => [String(row.key), JSON.parse(String(row.json)) as unknown]));
    this.loaded = { settings: (rows.get("settings") as A2aSettings | undefined) ?? null, card: (rows.get("card") as StoredCard | undefined) ?? null };
    return this.loaded;
  }

  settings(): A2aSettings | null {
    return this.state().settings;
  }

  card(): StoredCard | null {
    return this.state().card;
  }

  save(settings: A2aSettings): void {
    this.sql.exec(`INSERT OR REPLACE INTO a2a (key, json) VALUES ('settings', ?)`, JSON.stringify(settings));
    this.state().settings = settings;
  }

  /** Keeps the card served while the agent is offline; a card like the one kept writes nothing. */
  storeCard(card: Record<string, unknown>, nowMs: number): void {
    const json = JSON.stringify(card);
    if (this.state().card && JSON.stringify(this.state().card!.card) === json) return;
    const stored: StoredCard = { card, stored_at: nowMs };
    this.sql.exec(`INSERT OR REPLACE INTO a2a (key, json) VALUES ('card', ?)`, JSON.stringify(stored));
    this.state().card = stored;
  }

  /** Turns A2A off: the settings and the card go; nothing of a call was ever kept. */
  remove(): boolean {
    const had = this.settings() !== null;
    this.sql.exec(`DELETE FROM a2a`);
    this.loaded = { settings: null, card: null };
    this.refusal = null;
    return had;
  }

  noteRefusal(refusal: A2aRefusal): void {
    this.refusal = refusal;
  }

  view(): A2aView {
    const { settings, card } = this.state();
    return {
      enabled: settings !== null,
      peers: settings?.peers.map((p) => p.name) ?? [],
      deadline_sec: settings?.deadline_sec ?? null,
      card_stored_at: card?.stored_at ?? null,
      last_refusal: this.refusal,
    };
  }
}
