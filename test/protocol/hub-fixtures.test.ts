// The protocol module against what the real hub builds sent (test/fixtures/hub/, recorded from the
// public hub code at 9d900985 and ed35a77a): every signed envelope in them verifies under our rules
// (a2a/0.1 and a2a/0.2, room messages addressed to their room), every flat webhook body reads back
// to its sender and text, its text is what we render from the signed original's payload, and its
// session key names the room (and topic) of the original's record.
/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { messageBody, parseEnvelope, parseFlatHubBody, sessionKeyNamesRoom, utf8, verifyEnvelope } from "../../protocol/index.ts";
import type { Envelope, KeyRecord } from "../../protocol/index.ts";

interface Fixture {
  agents?: Record<string, { key_id: string; pubkey: string }>;
  agents_postgres_run?: Record<string, { key_id: string; pubkey: string }>;
  exchanges: { direction?: string; request: { method?: string; path?: string; raw?: string; body?: unknown }; response: { status?: number; body?: unknown } }[];
}

const files = import.meta.glob<Fixture>("../fixtures/hub/**/*.json", { eager: true, import: "default" });
const named = Object.entries(files).map(([path, fixture]) => ({ path: path.replace("../fixtures/hub/", ""), fixture }));

/** Every key of every agent the fixtures name (ids derive from keys, so one table serves all files). */
const keys = new Map<string, KeyRecord>();
for (const { fixture } of named) {
  for (const table of [fixture.agents, fixture.agents_postgres_run]) {
    for (const [agentId, agent] of Object.entries(table ?? {})) {
      if (agent && typeof agent.pubkey === "string") keys.set(`${agentId}/${agent.key_id}`, { key_id: agent.key_id, agent_id: agentId, pubkey: agent.pubkey, state: "active" });
    }
  }
}

/** Every value in a JSON tree that looks like a signed envelope. */
function signedEnvelopes(value: unknown, out: Record<string, unknown>[] = []): Record<string, unknown>[] {
  if (Array.isArray(value)) for (const v of value) signedEnvelopes(v, out);
  else if (typeof value === "object" && value !== null) {
    const record = value as Record<string, unknown>;
    const sig = record.sig as { value?: unknown } | undefined;
    if (typeof record.v === "string" && typeof record.msg_id === "string" && typeof sig?.value === "string" && sig.value !== "") out.push(record);
    else for (const v of Object.values(record)) signedEnvelopes(v, out);
  }
  return out;
}

async function verdict(raw: Record<string, unknown>): Promise<string> {
  try {
    const envelope = parseEnvelope(raw);
    await verifyEnvelope(envelope, {
      inbox: envelope.to,
      room: envelope.to.startsWith("rm_") ? envelope.to : null,
      nowSec: envelope.ts,
      resolveKey: async (agentId, keyId) => keys.get(`${agentId}/${keyId}`) ?? null,
    });
    return "ok";
  } catch (err) {
    return (err as { code?: string }).code ?? String(err);
  }
}

describe("the real hub's envelopes", () => {
  it("were recorded with the senders' public keys", () => {
    expect(named.length).toBeGreaterThan(25);
    expect(keys.size).toBeGreaterThan(8);
  });

  it("all verify under the relay's rules, a2a/0.2 included, but the one signed the a2a/0.1 way with v = a2a/0.2", async () => {
    const failures: string[] = [];
    let checked = 0;
    let topics = 0;
    for (const { path, fixture } of named) {
      for (const raw of signedEnvelopes(fixture)) {
        if (!keys.has(`${String(raw.from)}/${String((raw.sig as { key_id: string }).key_id)}`)) continue;
        checked++;
        if (raw.v === "a2a/0.2") topics++;
        const result = await verdict(raw);
        if (result !== "ok") failures.push(`${path}: ${String(raw.msg_id)} ${result}`);
      }
    }
    expect(checked).toBeGreaterThan(50);
    expect(topics).toBeGreaterThan(2);
    // Fact 33 of the fixtures' README: sent to show the hub refuses it, and so do we.
    expect(failures.length).toBeGreaterThan(0);
    expect(failures.every((f) => f.startsWith("current/inbox-record-a2a-0.2.json") && f.endsWith("invalid_signature"))).toBe(true);
    expect(new Set(failures).size).toBe(1);
  });
});

describe("the webhook era's flat bodies", () => {
  it("read back to sender and text, render from the signed original, and name its room and topic", async () => {
    let matched = 0;
    for (const { path, fixture } of named.filter((f) => f.path.startsWith("webhook-era/"))) {
      const raws = signedEnvelopes(fixture);
      const originals = raws.map((raw) => parseEnvelope(raw));
      // a2a/0.1 does not sign a topic, so parseEnvelope drops it; the hub still files the record under it.
      const topicOf = (e: Envelope) => raws.find((r) => r.msg_id === e.msg_id && typeof r.topic === "string")?.topic as string | undefined;
      const rooms = new Map<string, { room: string | null; topic: string | null }>();
      for (const ex of fixture.exchanges) {
        const messages = (ex.response.body as { messages?: { envelope: Envelope; room_id: string | null; topic: string | null }[] } | undefined)?.messages;
        for (const m of messages ?? []) if (m.envelope?.msg_id) rooms.set(m.envelope.msg_id, { room: m.room_id, topic: m.topic });
      }
      for (const ex of fixture.exchanges) {
        if (ex.direction !== "hub->agent" || !ex.request.path?.endsWith("/botcord_inbox/agent") || typeof ex.request.raw !== "string") continue;
        const flat = parseFlatHubBody(utf8(ex.request.raw));
        if (!flat) continue; // the hub's own notices and forwarded receipts have no "says:" line
        const original = originals.find((e) => e.from === flat.sender && e.type === "message" && messageBody(e.payload) === flat.text);
        expect(original, `${path}: no signed original renders to ${JSON.stringify(flat.text)}`).toBeDefined();
        // Without a history record in the file: a room message names its room, a DM's room is
        // rm_dm_<smaller id>_<larger id> (fact 9).
        const to = original!.to;
        const where = rooms.get(original!.msg_id) ?? { room: to.startsWith("rm_") ? to : `rm_dm_${[original!.from, to].sort().join("_")}`, topic: topicOf(original!) ?? null };
        expect(await sessionKeyNamesRoom(flat.sessionKey, where.room, where.topic), `${path}: ${flat.sessionKey}`).toBe(true);
        matched++;
      }
    }
    expect(matched).toBeGreaterThan(8);
  });
});
