// A fake OpenAI-compatible model server for the real gateway to talk to: answers are deterministic
// (request number, message count, last user text: see fakeReply), so tests can tell which turn a
// reply came from and whether the gateway sent earlier turns along. Every request is recorded as
// parsed. Tools and any other request fields are ignored; the fake never calls a tool.
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeChatRequest {
  at: number;
  stream: boolean;
  /** Content flattened to text (array-of-parts content joined by newlines). */
  messages: { role: string; content: string }[];
  user?: string;
  model?: string;
}

export interface FakeModel {
  /** `http://127.0.0.1:<port>/v1`, for a provider's baseUrl. */
  baseUrl: string;
  port: number;
  requests: FakeChatRequest[];
  /** Lets the answers held by `[[hold:NAME]]` go (now, or at once when one comes later). */
  release(name: string): void;
  close(): Promise<void>;
}

/**
 * Answers held until the test lets them go: an agent run lasts exactly as long as a test needs it to,
 * however slow the machine, instead of a fixed time that a loaded machine may outlast.
 */
class Holds {
  private readonly waiting = new Map<string, (() => void)[]>();
  private readonly released = new Set<string>();

  wait(name: string): Promise<void> {
    if (this.released.has(name)) return Promise.resolve();
    return new Promise((resolve) => this.waiting.set(name, [...(this.waiting.get(name) ?? []), resolve]));
  }

  release(name: string): void {
    this.released.add(name);
    for (const resolve of this.waiting.get(name) ?? []) resolve();
    this.waiting.delete(name);
  }

  releaseAll(): void {
    for (const name of [...this.waiting.keys()]) this.release(name);
  }
}

const MODEL_ID = "fake-model";

/**
 * OpenClaw appends a user message of its own after the real one (exec sessions, subagents), fenced by
 * this marker; quoting it would make every reply look alike, so the reply quotes the last user message
 * that is not such a block.
 */
const INTERNAL_CONTEXT = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>";

function lastUserText(messages: FakeChatRequest["messages"]): string {
  const users = messages.filter((message) => message.role === "user");
  return (users.findLast((message) => !message.content.startsWith(INTERNAL_CONTEXT)) ?? users.at(-1))?.content ?? "";
}

export function fakeReply(n: number, messages: FakeChatRequest["messages"]): string {
  const lastUser = lastUserText(messages);
  return `fake reply #${n}: ${messages.length} messages; last user text: ${lastUser.slice(0, 120).replace(/\r?\n/g, " ")}`;
}

export async function startFakeModel(): Promise<FakeModel> {
  const requests: FakeChatRequest[] = [];
  const holds = new Holds();
  const server = createServer((req, res) => {
    handle(req, res, requests, holds).catch((error: unknown) => {
      if (!res.headersSent) sendJson(res, 500, { error: { message: String(error), type: "server_error" } });
      else res.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    port,
    requests,
    release: (name) => holds.release(name),
    close: () => new Promise<void>((resolve) => {
      holds.releaseAll();
      server.closeAllConnections(); // the gateway keeps connections alive
      server.close(() => resolve());
    }),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, requests: FakeChatRequest[], holds: Holds): Promise<void> {
  // Tolerate a baseUrl configured with or without /v1.
  const path = (req.url ?? "/").split("?")[0]!.replace(/^\/v1(?=\/)/, "");
  if (req.method === "GET" && path === "/models") {
    sendJson(res, 200, { object: "list", data: [{ id: MODEL_ID, object: "model", created: 0, owned_by: "fake" }] });
    return;
  }
  if (req.method !== "POST" || path !== "/chat/completions") {
    sendJson(res, 404, { error: { message: `no route ${req.method} ${req.url}`, type: "invalid_request_error" } });
    return;
  }
  let body: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(await readBody(req));
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error("not an object");
    body = parsed as Record<string, unknown>;
  } catch {
    sendJson(res, 400, { error: { message: "body is not a JSON object", type: "invalid_request_error" } });
    return;
  }
  const messages = Array.isArray(body.messages) ? body.messages.map(flattenMessage) : [];
  const request: FakeChatRequest = { at: Date.now(), stream: body.stream === true, messages };
  if (typeof body.user === "string") request.user = body.user;
  if (typeof body.model === "string") request.model = body.model;
  requests.push(request);

  const text = fakeReply(requests.length, messages);
  // `[[hold:NAME]]` in the turn's user text holds the answer back until release(NAME): an agent run goes on.
  const hold = /\[\[hold:([\w-]{1,64})\]\]/.exec(lastUserText(messages));
  if (hold) await holds.wait(hold[1]!);
  const id = `chatcmpl-fake-${requests.length}`;
  const created = Math.floor(request.at / 1000);
  const model = request.model ?? MODEL_ID;
  // Rough counts, only so clients that insist on a usage object get one.
  const promptTokens = messages.reduce((sum, message) => sum + Math.ceil(message.content.length / 4), 0);
  const completionTokens = Math.ceil(text.length / 4);
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };

  if (!request.stream) {
    sendJson(res, 200, {
      id, object: "chat.completion", created, model,
      choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop", logprobs: null }],
      usage,
    });
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const chunk = (choices: unknown[], extra: Record<string, unknown> = {}): void => {
    res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`);
  };
  chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }]);
  // Two content pieces, so a client that only keeps the last delta would show a broken reply.
  const half = Math.ceil(text.length / 2);
  chunk([{ index: 0, delta: { content: text.slice(0, half) }, finish_reason: null }]);
  chunk([{ index: 0, delta: { content: text.slice(half) }, finish_reason: null }]);
  // Asked for with stream_options.include_usage, usage comes as OpenAI sends it: a last, choices-less
  // chunk. Otherwise it rides on the finishing chunk, which lenient clients read too. Never both, so a
  // client that adds up usage chunks does not count it twice.
  const options = body.stream_options as { include_usage?: unknown } | undefined;
  const separateUsage = options?.include_usage === true;
  chunk([{ index: 0, delta: {}, finish_reason: "stop" }], separateUsage ? {} : { usage });
  if (separateUsage) chunk([], { usage });
  res.end("data: [DONE]\n\n");
}

function flattenMessage(raw: unknown): { role: string; content: string } {
  const message = (raw ?? {}) as { role?: unknown; content?: unknown };
  return { role: typeof message.role === "string" ? message.role : "", content: flattenContent(message.content) };
}

function flattenContent(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part: unknown) => (part !== null && typeof part === "object" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
