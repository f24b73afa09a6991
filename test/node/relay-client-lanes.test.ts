// The relay's socket in lanes mode (local-agent/relay/relay-client.ts with a real delivery journal),
// against a small real `ws` server playing the relay: the auth names "lanes"; with a relay whose `ready`
// names it too, the resume cursor moves only by the frames' `floor` (and stays under every open id,
// never going down), not by acks or `rejected`; a `restored` frame under the cursor is delivered, unless
// the journal recorded it finished (then it is acknowledged again, not posted); an `abandon` frame is
// handed on and its id forgotten. Against a relay whose `ready` names no features everything is as
// before: acks move the cursor, and a frame under it is dropped, restored or not.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { AbandonFrame, DeliveryFrame } from "../../protocol/index.ts";
import { DeliveryJournal } from "../../local-agent/delivery/delivery-journal.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { RelayClient } from "../../local-agent/relay/relay-client.ts";
import { startFakeRelay } from "../support/node/fake-relay.ts";
import { waitUntil } from "../support/node/stack.ts";

function frame(id: number, extra: Partial<DeliveryFrame> = {}): DeliveryFrame {
  return { type: "message", id, kind: "hook", subpath: "a", content_type: "text/plain", body: "x", encoding: "utf8", received_at: 0, expires_at: 0, ...extra };
}

const cleanups: (() => unknown)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function connected(features: string[] | undefined, journalAt?: (journal: DeliveryJournal) => void) {
  const relay = await startFakeRelay(features);
  cleanups.push(() => relay.close());
  const dir = mkdtempSync(join(tmpdir(), "clawrelay-lanes-"));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const identity = await newIdentity();
  const journal = DeliveryJournal.open(join(dir, "journal"), { agentId: identity.agentId });
  cleanups.push(() => journal.close());
  journalAt?.(journal);
  const client = new RelayClient({ relayUrl: relay.url, identity, logger: silentLogger, journal });
  cleanups.push(() => client.close());
  const messages: DeliveryFrame[] = [];
  const abandoned: AbandonFrame[] = [];
  client.on("message", (f) => messages.push(f));
  client.on("abandon", (f) => abandoned.push(f));
  client.start();
  await waitUntil("connected", () => client.state === "connected");
  /** Sends `frames`, then a marker frame, and waits until the marker came through (so every frame before it was handled). */
  const deliver = async (...frames: object[]) => {
    const marker = ++markers;
    for (const f of frames) relay.send(f);
    relay.send({ type: "hub_token", token: `t${marker}`, expires_at: marker });
    await waitUntil("the frames handled", () => seenTokens.includes(marker));
  };
  const seenTokens: number[] = [];
  let markers = 0;
  client.on("hub_token", (f) => seenTokens.push(f.expires_at));
  return { relay, journal, client, messages, abandoned, deliver };
}

describe("the relay client with a relay that speaks lanes", () => {
  it("names lanes in its auth; the cursor moves by the floor, under every open id, never by acks or `rejected`, never down; each ack is journalled", async () => {
    const { relay, journal, client, messages, deliver } = await connected(["lanes"]);
    expect(client.lanesMode).toBe(true);
    expect(relay.frames[0]).toMatchObject({ type: "auth", features: ["lanes", "live"] });
    // Two lanes: 5 (stuck at an app) and 6, 7 (the gateway's).
    await deliver(frame(5, { lane: "source:shop", floor: 4 }), frame(6, { lane: "c1", floor: 4 }), frame(7, { lane: "c1", floor: 4 }));
    expect(messages.map((m) => m.id)).toEqual([5, 6, 7]);
    expect(client.cursor).toBe(4);
    client.ack(6);
    client.ack(7);
    expect(client.cursor).toBe(4);
    expect(journal.has(6) && journal.has(7)).toBe(true);
    expect(journal.has(5)).toBe(false);
    // The relay says nothing up to 7 is queued but 5 is still open here: the cursor stays under it.
    await deliver(frame(8, { lane: "c1", floor: 7 }));
    expect(client.cursor).toBe(4);
    client.reject(5, { reason: "refused", status: 400, attempts: 1 });
    await deliver({ type: "rejected", id: 5 });
    expect(client.cursor).toBe(4);
    await deliver(frame(9, { lane: "c1", floor: 7 }));
    expect(client.cursor).toBe(7);
    // A frame with a lower floor (sent before a later one) does not take the cursor back.
    await deliver(frame(10, { lane: "c1", floor: 3 }));
    expect(client.cursor).toBe(7);
    await waitUntil("the acks and the reject sent", () => relay.frames.filter((f) => f.type !== "ping").length === 4);
    expect(relay.frames.slice(1).filter((f) => f.type !== "ping")).toEqual([{ type: "ack", id: 6 }, { type: "ack", id: 7 }, { type: "reject", id: 5, reason: "refused", status: 400, attempts: 1 }]);
    // The journal's ids above the cursor are let go once the cursor passes them (the next finish writes it).
    client.ack(8);
    expect(journal.cursor).toBe(7);
    expect(journal.pending()).toEqual([8]);
  });

  it("a restored frame under the cursor is delivered; one the journal recorded finished is acknowledged again, not delivered; a plain frame under the cursor is acknowledged again (finished), never left in flight", async () => {
    const { relay, client, messages, deliver } = await connected(["lanes"], (journal) => {
      journal.finish(20, 20);
      // Restored 3 was finished before a crash, its ack never seen by the relay.
      journal.finish(3, 20);
    });
    expect(client.cursor).toBe(20);
    await deliver(frame(2, { lane: "source:shop", floor: 1, restored: true }), frame(3, { lane: "source:shop", floor: 1, restored: true }), frame(4, { lane: "source:shop", floor: 1 }));
    expect(messages.map((m) => m.id)).toEqual([2]);
    expect(relay.frames.filter((f) => f.type === "ack")).toEqual([{ type: "ack", id: 3 }, { type: "ack", id: 4 }]);
    // Open under the cursor: the floor cannot move the cursor down to it.
    expect(client.cursor).toBe(20);
    client.ack(2);
    await deliver(frame(2, { lane: "source:shop", floor: 1, restored: true }));
    expect(messages.map((m) => m.id)).toEqual([2]);
    expect(relay.frames.filter((f) => f.type === "ack")).toEqual([{ type: "ack", id: 3 }, { type: "ack", id: 4 }, { type: "ack", id: 2 }, { type: "ack", id: 2 }]);
  });

  it("abandon: handed on, its id no longer open (the floor passes it; the relay may send it again, and it is delivered again)", async () => {
    const { client, messages, abandoned, deliver } = await connected(["lanes"]);
    await deliver(frame(5, { lane: "source:shop", floor: 4 }));
    await deliver({ type: "abandon", id: 5, reason: "retargeted" });
    expect(abandoned).toEqual([{ type: "abandon", id: 5, reason: "retargeted" }]);
    await deliver(frame(5, { lane: "source:shop", floor: 4 }));
    expect(messages.map((m) => m.id)).toEqual([5, 5]);
    await deliver({ type: "abandon", id: 5, reason: "dropped" });
    await deliver(frame(6, { lane: "c1", floor: 5 }));
    expect(client.cursor).toBe(5);
  });

  it("a dropped socket forgets what was open; the next connection resumes after the cursor the floors gave", async () => {
    const { relay, client, deliver } = await connected(["lanes"]);
    await deliver(frame(5, { lane: "c1", floor: 4 }), frame(6, { lane: "c1", floor: 4 }));
    client.ack(5);
    await deliver(frame(7, { lane: "c1", floor: 5 }));
    expect(client.cursor).toBe(5);
    relay.drop();
    await waitUntil("connected again", () => relay.frames.filter((f) => f.type === "auth").length === 2 && client.state === "connected");
    expect(relay.frames.filter((f) => f.type === "auth").map((f) => f.after)).toEqual([0, 5]);
  });
});

describe("the relay client with an older relay (no features in `ready`)", () => {
  it("acks move the cursor as before; floor and restored mean nothing; a frame under the cursor is dropped", async () => {
    const { relay, client, messages, deliver } = await connected(undefined);
    expect(client.lanesMode).toBe(false);
    expect(relay.frames[0]).toMatchObject({ type: "auth", features: ["lanes", "live"] });
    await deliver(frame(1), frame(2));
    client.ack(2);
    expect(client.cursor).toBe(0);
    // As before lanes: an ack moves the cursor up to itself, below what is still open.
    client.ack(1);
    expect(client.cursor).toBe(1);
    await deliver(frame(3, { floor: 50 }), frame(1, { restored: true }));
    expect(messages.map((m) => m.id)).toEqual([1, 2, 3]);
    expect(client.cursor).toBe(1);
    client.ack(3);
    expect(client.cursor).toBe(3);
  });
});
