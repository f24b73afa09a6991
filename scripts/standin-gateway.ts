// A stand-in OpenClaw gateway: a real node:http server that behaves like the gateway's hooks
// endpoint, in the gateway's order: token check (401), its fixed 256 KiB body limit (413),
// hooks.path and mappings (404), the built-in /wake and /agent's body checks (400: a string `text` /
// `message`; mapped sub-paths take any body), Idempotency-Key replay within a window (5 minutes, or
// `replayWindowMs`; 0 is a gateway whose memory is gone). Tests can script answers (fail the next N
// requests), slow accepted runs, refuse chosen hooks (status 0: reset the connection, no answer), and
// take the gateway down and back on the same port (`goDown` counts the connections tried meanwhile).
// Only accepted runs land in `received`; every answer, refusals and resets included, lands in `requests`.
// Used by `npm start` when no real gateway is configured (announced as a stand-in: STANDIN_HEADER), and
// by the end-to-end tests.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";
import { createServer as createTcpServer } from "node:net";
import type { Server as TcpServer } from "node:net";

export interface ReceivedHook {
  subpath: string;
  contentType: string;
  body: Buffer;
  idempotencyKey: string | null;
  /** Every header it came with (a mapping may read them: {{headers.x-github-event}}). */
  headers: IncomingHttpHeaders;
  at: number;
}

export interface ScriptedAnswer {
  status: number;
  retryAfter?: string;
  /** Hold the answer this long (a slow gateway). */
  delayMs?: number;
}

export interface StandinGateway {
  port: number;
  token: string;
  hooksPath: string;
  /** Hook bodies accepted as new runs, in order. */
  received: ReceivedHook[];
  authToken: string;
  /** Chat completions seen, per OpenAI `user` (the gateway's session), in order. */
  conversations: Map<string, string[]>;
  /** Every request that reached the server, replays and refusals included. */
  requests: { subpath: string; status: number; idempotencyKey: string | null; at: number }[];
  /** Answers for the next requests, in turn, before normal handling resumes. */
  script(...answers: ScriptedAnswer[]): void;
  /** Accepted runs are answered this much later (a gateway still busy admitting the run). */
  answerDelayMs: number;
  onReceive?: (hook: ReceivedHook) => void;
  /** Asked about each otherwise-acceptable hook before it is recorded: a status refuses it, 0 resets the connection. */
  refuse?: (hook: ReceivedHook) => number | null;
  /**
   * An outage: every connection, open or new, is reset until `comeBack` serves again on the same port.
   * The port stays bound meanwhile, so each connection a client tries is counted in `connectionsWhileDown`.
   */
  goDown(): Promise<void>;
  comeBack(): Promise<void>;
  connectionsWhileDown: number;
  /** Forget every remembered Idempotency-Key (the gateway restarted). */
  forgetKeys(): void;
  close(): Promise<void>;
}

export interface StandinGatewayOptions {
  port?: number;
  token?: string;
  hooksPath?: string;
  mappings?: string[];
  /** Serve /v1/chat/completions (off by default on a real gateway; on here unless false). */
  chatCompletions?: boolean;
  /** gateway.auth.token for /v1/chat/completions. */
  authToken?: string;
  /** How long an Idempotency-Key is remembered; 0 forgets at once. */
  replayWindowMs?: number;
  /**
   * Who runs it (`npm start`), sent in STANDIN_HEADER on every answer so that `clawrelay doctor` can say
   * messages go to a stand-in, not an OpenClaw agent. Off for tests, where it plays the real gateway.
   */
  announceAs?: string;
}

/** The header an announced stand-in answers with (doctor/doctor-gateway.ts reads it). */
export const STANDIN_HEADER = "x-clawrelay-standin";

const REPLAY_WINDOW_MS = 5 * 60_000;
/** The gateway's hooks body limit, fixed there too. */
const MAX_HOOK_BODY_BYTES = 256 * 1024;
/** The JSON field each built-in route needs. */
const BUILT_IN_FIELD: Record<string, string> = { wake: "text", agent: "message" };

// The built-in routes take their field as a string, trimmed; a blank one counts as missing. They are
// matched before hooks.mappings, so a mapping cannot loosen them.
function builtInBodyError(subpath: string, body: Buffer): string | null {
  const field = BUILT_IN_FIELD[subpath];
  if (field === undefined) return null;
  let value: unknown;
  try {
    value = (JSON.parse(body.toString("utf8")) as Record<string, unknown> | null)?.[field];
  } catch {
    value = undefined;
  }
  return typeof value === "string" && value.trim() !== "" ? null : `${field} required`;
}

function bearer(headers: IncomingHttpHeaders): string | undefined {
  const auth = headers.authorization;
  if (auth?.startsWith("Bearer ")) return auth.slice(7);
  const token = headers["x-openclaw-token"];
  return typeof token === "string" ? token : undefined;
}

export async function startStandinGateway(options: StandinGatewayOptions = {}): Promise<StandinGateway> {
  const token = options.token ?? randomBytes(24).toString("base64url");
  const hooksPath = options.hooksPath ?? "/hooks";
  const mappings = new Set(options.mappings ?? ["agentgram_inbox/agent", "agentgram_inbox/wake"]);
  const scripted: ScriptedAnswer[] = [];
  const seen = new Map<string, { at: number; status: number; body: string }>();
  const replayWindowMs = options.replayWindowMs ?? REPLAY_WINDOW_MS;
  let runs = 0;

  const gateway: StandinGateway = {
    port: 0,
    token,
    hooksPath,
    received: [],
    requests: [],
    authToken: options.authToken ?? randomBytes(24).toString("base64url"),
    conversations: new Map(),
    script: (...answers) => scripted.push(...answers),
    answerDelayMs: 0,
    forgetKeys: () => seen.clear(),
    connectionsWhileDown: 0,
    goDown: async () => {
      await new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections()));
      down = createTcpServer((socket) => (gateway.connectionsWhileDown++, socket.resetAndDestroy()));
      await listen(down, gateway.port);
    },
    comeBack: async () => {
      await new Promise<void>((resolve) => (down ? down.close(() => resolve()) : resolve()));
      down = null;
      await listen(server, gateway.port);
    },
    close: () => new Promise((resolve) => (down ? down.close(() => resolve()) : server.close(() => resolve()))),
  };
  let down: TcpServer | null = null;

  // Answers deterministically from the whole conversation of this `user`, so a test can see that a
  // follow-up reached the same session. A message containing "[ask]" gets an INPUT_REQUIRED reply.
  function chat(raw: Buffer, headers: IncomingHttpHeaders, answer: (status: number, body: string) => void): void {
    if (options.chatCompletions === false) return answer(404, "Not Found");
    if (headers.authorization !== `Bearer ${gateway.authToken}`) return answer(401, "Unauthorized");
    const request = JSON.parse(raw.toString("utf8")) as { user?: string; messages?: { role: string; content: string }[] };
    const user = request.user ?? "";
    const history = gateway.conversations.get(user) ?? [];
    for (const m of request.messages ?? []) if (m.role === "user") history.push(m.content);
    gateway.conversations.set(user, history);
    const last = history[history.length - 1] ?? "";
    const content = last.includes("[ask]") ? "INPUT_REQUIRED: which city do you mean?" : `Reply ${history.length}: I have heard ${history.map((h) => `"${h}"`).join(", ")}`;
    answer(200, JSON.stringify({ id: `chatcmpl-${history.length}`, object: "chat.completion", choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }] }));
  }

  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://gateway");
    const underHooks = url.pathname === hooksPath || url.pathname.startsWith(hooksPath + "/");
    const subpath = underHooks ? url.pathname.slice(hooksPath.length + 1).replace(/\/+$/, "") : "";
    // Read a hook to the end even past the limit, so the client gets its 413 rather than a reset
    // socket, but keep only what the limit needs to be seen.
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      if (!underHooks || size <= MAX_HOOK_BODY_BYTES) chunks.push(chunk);
      size += chunk.length;
    });
    req.on("end", () => {
      const idempotencyKey = (req.headers["idempotency-key"] as string | undefined) ?? null;
      const answer = (status: number, body: string, headers: Record<string, string> = {}) => {
        gateway.requests.push({ subpath, status, idempotencyKey, at: Date.now() });
        res.writeHead(status, { "content-type": body.startsWith("{") ? "application/json" : "text/plain", ...(options.announceAs ? { [STANDIN_HEADER]: options.announceAs } : {}), ...headers });
        res.end(body);
      };
      const next = scripted.shift();
      if (next) {
        const send = () => answer(next.status, JSON.stringify({ ok: false, error: "scripted" }), next.retryAfter ? { "retry-after": next.retryAfter } : {});
        return next.delayMs ? void setTimeout(send, next.delayMs) : send();
      }
      // GET /v1/models: the OpenAI-compatible list (doctor asks it to check the gateway token).
      if (url.pathname === "/v1/models" && req.method === "GET") {
        if (options.chatCompletions === false) return answer(404, "Not Found");
        if (req.headers.authorization !== `Bearer ${gateway.authToken}`) return answer(401, "Unauthorized");
        return answer(200, JSON.stringify({ object: "list", data: [{ id: "openclaw", object: "model" }] }));
      }
      if (req.method !== "POST") return answer(405, "Method Not Allowed");
      if (url.pathname === "/v1/chat/completions") return chat(Buffer.concat(chunks), req.headers, answer);
      // Outside hooks.path the hooks handler never sees the request, so no token is asked for.
      if (!underHooks) return answer(404, "Not Found");
      if (bearer(req.headers) !== token) return answer(401, "Unauthorized");
      if (size > MAX_HOOK_BODY_BYTES) return answer(413, JSON.stringify({ ok: false, error: "payload too large" }));
      if (!subpath || (!mappings.has(subpath) && BUILT_IN_FIELD[subpath] === undefined)) return answer(404, "Not Found");
      const body = Buffer.concat(chunks);
      const invalid = builtInBodyError(subpath, body);
      if (invalid) return answer(400, JSON.stringify({ ok: false, error: invalid }));
      const previous = idempotencyKey ? seen.get(idempotencyKey) : undefined;
      if (previous && Date.now() - previous.at < replayWindowMs) return answer(previous.status, previous.body);
      const hook: ReceivedHook = { subpath, contentType: req.headers["content-type"] ?? "", body, idempotencyKey, headers: req.headers, at: Date.now() };
      const refusal = gateway.refuse?.(hook) ?? null;
      if (refusal === 0) return void (gateway.requests.push({ subpath, status: 0, idempotencyKey, at: Date.now() }), req.socket.resetAndDestroy());
      if (refusal !== null) return answer(refusal, JSON.stringify({ ok: false, error: "refused by test" }));
      gateway.received.push(hook);
      gateway.onReceive?.(hook);
      const accepted = JSON.stringify({ ok: true, runId: `run-${++runs}` });
      if (idempotencyKey) seen.set(idempotencyKey, { at: Date.now(), status: 200, body: accepted });
      if (gateway.answerDelayMs > 0) setTimeout(() => answer(200, accepted), gateway.answerDelayMs);
      else answer(200, accepted);
    });
  });
  await listen(server, options.port ?? 0);
  const address = server.address();
  gateway.port = address && typeof address !== "string" ? address.port : 0;
  return gateway;
}

function listen(server: Server | TcpServer, port: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => (server.off("error", reject), resolve()));
  });
}

/** An openclaw.json (JSON5, as users write it) that points the local agent at `gateway`. */
export function openClawConfigFor(gateway: StandinGateway, options: { chatCompletions?: boolean; extra?: string; prefix?: string } = {}): string {
  const prefix = options.prefix ?? "agentgram";
  return `// written for a clawrelay stand-in gateway
{
  gateway: {
    port: ${gateway.port},
    auth: { token: "${gateway.authToken}" },
    http: { endpoints: { chatCompletions: { enabled: ${options.chatCompletions ?? true} } } },
  },
  hooks: {
    enabled: true,
    token: "${gateway.token}",
    path: "${gateway.hooksPath}",
    mappings: [
      { match: { path: "${prefix}_inbox/agent" }, action: "agent", messageTemplate: "[Agentline] {{message}}" },
      { match: { path: "${prefix}_inbox/wake" }, action: "wake", textTemplate: "[Agentline] {{body}}" },
    ],
  },${options.extra ?? ""}
}
`;
}
