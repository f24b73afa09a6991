// Generated garbage frames on GET /inbox/{id}/connect, before and after auth: the object never
// crashes. Each frame is answered — an error frame (bad_frame, auth_required, auth_failed,
// not_in_flight, frame_too_large), a pong, or a close with 4400/4003/1009 — and afterwards a valid
// connection still works. Lone surrogates, deep nesting inside fields and frames past 1 MiB have a
// property of their own, and a reject whose reason holds lone surrogates is shelved and shown intact.
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import { CLOSE_CODES, parseClientFrame } from "../../../protocol/index.ts";
import { CLOSE_MESSAGE_TOO_BIG, MAX_CLIENT_FRAME_BYTES } from "../../../worker/delivery/socket-limits.ts";
import { claimInbox, postHook, showMessage } from "../../support/workerd/agents.ts";
import type { ClaimedInbox } from "../../support/workerd/agents.ts";
import { closeAllSockets, connect } from "../../support/workerd/socket-client.ts";
import type { SocketClient } from "../../support/workerd/socket-client.ts";
import { SNAKE_CASE, anyJsonText, badBase64, deepJsonText, malformedJsonText, objectText, settings, storedCount } from "./arbitraries.ts";

// Fixed so every run is the same; replay a failure with `{ ...settings(SEED, RUNS), path: "<reported path>" }`.
const SEED = 0x5eed_0004;
const RUNS = 150;
const HOSTILE_RUNS = 150;
const SURROGATE_REJECT_RUNS = 40;

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
  // JSON.stringify escapes lone surrogates: a report with a raw one cannot travel to the test runner.
  const what = typeof frame === "string" ? JSON.stringify(frame.slice(0, 120)) : `<${frame.byteLength} bytes>`;
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
  if (closed) expect([CLOSE_CODES.badFrame, CLOSE_CODES.authFailed, CLOSE_MESSAGE_TOO_BIG], `close after ${what}`).toContain(closed.code);
}

/**
 * What a frame of the protocol's own types may get: an error frame (and maybe a close with an allowed
 * code), or nothing — a hub_pull with extra fields, an accepted hub_token is still one — and then the pong that
 * answers a ping sent after it, proving the object went on.
 */
async function expectRefusedOrIgnored(client: SocketClient, frame: string | Uint8Array): Promise<void> {
  const what = typeof frame === "string" ? JSON.stringify(frame.slice(0, 120)) : `<${frame.byteLength} bytes>`;
  client.ws.send(frame);
  try {
    client.send('{ "type": "ping" }');
  } catch {
    // Closed by the server already: the close is checked below.
  }
  for (;;) {
    const answer = await client.next(undefined, 3000).catch((err: Error) => {
      if (client.closed) return null;
      throw new Error(`no answer to ${what}: ${err.message}`);
    });
    if (!answer) break;
    if (answer.type === "pong") return;
    expect(answer.type, `answer to ${what}`).toBe("error");
    if (answer.type === "error") expect(answer.code).toMatch(SNAKE_CASE);
  }
  expect([CLOSE_CODES.badFrame, CLOSE_CODES.authFailed, CLOSE_MESSAGE_TOO_BIG], `close after ${what}`).toContain(client.closed?.code);
}

/** A lone surrogate as a JSON escape (the text is valid UTF-8, the parsed string is not well-formed) or raw (the transport sends U+FFFD). */
const loneSurrogate = fc.record({ unit: fc.integer({ min: 0xd800, max: 0xdfff }), escaped: fc.boolean(), around: fc.constantFrom(["", ""], ["a", "b"], ["\\u0041", ""], ["", "\\udc00"]) })
  .map(({ unit, escaped, around }) => `${around[0]}${escaped ? `\\u${unit.toString(16)}` : String.fromCharCode(unit)}${around[1]}`);

/** The protocol's frames with a lone surrogate in one string field, or a deep value in one field. */
const hostileFieldFrame: fc.Arbitrary<string> = fc
  .record({
    type: fc.constantFrom("auth", "ack", "reject", "ping", "hub_pull", "hub_token"),
    field: fc.constantFrom("type", "key", "signature", "reason", "token", "id"),
    value: fc.oneof(loneSurrogate.map((text) => `"${text}"`), deepJsonText),
  })
  .map(({ type, field, value }) => {
    const entries: [string, string][] = [["type", JSON.stringify(type)], ["id", "7"], ["key", '"k"'], ["signature", '"s"'], ["expires_at", "1"]];
    return objectText([...entries.filter(([k]) => k !== field), [field, value]]);
  });

/** Frames just past the relay's 1 MiB limit: JSON it would otherwise parse, or bytes. */
const oversizedFrame: fc.Arbitrary<string | Uint8Array> = fc
  .record({ extra: fc.integer({ min: 1, max: 4096 }), kind: fc.constantFrom("auth", "ping", "multibyte", "binary") })
  .map(({ extra, kind }) => {
    const size = MAX_CLIENT_FRAME_BYTES + extra;
    if (kind === "binary") return new Uint8Array(size);
    if (kind === "multibyte") return `{"type":"ping","pad":"${"é".repeat(Math.ceil((size - 22) / 2))}"}`;
    const prefix = `{"type":"${kind}","key":"`;
    return `${prefix}${"a".repeat(size - prefix.length - 2)}"}`;
  });

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

describe("hostile WebSocket frames", () => {
  it("lone surrogates and deep nesting inside fields, and frames past 1 MiB, before and after auth: each answered, nothing lost", { timeout: 120_000 }, async () => {
    const inbox = await claimInbox();
    await (await postHook(inbox, "agentgram_inbox/agent", '{"n":1}')).text();
    let tooLarge = 0;
    await fc.assert(
      fc.asyncProperty(fc.oneof({ weight: 3, arbitrary: hostileFieldFrame }, oversizedFrame).filter((f) => typeof f !== "string" || !isFrameFor(f, 1)), fc.boolean(), async (frame, authed) => {
        const client = await connect(inbox.agent.id);
        await client.reach(inbox.agent, authed);
        await expectRefusedOrIgnored(client, frame);
        if ((typeof frame === "string" ? frame.length : frame.byteLength) > MAX_CLIENT_FRAME_BYTES / 3) {
          tooLarge++;
          expect((await client.closeEvent()).code).toBe(CLOSE_MESSAGE_TOO_BIG);
        }
        client.close();
        expect(await storedCount(inbox.agent.id)).toBe(1);
      }),
      settings(SEED + 1, HOSTILE_RUNS),
    );
    expect(tooLarge).toBeGreaterThan(HOSTILE_RUNS / 8);
    await expectStillWorks(inbox, 1);
  });

  it("a reject whose reason holds lone surrogates is shelved, and the queue API shows the reason as well-formed text", { timeout: 60_000 }, async () => {
    const inbox = await claimInbox();
    const client = await connect(inbox.agent.id);
    await client.auth(inbox.agent);
    // JSON.stringify writes a lone surrogate as its \u escape: the relay's JSON.parse gets it back whole.
    const unit = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
    await fc.assert(
      fc.asyncProperty(fc.array(fc.oneof(unit, fc.string({ maxLength: 8 })), { minLength: 1, maxLength: 6 }).map((parts) => `gateway said ${parts.join("")}`), async (reason) => {
        await (await postHook(inbox, "agentgram_inbox/agent", '{"n":1}')).text();
        const message = await client.next("message");
        client.send(JSON.stringify({ type: "reject", id: message.id, reason }));
        expect(await client.next("rejected")).toEqual({ type: "rejected", id: message.id });
        const shown = await showMessage(inbox.agent, message.id);
        expect(shown.message.state).toBe("dead");
        expect(shown.message.reason).toMatch(/^gateway said /);
        expect(() => encodeURIComponent(shown.message.reason!), "a lone surrogate in the shown reason").not.toThrow();
      }),
      settings(SEED + 2, SURROGATE_REJECT_RUNS),
    );
  });
});

function isFrameFor(text: string, id: number): boolean {
  const frame = parseClientFrame(text);
  return (frame?.type === "ack" || frame?.type === "reject") && frame.id === id;
}
