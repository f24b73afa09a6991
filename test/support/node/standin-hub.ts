// A stand-in Agentline hub for tests: a real HTTP server on an ephemeral loopback port.
// It serves key look-ups, receipt posting and token refresh like a hub, the pull inbox and history
// (standin-hub-inbox.ts), and a /__test API to script and inspect it — also what workerd printed of the
// relay's own resets (runtime-log.ts), for the test that provoked one. Tests share one instance, so
// everything is keyed by agent id (each test makes fresh agents).
import { createPublicKey, verify } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { StandinAgents } from "./standin-hub-inbox.ts";
import type { InboxScript } from "./standin-hub-inbox.ts";
import type { RuntimeLog } from "./runtime-log.ts";

interface HubKey {
  key_id: string;
  pubkey: string;
  state: string;
  agent_id?: string;
}

export interface StandinHub {
  url: string;
  server: Server;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const CHUNK = Buffer.alloc(64 * 1024, 0x61);

/**
 * A scripted pull answer. `bytes`: a JSON page padded to that size, chunked without a length, as fast as
 * the reader takes it; what was written by the time the connection ended is kept for the test.
 */
function writeScript(res: ServerResponse, script: InboxScript, written: (bytes: number) => void): void {
  if (script.kind === "redirect") {
    res.writeHead(script.status, { location: script.location, "content-type": "application/json" });
    return void res.end('{"detail":"moved"}');
  }
  if (script.kind === "page") {
    res.writeHead(200, { "content-type": "application/json" });
    return void res.end(script.text);
  }
  res.writeHead(200, { "content-type": "application/json" });
  let sent = 0;
  res.on("close", () => written(sent));
  const head = '{"messages":[],"pad":"';
  res.write(head);
  sent += head.length;
  const more = (): void => {
    while (sent + CHUNK.length < script.bytes - 2) {
      sent += CHUNK.length;
      if (!res.write(CHUNK)) return void res.once("drain", more);
    }
    sent += 2;
    res.end('"}');
  };
  more();
}

function json(res: ServerResponse, status: number, value: unknown): void {
  res.writeHead(status, { "content-type": "application/json" });
  res.end(JSON.stringify(value));
}

export async function startStandinHub(runtimeLog?: RuntimeLog): Promise<StandinHub> {
  const keys = new Map<string, HubKey>(); // "agent/key" -> record
  const lookups = new Map<string, number>();
  const receipts = new Map<string, unknown[]>(); // receipt `from` -> bodies, including refused ones
  const receiptScripts = new Map<string, number[]>(); // receipt `from` -> statuses to answer in turn
  const agents = new StandinAgents();
  const scriptedBytes: number[] = []; // what each `bytes` answer had written when its connection ended
  let redirectHits = 0;

  /** A refresh is proven by an active key of the agent signing the base64-decoded nonce. */
  function refreshAllowed(agentId: string, body: { key_id?: string; nonce?: string; sig?: string }): boolean {
    const key = keys.get(`${agentId}/${body.key_id}`);
    if (!key || key.state !== "active" || !body.nonce || !body.sig) return false;
    const raw = Buffer.from(key.pubkey.slice("ed25519:".length), "base64");
    const spki = createPublicKey({ key: Buffer.concat([Buffer.from("302a300506032b6570032100", "hex"), raw]), format: "der", type: "spki" });
    return verify(null, Buffer.from(body.nonce, "base64"), spki, Buffer.from(body.sig, "base64"));
  }

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", "http://hub");
      const parts = url.pathname.split("/").filter(Boolean);
      if (req.method === "GET" && parts[0] === "registry" && parts[1] === "agents" && parts[3] === "keys" && parts.length === 5) {
        const id = `${parts[2]}/${parts[4]}`;
        lookups.set(id, (lookups.get(id) ?? 0) + 1);
        const key = keys.get(id);
        return key ? json(res, 200, { ...key, created_at: "2026-01-01T00:00:00Z" }) : json(res, 404, { detail: "Key not found" });
      }
      if (req.method === "POST" && url.pathname === "/hub/receipt") {
        const text = await readBody(req);
        const from = String((JSON.parse(text) as { from?: unknown }).from);
        receipts.set(from, [...(receipts.get(from) ?? []), JSON.parse(text)]);
        const status = receiptScripts.get(from)?.shift() ?? 200;
        return json(res, status, status === 200 ? { received: true } : { detail: "scripted failure" });
      }
      if (req.method === "POST" && parts[0] === "registry" && parts[1] === "agents" && parts[3] === "token" && parts[4] === "refresh") {
        const body = JSON.parse((await readBody(req)) || "{}") as { key_id?: string; nonce?: string; sig?: string };
        return refreshAllowed(parts[2]!, body) ? json(res, 200, agents.mint(parts[2]!)) : json(res, 401, { detail: "Signature verification failed" });
      }
      if (parts[0] === "hub") {
        const text = req.method === "POST" ? await readBody(req) : "";
        const answer = agents.route(req, url, text ? JSON.parse(text) : null);
        if (answer?.script) return writeScript(res, answer.script, (bytes) => scriptedBytes.push(bytes));
        if (answer) return json(res, answer.status, answer.body);
      }
      if (parts[0] === "__test" && parts[1] === "agents") {
        const text = req.method === "POST" ? await readBody(req) : "";
        const answer = agents.test(req.method ?? "GET", parts[2]!, parts[3] ?? "", text ? JSON.parse(text) : null);
        return json(res, answer.status, answer.body);
      }
      if (parts[0] === "__test") {
        const body = req.method === "GET" ? null : JSON.parse((await readBody(req)) || "null");
        if (req.method === "PUT" && parts[1] === "keys") {
          const key = body as HubKey & { owner: string };
          keys.set(`${key.owner}/${key.key_id}`, key);
          return json(res, 200, { ok: true });
        }
        if (req.method === "GET" && parts[1] === "lookups") return json(res, 200, { count: lookups.get(`${parts[2]}/${parts[3]}`) ?? 0 });
        if (req.method === "PUT" && parts[1] === "receipt-script") {
          receiptScripts.set(parts[2]!, [...(body as number[])]);
          return json(res, 200, { ok: true });
        }
        if (req.method === "GET" && parts[1] === "receipts") return json(res, 200, receipts.get(parts[2]!) ?? []);
        // A redirect's target on the hub itself: a client that followed one would be counted here.
        if (parts[1] === "redirect-target") return json(res, 200, { hits: ++redirectHits });
        if (req.method === "GET" && parts[1] === "redirect-hits") return json(res, 200, { hits: redirectHits });
        if (req.method === "GET" && parts[1] === "scripted-bytes") return json(res, 200, scriptedBytes);
        // ?match=<regular expression>: the runtime's reports of the relay's resets that match, taken (not printed).
        if (req.method === "GET" && parts[1] === "runtime-log") return json(res, 200, runtimeLog?.take(new RegExp(url.searchParams.get("match") ?? "")) ?? []);
      }
      json(res, 404, { detail: "Not Found" });
    })().catch((err: unknown) => json(res, 500, { detail: String(err) }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("stand-in hub did not get a TCP port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    server,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
