// A small local app as a developer would write one, for the forward-target tests and bench: a real
// node:http server that verifies each webhook with the provider's own SDK — Stripe's constructEvent,
// Octokit's verify, Standard Webhooks' verify — and Slack's signing check written from Slack's docs
// (v0:timestamp:body, HMAC-SHA256, five minutes). Anything else is recorded and answered 200. It can be
// taken down and brought back on the same port, and told to answer the next requests with a status.
import { createHmac, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from "node:http";
import { verify as verifyGithub } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { steadyPort } from "./steady-port.ts";

export interface AppSecrets {
  stripe: string;
  github: string;
  /** whsec_<base64>, as a Standard Webhooks sender shows it. */
  standard: string;
  slack: string;
}

export interface AppRequest {
  method: string;
  /** Path and query as the app saw them. */
  url: string;
  headers: IncomingHttpHeaders;
  /** Names and values in the order they came. */
  rawHeaders: string[];
  body: Buffer;
  /** What the app made of it: "stripe evt_…", "github", "standard msg_…", "slack", "plain", or "refused: …". */
  verdict: string;
  status: number;
  at: number;
}

export interface WebhookApp {
  readonly port: number;
  readonly url: string;
  readonly received: AppRequest[];
  /** The next requests are answered with these (status, body), in order, before any check. */
  answerNext(...answers: { status: number; body: string; headers?: Record<string, string> }[]): void;
  /** Stops listening and cuts open connections: the agent meets refused connections. */
  down(): Promise<void>;
  /** Listens again on the same port. */
  up(): Promise<void>;
  close(): Promise<void>;
}

function slackVerdict(headers: IncomingHttpHeaders, body: Buffer, secret: string, nowSec: number): string {
  const ts = String(headers["x-slack-request-timestamp"] ?? "");
  const given = String(headers["x-slack-signature"] ?? "");
  if (!/^\d+$/.test(ts) || Math.abs(nowSec - Number(ts)) > 300) return "refused: Slack timestamp missing or older than five minutes";
  const expected = `v0=${createHmac("sha256", secret).update(`v0:${ts}:`).update(body).digest("hex")}`;
  const ok = given.length === expected.length && timingSafeEqual(Buffer.from(given), Buffer.from(expected));
  return ok ? "slack" : "refused: Slack signature does not match";
}

async function verdictFor(req: IncomingMessage, body: Buffer, secrets: AppSecrets): Promise<string> {
  const path = (req.url ?? "").split("?")[0] ?? "";
  try {
    if (path.endsWith("/stripe")) return `stripe ${Stripe.webhooks.constructEvent(body, String(req.headers["stripe-signature"] ?? ""), secrets.stripe).id}`;
    if (path.endsWith("/github")) return (await verifyGithub(secrets.github, body.toString("utf8"), String(req.headers["x-hub-signature-256"] ?? ""))) ? "github" : "refused: GitHub signature does not match";
    if (path.endsWith("/standard")) {
      new Webhook(secrets.standard).verify(body.toString("utf8"), req.headers as Record<string, string>);
      return `standard ${String(req.headers["webhook-id"])}`;
    }
    if (path.endsWith("/slack")) return slackVerdict(req.headers, body, secrets.slack, Math.floor(Date.now() / 1000));
    return "plain";
  } catch (err) {
    return `refused: ${(err as Error).message}`;
  }
}

/** `port`: default a steady one (steady-port.ts), kept while the app is down. */
export async function startWebhookApp(secrets: AppSecrets, port?: number): Promise<WebhookApp> {
  const received: AppRequest[] = [];
  const scripted: { status: number; body: string; headers?: Record<string, string> }[] = [];
  let server: Server | null = null;
  let boundPort = port ?? (await steadyPort());

  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const next = scripted.shift();
        const verdict = next ? `scripted ${next.status}` : await verdictFor(req, body, secrets);
        const status = next?.status ?? (verdict.startsWith("refused") ? 400 : 200);
        received.push({ method: req.method ?? "", url: req.url ?? "", headers: req.headers, rawHeaders: req.rawHeaders, body, verdict, status, at: Date.now() });
        res.writeHead(status, { "content-type": "text/plain", ...(next?.headers ?? {}) });
        res.end(next?.body ?? (status === 200 ? "ok" : `Webhook Error: ${verdict}`));
      })();
    });
  };

  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer(handle);
      s.once("error", reject);
      s.listen(boundPort, "127.0.0.1", () => {
        const address = s.address();
        boundPort = address && typeof address !== "string" ? address.port : boundPort;
        server = s;
        resolve();
      });
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      const s = server;
      server = null;
      if (!s) return resolve();
      s.close(() => resolve());
      s.closeAllConnections();
    });

  await listen();
  return {
    get port() {
      return boundPort;
    },
    get url() {
      return `http://127.0.0.1:${boundPort}`;
    },
    received,
    answerNext: (...answers) => void scripted.push(...answers),
    down: stop,
    up: listen,
    close: stop,
  };
}
