// The Directory object reached around the relay (directory scenario): its SQLite file, edited while no
// workerd runs, and its RPC through Miniflare's proxy (scripts/eval-search/directory-rpc.ts, shared with the search evaluator).
import { readdir, stat } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";
import type { Miniflare } from "miniflare";
import type { CardFile } from "../local-agent/society/card-file.ts";
import { parseCard } from "../worker/directory/card.ts";
import { DIRECTORY_NAME, directoryStats, directoryStub } from "../scripts/eval-search/directory-rpc.ts";
import { runClosedLoop } from "./http-client.ts";

export { DIRECTORY_NAME, directoryStats };

export const directoryDir = (persistDir: string) => path.join(persistDir, "do", "clawrelay-Directory");
/** A synthetic agent id for a card loaded without an agent (ag_ and 12 hex digits, as agentIdFor makes). */
export const syntheticAgentId = (i: number) => `ag_f${i.toString(16).padStart(11, "0")}`;

export async function diskUsage(dir: string): Promise<{ files: number; bytes: number }> {
  const files = (await readdir(dir, { recursive: true, withFileTypes: true })).filter((entry) => entry.isFile());
  const sizes = await Promise.all(files.map(async (entry) => (await stat(path.join(entry.parentPath, entry.name))).size));
  return { files: files.length, bytes: sizes.reduce((a, b) => a + b, 0) };
}

export async function editDirectoryDb(persistDir: string, edit: (db: DatabaseSync) => void): Promise<void> {
  const files = (await readdir(directoryDir(persistDir))).filter((file) => file.endsWith(".sqlite") && file !== "metadata.sqlite");
  if (files.length !== 1) throw new Error(`expected one Directory database in ${directoryDir(persistDir)}, found ${files.join(", ") || "none"}`);
  const db = new DatabaseSync(path.join(directoryDir(persistDir), files[0]!));
  try { edit(db); } finally { db.close(); }
}

/** 100,000 cards without 90,000 signed publishes: inserted as a publish stores them (parseCard's shape, signed_at 0). */
export function insertCards(db: DatabaseSync, cards: readonly CardFile[], firstIndex: number): void {
  const insert = db.prepare(`INSERT INTO cards (name, agent_id, card, signed_at) VALUES (?, ?, ?, 0)`);
  db.exec("BEGIN");
  for (const [i, card] of cards.entries()) {
    const parsed = parseCard({ ...card, agent_id: syntheticAgentId(firstIndex + i) }, card.name);
    insert.run(parsed.name, parsed.agent_id, JSON.stringify(parsed));
  }
  db.exec("COMMIT");
}

/** Marks the persisted index as format 0 (worker/directory/index-store.ts): the next start rebuilds it from every card, as every start did before. */
export function invalidateIndex(db: DatabaseSync): void {
  if (Number(db.prepare(`UPDATE search_meta SET json = '{"format":0}'`).run().changes) !== 1) throw new Error("the Directory has no persisted search index to invalidate");
}

export async function publishThroughRpc(mf: Miniflare, cards: readonly unknown[], signedAt: number, concurrency: number) {
  const stub = await directoryStub(mf);
  return runClosedLoop(cards.length, concurrency, async (i) => {
    const start = performance.now();
    const answer = await stub.publish(cards[i], signedAt);
    if (answer.ok !== true) throw new Error(`publishing card ${i} over RPC -> ${String(answer.code)}: ${String(answer.message)}`);
    return performance.now() - start;
  });
}
