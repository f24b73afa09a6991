// The payload of the CPU rows (relay-cpu.ts) and of the intake steps timed inside workerd (verify-worker.ts):
// free of Node imports, since the Worker's bundle takes it too.
import { utf8 } from "../protocol/encoding.ts";
import { rng } from "./seeded-random.ts";

/**
 * A JSON payload of about `bytes`, of words with some non-ASCII: "records", many small ones with ids,
 * numbers and tags (a structured result: JCS and the parse work per value); "text", one long text and a
 * title (a document: the work goes per byte).
 */
export function payloadOf(bytes: number, shape: "records" | "text" = "records", seed = 7): Record<string, unknown> {
  const random = rng(seed);
  const words = ["relay", "inbox", "agent", "message", "thread", "résumé", "naïve", "über", "日本語", "review", "deploy", "status", "😀", "ack"];
  const sentence = (n: number) => Array.from({ length: n }, () => words[Math.floor(random() * words.length)]!).join(" ");
  if (shape === "text") {
    const lines: string[] = [];
    for (let size = 40; size < bytes - 40; size += utf8(lines[lines.length - 1]!).byteLength + 2) lines.push(sentence(10));
    return { title: sentence(5), text: lines.join("\n") };
  }
  const items: Record<string, unknown>[] = [];
  const payload: Record<string, unknown> = { text: sentence(12), items };
  for (let i = 0, size = utf8(JSON.stringify(payload)).byteLength; size < bytes - 200; i++) {
    const item = { id: `item-${i}`, title: sentence(4), body: sentence(20), n: Math.floor(random() * 1e6), score: Math.round(random() * 1000) / 1000, tags: [sentence(1), sentence(1)], done: random() < 0.5 };
    items.push(item);
    size += utf8(JSON.stringify(item)).byteLength + 1;
  }
  return payload;
}

