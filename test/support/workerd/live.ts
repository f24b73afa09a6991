// Live requests in relay tests: an agent's socket that names "live" (a raw client speaking the protocol's
// request and answer frames), a live token source, passing a request's deadline as the timer would (the
// injected clock: no test waits for a real deadline), and reading the live log. Used by
// test/worker/live-*.test.ts and test/worker/a2a-*.test.ts.
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { LiveAnswerFrame, LiveLogView, LiveRequestFrame } from "../../../protocol/index.ts";
import { relayFetch, signedFetch } from "./agents.ts";
import type { ClaimedInbox } from "./agents.ts";
import { connect } from "./socket-client.ts";
import type { SocketClient } from "./socket-client.ts";
import { stubOf } from "./socket-fixtures.ts";
import { addSource, pathOf } from "./sources.ts";

export const APP = "http://127.0.0.1:3000/app";

/** An authenticated socket naming `features` (live by default); its ready frame is checked to name live back. */
export async function liveAgent(inbox: ClaimedInbox, features: string[] = ["live"]): Promise<SocketClient> {
  const client = await connect(inbox.agent.id);
  const ready = await client.auth(inbox.agent, { features });
  expect(ready.features ?? []).toEqual(features.filter((f) => f === "lanes" || f === "live"));
  return client;
}

/** A token source, live with `liveSec` (null: not live), forwarding to APP unless `forward` is null; the path of its URL. */
export async function liveSource(inbox: ClaimedInbox, options: { liveSec?: number | null; forward?: string | null; name?: string } = {}): Promise<string> {
  const added = await addSource(inbox, { name: options.name ?? "app", kind: "token", forward: options.forward === undefined ? APP : options.forward, live_sec: options.liveSec === undefined ? 10 : options.liveSec });
  return pathOf(added.post_url);
}

/** The next frame must be a live request. */
export function nextRequest(client: SocketClient): Promise<LiveRequestFrame> {
  return client.next("request");
}

/** Answers `rid` in one frame. */
export function answer(client: SocketClient, rid: string, status: number, headers: [string, string][], body: string, extra: Partial<LiveAnswerFrame> = {}): void {
  client.send({ type: "answer", rid, status, headers, body, encoding: "utf8", ...extra } satisfies LiveAnswerFrame);
}

/** Passes `rid`'s deadline now, as its timer would. */
export function passDeadline(inbox: ClaimedInbox, rid: string): Promise<void> {
  return runInDurableObject(stubOf(inbox), (instance) => instance.live.expire(rid));
}

/** GET /inbox/{id}/live, signed. */
export async function liveLog(inbox: ClaimedInbox, limit?: number): Promise<LiveLogView> {
  const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/live${limit ? `?limit=${limit}` : ""}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as LiveLogView;
}

/** The messages the inbox holds (queued or dead). */
export function storedCount(inbox: ClaimedInbox): Promise<number> {
  return runInDurableObject(stubOf(inbox), (instance) => instance.store.queueStats().count);
}

/** A request to the live source at `path` (with `init`), started now and awaited later. */
export function sendTo(path: string, init: RequestInit = {}): Promise<Response> {
  return relayFetch(path, init);
}

/** A refusal in the relay's JSON shape: its code and Retry-After. */
export async function refusedWith(res: Response, status: number, code: string): Promise<string | null> {
  const json = (await res.json()) as { error: { code: string; message: string } };
  expect(res.status, JSON.stringify(json)).toBe(status);
  expect(json.error.code).toBe(code);
  return res.headers.get("retry-after");
}
