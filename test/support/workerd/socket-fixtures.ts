// Shared set-up of the WebSocket tests: inboxes with queued messages, what each delivery must carry, and
// waiting for a check that socket events of different sockets make true.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import type { DeliveryFrame } from "../../../protocol/index.ts";
import type { SocketState } from "../../../worker/delivery/socket-session.ts";
import type { Inbox } from "../../../worker/inbox.ts";
import { claimInbox, envelopeFrom, postEnvelope, postHook } from "./agents.ts";
import type { ClaimedInbox, TestAgent } from "./agents.ts";

export const stubOf = (inbox: ClaimedInbox): DurableObjectStub<Inbox> => env.INBOX.getByName(inbox.agent.id);
export const queued = (inbox: ClaimedInbox) => runInDurableObject(stubOf(inbox), (instance) => instance.store.queueStats().count);

/** What a delivered frame must carry for one posted message. */
export type Expected = Pick<DeliveryFrame, "id" | "kind" | "subpath" | "content_type" | "body" | "encoding">;

export async function accepted(res: Response): Promise<number> {
  const body = (await res.json()) as { id?: number };
  if (res.status !== 202 || typeof body.id !== "number") throw new Error(`not queued: ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

export async function sendEnvelope(inbox: ClaimedInbox, sender: TestAgent, text: string): Promise<Expected> {
  const envelope = await envelopeFrom(sender, inbox.agent.id, { payload: { text } });
  const id = await accepted(await postEnvelope(envelope));
  return { id, kind: "envelope", subpath: null, content_type: "application/json", body: JSON.stringify(envelope), encoding: "utf8" };
}

export async function sendHook(inbox: ClaimedInbox, text: string, subpath = "agentgram_inbox/agent"): Promise<Expected> {
  const id = await accepted(await postHook(inbox, subpath, text));
  return { id, kind: "hook", subpath, content_type: "application/json", body: text, encoding: "utf8" };
}

/** A claimed inbox with `count` opaque hook bodies queued ("m1", "m2", …). */
export async function inboxWithHooks(count: number): Promise<{ inbox: ClaimedInbox; sent: Expected[] }> {
  const inbox = await claimInbox();
  const sent: Expected[] = [];
  for (let i = 1; i <= count; i++) sent.push(await sendHook(inbox, JSON.stringify({ n: i })));
  return { inbox, sent };
}

export const ids = (frames: readonly { id: number }[]) => frames.map((f) => f.id);

/**
 * Moves every unauthenticated socket's clock back by `ms` (its deadline, and its close when it was
 * closed): the injected clock of the deadline tests, which then run the object's alarm themselves.
 */
export function ageSockets(inbox: ClaimedInbox, ms: number): Promise<void> {
  return runInDurableObject(stubOf(inbox), (instance) => {
    for (const ws of instance.sockets()) {
      const state = ws.deserializeAttachment() as SocketState;
      if (state.authed) continue;
      ws.serializeAttachment({ ...state, deadline: state.deadline - ms, ...(state.closedAt !== undefined ? { closedAt: state.closedAt - ms } : {}) });
    }
  });
}

/** The auth deadlines of the inbox's unauthenticated sockets and when its alarm is set (null: none). */
export function deadlinesAndAlarm(inbox: ClaimedInbox): Promise<{ deadlines: number[]; alarm: number | null }> {
  return runInDurableObject(stubOf(inbox), async (instance, state) => ({
    deadlines: instance.sockets().flatMap((ws) => {
      const socket = ws.deserializeAttachment() as SocketState;
      return socket.authed ? [] : [socket.deadline];
    }),
    alarm: await state.storage.getAlarm(),
  }));
}

/** Polls `check` until it passes, for up to `ms`: socket events of different sockets are not ordered. */
export async function eventually(check: () => Promise<void>, ms = 2000): Promise<void> {
  const until = Date.now() + ms;
  for (;;) {
    try {
      return await check();
    } catch (err) {
      if (Date.now() > until) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
}
