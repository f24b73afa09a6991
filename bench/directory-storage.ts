// The Directory object's SQLite file in Miniflare's persisted storage, edited while no workerd runs:
// bench/directory-bench.ts grows the directory to 100,000 cards without 90,000 signed publishes (the
// cards table is what a publish writes), and marks the persisted search index as an older format, so the
// next start rebuilds it from every card, as every start did before the index was persisted.
import { readdir } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import { parseCard } from "../worker/directory/card.ts";
import type { CardFile } from "../local-agent/society/card-file.ts";

/** The one object of the Directory class (Miniflare keeps a metadata.sqlite beside it). */
export async function directoryDatabase(persistDir: string): Promise<string> {
  const dir = path.join(persistDir, "do", "clawrelay-Directory");
  const files = (await readdir(dir)).filter((file) => file.endsWith(".sqlite") && file !== "metadata.sqlite");
  if (files.length !== 1) throw new Error(`expected one Directory database in ${dir}, found ${files.join(", ") || "none"}`);
  return path.join(dir, files[0]!);
}

/** A synthetic agent id for a card loaded without an agent (ag_ and 12 hex digits, as agentIdFor makes). */
export const syntheticAgentId = (i: number) => `ag_f${i.toString(16).padStart(11, "0")}`;

/** Inserts cards as a publish stores them (parseCard's shape, signed_at 0), in one transaction. */
export function insertCards(file: string, cards: readonly CardFile[], firstIndex: number): void {
  const db = new DatabaseSync(file);
  try {
    const insert = db.prepare(`INSERT INTO cards (name, agent_id, card, signed_at) VALUES (?, ?, ?, 0)`);
    db.exec("BEGIN");
    cards.forEach((card, i) => {
      const parsed = parseCard({ ...card, agent_id: syntheticAgentId(firstIndex + i) }, card.name);
      insert.run(parsed.name, parsed.agent_id, JSON.stringify(parsed));
    });
    db.exec("COMMIT");
  } finally {
    db.close();
  }
}

/** Marks the persisted index as format 0: the next start must rebuild it (worker/directory/index-store.ts). */
export function invalidateIndex(file: string): void {
  const db = new DatabaseSync(file);
  try {
    const changed = db.prepare(`UPDATE search_meta SET json = '{"format":0}'`).run().changes;
    if (Number(changed) !== 1) throw new Error(`${file} has no persisted search index to invalidate`);
  } finally {
    db.close();
  }
}
