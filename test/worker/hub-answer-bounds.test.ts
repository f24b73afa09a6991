// The hub's answers read with bounds, by the relay's pull against the stand-in hub playing a hub that
// breaks the rules (the outside probe's finding 9): an answer of 50 MB is refused at the cap with reading
// stopped there, a page of 10,000 records when 50 were asked stores 50, and a redirect — to the cloud's
// metadata address or anywhere — is never followed. The inbox pulls normally afterwards each time.
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { afterEach, describe, expect, it } from "vitest";
import { HUB_PAGE_MAX_BYTES, PULL_LIMIT, draftEnvelope } from "../../protocol/index.ts";
import { poll, registeredAgent } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { hubProbes, hubSide, inboxRecord, pullingInbox, pullNow, scriptInbox, scriptNextPull, signedBy } from "../support/workerd/hub-link.ts";
import { closeAllSockets } from "../support/workerd/socket-client.ts";

afterEach(closeAllSockets);

const lastPull = (inbox: ClaimedInbox) => runInDurableObject(env.INBOX.getByName(inbox.agent.id), (o) => o.store.loadHubState().last_pull);

/** A signed message waits at the hub and the next pull stores it: the link still works. */
async function pullsNormally(inbox: ClaimedInbox): Promise<void> {
  const alice = await registeredAgent();
  const record = inboxRecord(await signedBy(alice, await draftEnvelope({ from: alice.id, to: inbox.agent.id, type: "message", payload: { text: "after" } })));
  await scriptInbox(inbox.agent.id, [record]);
  await pullNow(inbox);
  expect((await hubSide(inbox.agent.id)).acked).toContain(record.hub_msg_id);
  expect(await lastPull(inbox)).toMatchObject({ ok: true });
}

describe("a hub's answers are read with bounds", () => {
  it("refuses a 50 MB page at the cap, stops reading there, stores nothing of it, and says so in the link's status", async () => {
    const inbox = await pullingInbox();
    const bytes = 50 * 1024 * 1024;
    await scriptNextPull(inbox.agent.id, { kind: "bytes", bytes });
    await pullNow(inbox);
    const status = await lastPull(inbox);
    expect(status).toMatchObject({ ok: false, count: 0 });
    expect(status!.detail).toContain(`larger than the ${HUB_PAGE_MAX_BYTES / 1024 / 1024} MiB clawrelay reads of it`);
    // The stand-in wrote only what the relay read before it cancelled (plus what the sockets buffered).
    const written = (await hubProbes()).scriptedBytes.at(-1);
    expect(written).toBeLessThan(bytes);
    expect((await poll(inbox.agent, "ack=false")).count).toBe(0);
    await pullsNormally(inbox);
  });

  it("stores only the 50 records asked for when the hub answers with 10,000 (the rest stay at the hub)", async () => {
    const inbox = await pullingInbox();
    const note = await draftEnvelope({ from: "hub", to: inbox.agent.id, type: "system", payload: { text: "[BotCord Hub] flood" } });
    const records = Array.from({ length: 10_000 }, () =>
      inboxRecord({ ...note, msg_id: crypto.randomUUID(), sig: { alg: "ed25519", key_id: "hub", value: "" } }, { room_id: null, room_member_count: null }),
    );
    await scriptNextPull(inbox.agent.id, { kind: "page", text: JSON.stringify({ messages: records, count: records.length, has_more: false }) });
    await pullNow(inbox);
    const stored = await poll(inbox.agent, "ack=false&limit=100");
    expect(stored.count).toBe(PULL_LIMIT);
    expect(stored.messages.map((m) => (JSON.parse(m.body) as { hub_msg_id: string }).hub_msg_id)).toEqual(records.slice(0, PULL_LIMIT).map((r) => r.hub_msg_id));
  });

  it("never follows a redirect: a 302 to 169.254.169.254 is an error naming that origin, and a redirect's target is never fetched", async () => {
    const inbox = await pullingInbox();
    await scriptNextPull(inbox.agent.id, { kind: "redirect", status: 302, location: "http://169.254.169.254/latest/meta-data/iam/security-credentials/" });
    await pullNow(inbox);
    const status = await lastPull(inbox);
    expect(status).toMatchObject({ ok: false, status: 302 });
    expect(status!.detail).toContain("the hub answered 302 to http://169.254.169.254; clawrelay follows no redirect from a hub");

    const hitsBefore = (await hubProbes()).redirectHits;
    await scriptNextPull(inbox.agent.id, { kind: "redirect", status: 307, location: `${env.TEST_HUB_URL}/__test/redirect-target` });
    await pullNow(inbox);
    expect((await lastPull(inbox))!.detail).toContain("the hub answered 307 to http://127.0.0.1:");
    expect((await hubProbes()).redirectHits).toBe(hitsBefore);
    await pullsNormally(inbox);
  });
});
