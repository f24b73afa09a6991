// Reads the recordings of the real hub in test/fixtures/hub/ (README.md there lists the 33 facts) for
// the tests that hold the stand-in hub to them, and a capture endpoint like the one the recordings were
// made with: a real server that keeps every request byte for byte (header names in order, client port)
// and answers as the test says (status, after a hold). Used by test/node/agentline-hub*.test.ts.
import { readFileSync } from "node:fs";
import { WebSocket } from "ws";
import { createServer } from "node:http";
import { join } from "node:path";
import type { Envelope } from "./agentline-hub-wire.ts";

const ROOT = join(import.meta.dirname, "../../fixtures/hub");

export interface Exchange {
  label: string | null;
  direction: "client->hub" | "hub->agent";
  request: { method: string; path: string; headers: Record<string, string>; body?: unknown; raw?: string; raw_bytes?: number };
  response: { status: number; headers?: Record<string, string>; body: unknown; raw?: string };
  [extra: string]: unknown;
}

export interface Fixture {
  what: string;
  agents?: Record<string, { display_name: string; key_id: string; pubkey: string; second_key?: { key_id: string; pubkey: string } }>;
  exchanges: Exchange[];
  notes: string[];
  [context: string]: unknown;
}

export function fixture(generation: "webhook-era" | "current", name: string): Fixture {
  return JSON.parse(readFileSync(join(ROOT, generation, `${name}.json`), "utf8")) as Fixture;
}

/** The exchange with this label (the first, or the n-th of several). */
export function exchange(f: Fixture, label: string, nth = 0): Exchange {
  const found = f.exchanges.filter((e) => e.label === label)[nth];
  if (!found) throw new Error(`fixture has no exchange labelled ${JSON.stringify(label)} (#${nth})`);
  return found;
}

/** The (n-th) exchange whose request has this method and a path that ends as given. */
export function byRequest(f: Fixture, method: string, pathEnd: string, nth = 0): Exchange {
  const found = f.exchanges.filter((e) => e.request.method === method && e.request.path.endsWith(pathEnd))[nth];
  if (!found) throw new Error(`fixture has no ${method} …${pathEnd} exchange (#${nth})`);
  return found;
}

/** A recorded raw body with the recording's ids and keys replaced by this run's. */
export const swap = (raw: string, pairs: [string, string][]) => pairs.reduce((text, [from, to]) => text.replaceAll(from, to), raw);

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check`; the error says what was awaited (the time only bounds a wait for something that never comes). */
export async function until(what: string, check: () => boolean, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(10);
  }
}

export const hubToAgent = (f: Fixture) => f.exchanges.filter((e) => e.direction === "hub->agent");

/** Every signed envelope a fixture holds (sent, recorded in answers, or context), with where it was found. */
export function envelopesIn(value: unknown, at = "$", found: { at: string; envelope: Envelope }[] = []): { at: string; envelope: Envelope }[] {
  if (Array.isArray(value)) value.forEach((v, i) => envelopesIn(v, `${at}[${i}]`, found));
  else if (typeof value === "object" && value !== null) {
    const v = value as Record<string, unknown>;
    const sig = v.sig as { value?: unknown } | undefined;
    if (typeof v.msg_id === "string" && typeof sig?.value === "string" && sig.value !== "") found.push({ at, envelope: v as unknown as Envelope });
    else for (const [key, inner] of Object.entries(v)) envelopesIn(inner, `${at}.${key}`, found);
  }
  return found;
}

export interface Captured { path: string; rawHeaders: string[]; body: string; clientPort: number; at: number }
export interface CaptureServer {
  url: string;
  hits: Captured[];
  /** Status (and hold in ms) for a request; default 200 at once. */
  answer: (hit: Captured) => { status: number; holdMs?: number };
  close(): Promise<void>;
}

export async function startCapture(): Promise<CaptureServer> {
  const hits: Captured[] = [];
  const capture: CaptureServer = {
    url: "", hits, answer: () => ({ status: 200 }),
    close: () => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const hit: Captured = { path: req.url ?? "", rawHeaders: req.rawHeaders, body: Buffer.concat(chunks).toString("utf8"), clientPort: req.socket.remotePort ?? 0, at: Date.now() };
      hits.push(hit);
      const { status, holdMs = 0 } = capture.answer(hit);
      setTimeout(() => res.writeHead(status, { "content-type": "application/json" }).end(status < 300 ? "{}" : '{"error":"boom"}'), holdMs);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("capture server did not get a TCP port");
  capture.url = `http://127.0.0.1:${address.port}`;
  return capture;
}

const expOf = (token: string) => (JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as { exp: number }).exp;
/** Two tokens minted in the same second (tried again when a second boundary fell between them). */
export async function sameSecondPair(mint: () => Promise<string>): Promise<[string, string]> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const pair: [string, string] = [await mint(), await mint()];
    if (expOf(pair[0]) === expOf(pair[1])) return pair;
  }
  throw new Error("no two tokens minted within one second in five tries");
}

export interface TestSocket {
  ws: WebSocket;
  /** Text frames from the hub, in order. */
  frames: string[];
  closed: Promise<{ code: number; reason: string }>;
  send(text: string): void;
  /** Resolves when the hub has sent `count` frames in all. */
  frameCount(count: number, ms?: number): Promise<void>;
}

/** A client of the hub's /hub/ws (the `ws` package), keeping every frame it gets. */
export async function openSocket(hubUrl: string): Promise<TestSocket> {
  const ws = new WebSocket(`${hubUrl.replace(/^http/, "ws")}/hub/ws`);
  const frames: string[] = [];
  const waiters: (() => void)[] = [];
  ws.on("message", (data: Buffer) => {
    frames.push(data.toString("utf8"));
    for (const wake of waiters.splice(0)) wake();
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on("close", (code, reason) => resolve({ code, reason: reason.toString("utf8") })));
  ws.on("error", () => undefined);
  await new Promise<void>((resolve, reject) => (ws.once("open", () => resolve()), ws.once("error", reject)));
  const frameCount = async (count: number, ms = 15_000) => {
    const deadline = Date.now() + ms;
    while (frames.length < count) {
      if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${count} frames from /hub/ws (have ${JSON.stringify(frames)})`);
      await new Promise<void>((resolve) => (waiters.push(resolve), setTimeout(resolve, 50)));
    }
  };
  return { ws, frames, closed, send: (text) => ws.send(text), frameCount };
}
