// Webhook sources in relay tests: add one with a signed request, sign events the way each provider
// does, with node:crypto — independent of the relay's own verifiers (worker/sources/) — and read what a
// request left: the requests stored, a refusal's answer, a source's last refusal.
import { createHmac } from "node:crypto";
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { SourceView, StoredRequest } from "../../../protocol/index.ts";
import { relayFetch, signedFetch } from "./agents.ts";
import type { ClaimedInbox } from "./agents.ts";

export interface AddedSource {
  source: { name: string; kind: string; subpath: string; url: string; secret_sealed: boolean | null; previous_secret_until: number | null };
  post_url: string;
  secret?: string;
}

export async function addSource(inbox: ClaimedInbox, body: Record<string, unknown>): Promise<AddedSource> {
  const res = await signedFetch(inbox.agent, "POST", `/inbox/${inbox.agent.id}/sources`, body);
  expect(res.status, await res.clone().text()).toBe(201);
  return (await res.json()) as AddedSource;
}

export const nowSec = (): number => Math.floor(Date.now() / 1000);

const hmacHex = (key: string | Uint8Array, data: string): string => createHmac("sha256", key).update(data).digest("hex");
const hmacBase64 = (key: string | Uint8Array, data: string): string => createHmac("sha256", key).update(data).digest("base64");

export function githubHeaders(secret: string, body: string, extra: Record<string, string> = {}): Record<string, string> {
  return { "content-type": "application/json", "x-hub-signature-256": `sha256=${hmacHex(secret, body)}`, "x-github-event": "push", "x-github-delivery": crypto.randomUUID(), ...extra };
}

export function stripeHeaders(secret: string, body: string, ts = nowSec(), extra: string[] = []): Record<string, string> {
  return { "content-type": "application/json; charset=utf-8", "stripe-signature": [`t=${ts}`, `v1=${hmacHex(secret, `${ts}.${body}`)}`, ...extra].join(",") };
}

export function slackHeaders(secret: string, body: string, ts = nowSec(), extra: Record<string, string> = {}): Record<string, string> {
  return { "content-type": "application/json", "x-slack-request-timestamp": String(ts), "x-slack-signature": `v0=${hmacHex(secret, `v0:${ts}:${body}`)}`, ...extra };
}

/** `prefix` "webhook" (the standard's names) or "svix" (Svix's own). */
export function standardHeaders(secret: string, id: string, body: string, ts = nowSec(), prefix = "webhook", extraSignatures: string[] = []): Record<string, string> {
  const key = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (c) => c.charCodeAt(0));
  const signature = [...extraSignatures, `v1,${hmacBase64(key, `${id}.${ts}.${body}`)}`].join(" ");
  return { "content-type": "application/json", [`${prefix}-id`]: id, [`${prefix}-timestamp`]: String(ts), [`${prefix}-signature`]: signature };
}

export function postToSource(path: string, body: string, headers: Record<string, string>): Promise<Response> {
  return relayFetch(path, { method: "POST", headers, body });
}

/** The path of a source URL the relay answered with (the test relay's origin cut off). */
export function pathOf(url: string): string {
  return new URL(url).pathname;
}

/** The requests the inbox stored, oldest first. */
export async function storedRequests(inbox: ClaimedInbox): Promise<StoredRequest[]> {
  return runInDurableObject(env.INBOX.getByName(inbox.agent.id), (_i, state) =>
    state.storage.sql.exec(`SELECT request FROM messages ORDER BY seq`).toArray().map((r) => JSON.parse(String(r.request)) as StoredRequest),
  );
}

/** Expects the relay's error answer `status` with `code`; its message and Allow header. */
export async function refusal(res: Response, status: number, code: string): Promise<{ message: string; allow: string | null }> {
  const json = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status, json.error.message).toBe(status);
  expect(json.error.code).toBe(code);
  return { message: json.error.message, allow: res.headers.get("allow") };
}

/** The code of the last refusal the source `name` (default: the inbox's first source) noted. */
export async function lastRefusal(inbox: ClaimedInbox, name?: string): Promise<string | undefined> {
  const { sources } = (await (await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/sources`)).json()) as { sources: SourceView[] };
  return sources.find((s) => name === undefined || s.name === name)?.last_refusal?.code;
}
