// Generated garbage frames on GET /inbox/{id}/connect, before and after auth: the object never
// crashes. Each frame is answered — an error frame (bad_frame, auth_required, auth_failed,
// not_in_flight), a pong, or a close with 4400/4003 — and afterwards a valid connection still works.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE_CODES, parseClientFrame } from "../../../protocol/index.ts";
import { claimInbox, postHook } from "../../support/workerd/agents.ts";
import type { ClaimedInbox } from "../../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../../support/workerd/socket-client.ts";
import type { SocketClient } from "../../support/workerd/socket-client.ts";
import { SNAKE_CASE, anyJsonText, badBase64, deepJsonText, malformedJsonText, objectText, settings, storedCount } from "./arbitraries.ts";

// Fixed so every run is the same; replay a failure with `{ ...settings(SEED, RUNS), path: "<reported path>" }`.
const SEED = 0x5eed_0004;
const RUNS = 150;

afterEach(() => closeAllSockets());

const FIELDS = ["type", "key", "signature", "after", "window", "id", "reason", "status", "attempts"] as const;

/** Frames that look like the protocol's, with fields of any type, and plain garbage. */
const garbageFrame: fc.Arbitrary<string | Uint8Array> = fc.oneof(
  fc
    .record({
      type: fc.oneof({ weight: 3, arbitrary: fc.constantFrom("auth", "ack", "reject", "ping", "ready", "message", "AUTH") }, fc.string()),
      fields: fc.uniqueArray(fc.tuple(fc.constantFrom(...FIELDS.slice(1)), fc.oneof(anyJsonText, badBase64.map((b) => JSON.stringify(b)))), { selector: ([k]) => k, maxLength: 4 }),
    })
    .map(({ type, fields }) => objectText([["type", JSON.stringify(type)], ...fields])),
  malformedJsonText,
  anyJsonText,
  deepJsonText,
  fc.string({ unit: "binary", maxLength: 200 }),
  fc.constantFrom(8_000, 60_000).map((n) => `{"type":"reject","id":7,"reason":"${"r".repeat(n)}"}`),
  fc.uint8Array({ maxLength: 64 }),
);

/** What a frame must get back: anything but an answer that grants something, within a short wait. */
async function expectAnswered(client: SocketClient, frame: string | Uint8Array): Promise<void> {
  const what = typeof frame === "string" ? frame.slice(0, 120) : `<${frame.byteLength} bytes>`;
  // next() fails after 2 s with what it waited for; a close first resolves it with the close.
  const answer = await client.next(undefined, 2000).catch((err: Error) => {
    if (client.closed) return null;
    throw new Error(`no answer to ${what}: ${err.message}`);
  });
  if (answer) {
    expect(["error", "pong"], `answer to ${what}: ${JSON.stringify(answer).slice(0, 200)}`).toContain(answer.type);
    if (answer.type === "error") {
      expect(answer.code).toMatch(SNAKE_CASE);
      expect(typeof answer.message).toBe("string");
    }
  }
  const closed = client.closed ?? (answer?.type === "error" && client.pending().length === 0 ? await client.closeEvent(150).catch(() => null) : null);
  if (closed) expect([CLOSE_CODES.badFrame, CLOSE_CODES.authFailed], `close after ${what}`).toContain(closed.code);
}

/** The inbox still works: a new connection authenticates and gets what is queued. */
async function expectStillWorks(inbox: ClaimedInbox, queued: number): Promise<void> {
  const client = await connect(inbox.agent.id);
  const ready = await client.auth(inbox.agent);
  expect(ready.backlog).toBe(queued);
  expect(await client.messages(queued)).toHaveLength(queued);
  client.close();
}

describe("garbage WebSocket frames", () => {
  it("before auth: each is answered with an error, a pong or a 4400/4003 close; the inbox still works", { timeout: 60_000 }, async () => {
    const inbox = await claimInbox();
    await (await postHook(inbox, "agentgram_inbox/agent", '{"n":1}')).text();
    await fc.assert(
      fc.asyncProperty(garbageFrame, async (frame) => {
        const client = await connect(inbox.agent.id);
        await client.next("challenge");
        client.ws.send(frame);
        await expectAnswered(client, frame);
        client.close();
        expect(await storedCount(inbox.agent.id)).toBe(1);
      }),
      settings(SEED, RUNS),
    );
    await expectStillWorks(inbox, 1);
  });

  it("after auth: each is answered with an error, a pong or a 4400 close; nothing queued is lost", { timeout: 60_000 }, async () => {
    const inbox = await claimInbox();
    await (await postHook(inbox, "agentgram_inbox/agent", '{"n":1}')).text();
    await fc.assert(
      // An ack or reject naming the message this socket holds is a valid frame, not garbage.
      fc.asyncProperty(garbageFrame.filter((f) => typeof f !== "string" || !isFrameFor(f, 1)), async (frame) => {
        const client = await connect(inbox.agent.id);
        await client.auth(inbox.agent);
        await client.next("message");
        client.ws.send(frame);
        await expectAnswered(client, frame);
        client.close();
        expect(await storedCount(inbox.agent.id)).toBe(1);
      }),
      settings(SEED, RUNS),
    );
    await expectStillWorks(inbox, 1);
  });
});

function isFrameFor(text: string, id: number): boolean {
  const frame = parseClientFrame(text);
  return (frame?.type === "ack" || frame?.type === "reject") && frame.id === id;
}
