// Bench-only Worker entry: bundled from bench/baseline-worker.toml by bench/relay-scenario.ts and never
// deployed (worker/index.ts does not import it, so the production bundle holds none of it). It serves
// the relay exactly as worker/index.ts exports it, plus the two baselines its intake figures are
// divided by, reached through the relay's own edge app (the same Hono router, getByName, stub.fetch of
// the raw request):
//   POST /baseline/bare/{id}/envelopes         BareInsert: the body into SQLite, 202;
//   POST /baseline/verify-sign/{id}/envelopes  InsertVerifySign: the same plus the work no relay can
//                                              skip, one Ed25519 verify and one Ed25519 sign;
//   PUT  /baseline/verify-sign/{id}/keys       {"ag_…": "ed25519:…"}: the senders' keys, held in memory.
import { DurableObject } from "cloudflare:workers";
import { RelayError, fromBase64, importSigningKey, isAgentId, parsePublicKey, signingInput, toBase64, utf8, verifyWebCrypto } from "../protocol/index.ts";
import type { Envelope } from "../protocol/index.ts";
import { app } from "./app.ts";
import type { Env } from "./env.ts";

export { Directory } from "./directory/directory.ts";
export { Inbox } from "./inbox.ts";

interface BaselineEnv extends Env {
  BARE_INSERT: DurableObjectNamespace<BareInsert>;
  INSERT_VERIFY_SIGN: DurableObjectNamespace<InsertVerifySign>;
}

const SCHEMA = `CREATE TABLE IF NOT EXISTS messages (seq INTEGER PRIMARY KEY, body BLOB NOT NULL, received_at INTEGER NOT NULL)`;

class InsertingObject extends DurableObject<BaselineEnv> {
  private seq: number;

  constructor(ctx: DurableObjectState, env: BaselineEnv) {
    super(ctx, env);
    ctx.storage.sql.exec(SCHEMA);
    this.seq = Number(ctx.storage.sql.exec(`SELECT coalesce(max(seq), 0) AS m FROM messages`).one().m);
  }

  protected insert(body: ArrayBuffer): number {
    const seq = ++this.seq;
    this.ctx.storage.sql.exec(`INSERT INTO messages (seq, body, received_at) VALUES (?, ?, ?)`, seq, body, Date.now());
    return seq;
  }
}

export class BareInsert extends InsertingObject {
  override async fetch(request: Request): Promise<Response> {
    return Response.json({ queued: true, id: this.insert(await request.arrayBuffer()) }, { status: 202 });
  }
}

// A fixed receipt key: the baseline signs, it does not need a secret.
const RECEIPT_SEED = new Uint8Array(32).fill(7);

export class InsertVerifySign extends InsertingObject {
  private readonly keys = new Map<string, Uint8Array>();
  private readonly sign = importSigningKey(RECEIPT_SEED);

  override async fetch(request: Request): Promise<Response> {
    if (request.method === "PUT") {
      for (const [agentId, text] of Object.entries((await request.json()) as Record<string, string>)) {
        const key = parsePublicKey(text);
        if (key) this.keys.set(agentId, key);
      }
      return new Response(null, { status: 204 });
    }
    const body = await request.arrayBuffer();
    const envelope = JSON.parse(new TextDecoder().decode(body)) as Envelope;
    const key = this.keys.get(envelope.from);
    const signature = fromBase64(envelope.sig.value);
    if (!key || !signature || !(await verifyWebCrypto(key, signingInput(envelope), signature))) {
      return Response.json({ error: { code: "invalid_signature", message: "baseline: the signature does not verify" } }, { status: 400 });
    }
    const receipt = [envelope.v, crypto.randomUUID(), String(Math.floor(Date.now() / 1000)), envelope.to, envelope.from, "ack", envelope.msg_id, String(envelope.ttl_sec), envelope.payload_hash];
    const ackSignature = await (await this.sign)(utf8(receipt.join("\n")));
    return Response.json({ queued: true, id: this.insert(body), sig: toBase64(ackSignature) }, { status: 202 });
  }
}

app.all("/baseline/:kind/:agent_id/*", (c) => {
  const env = c.env as BaselineEnv;
  const agentId = c.req.param("agent_id");
  if (!isAgentId(agentId)) throw new RelayError(400, "invalid_agent_id", `"${agentId}" is not an agent id`);
  const kind = c.req.param("kind");
  const namespace = kind === "bare" ? env.BARE_INSERT : kind === "verify-sign" ? env.INSERT_VERIFY_SIGN : null;
  if (!namespace) throw new RelayError(404, "not_found", `no baseline "${kind}": bare or verify-sign`);
  return namespace.getByName(agentId).fetch(c.req.raw);
});

export default app;
