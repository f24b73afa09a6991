// A stand-in OpenClaw gateway: a real node:http server that behaves like the gateway's hooks
// endpoint (openclaw.md): token check (401), hooks.path and mappings (404), Idempotency-Key replay
// within 5 minutes, and answers a test can script (fail the next N requests with a status).
// Used by `npm start` when no real gateway is configured, and by the end-to-end tests.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, Server } from "node:http";

export interface ReceivedHook {
  subpath: string;
  contentType: string;
  body: Buffer;
  idempotencyKey: string | null;
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
}

const REPLAY_WINDOW_MS = 5 * 60_000;

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
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };

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
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://gateway");
      const subpath = url.pathname.startsWith(hooksPath + "/") ? url.pathname.slice(hooksPath.length + 1).replace(/\/+$/, "") : "";
      const idempotencyKey = (req.headers["idempotency-key"] as string | undefined) ?? null;
      const answer = (status: number, body: string, headers: Record<string, string> = {}) => {
        gateway.requests.push({ subpath, status, idempotencyKey, at: Date.now() });
        res.writeHead(status, { "content-type": body.startsWith("{") ? "application/json" : "text/plain", ...headers });
        res.end(body);
      };
      const next = scripted.shift();
      if (next) {
        const send = () => answer(next.status, JSON.stringify({ ok: false, error: "scripted" }), next.retryAfter ? { "retry-after": next.retryAfter } : {});
        return next.delayMs ? void setTimeout(send, next.delayMs) : send();
      }
      if (req.method !== "POST") return answer(405, "Method Not Allowed");
      if (url.pathname === "/v1/chat/completions") return chat(Buffer.concat(chunks), req.headers, answer);
      if (bearer(req.headers) !== token) return answer(401, "Unauthorized");
      if (!subpath || (!mappings.has(subpath) && subpath !== "agent" && subpath !== "wake")) return answer(404, "Not Found");
      const previous = idempotencyKey ? seen.get(idempotencyKey) : undefined;
      if (previous && Date.now() - previous.at < REPLAY_WINDOW_MS) return answer(previous.status, previous.body);
      const hook: ReceivedHook = { subpath, contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks), idempotencyKey, at: Date.now() };
      gateway.received.push(hook);
      gateway.onReceive?.(hook);
      const body = JSON.stringify({ ok: true, runId: `run-${++runs}` });
      if (idempotencyKey) seen.set(idempotencyKey, { at: Date.now(), status: 200, body });
      if (gateway.answerDelayMs > 0) setTimeout(() => answer(200, body), gateway.answerDelayMs);
      else answer(200, body);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => resolve());
  });
  const address = server.address();
  gateway.port = address && typeof address !== "string" ? address.port : 0;
  return gateway;
}

/** An openclaw.json (JSON5, as users write it) that points the local agent at `gateway`. */
export function openClawConfigFor(gateway: StandinGateway, options: { chatCompletions?: boolean; extra?: string } = {}): string {
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
      { match: { path: "agentgram_inbox/agent" }, action: "agent", messageTemplate: "[Agentline] {{message}}" },
      { match: { path: "agentgram_inbox/wake" }, action: "wake", textTemplate: "[Agentline] {{body}}" },
    ],
  },${options.extra ?? ""}
}
`;
}
