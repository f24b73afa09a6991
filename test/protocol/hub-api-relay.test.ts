// The relay's hub calls made through the one client (protocol/hub-api-registry.ts, hub-api-inbox.ts), in
// workerd against the tests' stand-in hub (test/support/node/standin-hub.ts, a real HTTP server that
// answers as today's hub does, test/fixtures/hub/current): the key look-up, a token refresh signed by
// the receipt key, the pull inbox's lease, renew and two-phase ack, a token another client ended (401),
// history in both directions, and a receipt's accepted / refused / retry.
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import {
  HubCallError,
  ackHubInbox,
  fetchHubHistory,
  hubClient,
  lookupHubKey,
  postHubReceipt,
  pullHubInbox,
  refreshHubToken,
  renewHubLeases,
  signWithSeed,
} from "../../protocol/index.ts";
import { newAgent } from "../support/workerd/agents.ts";
import type { TestAgent } from "../support/workerd/agents.ts";
import { hubSide, inboxRecord, refreshElsewhere, registerReceiptKey, scriptHistory, scriptInbox } from "../support/workerd/hub-link.ts";

const receiptSigner = (agent: TestAgent) => ({ keyId: agent.receiptKeyId, sign: (message: Uint8Array) => signWithSeed(agent.receiptSeed, message) });

/** An agent whose receipt key the hub holds as active, and a client carrying the token the key refreshed. */
async function linkedAgent() {
  const agent = newAgent();
  await registerReceiptKey(agent);
  const token = await refreshHubToken(hubClient(env.TEST_HUB_URL), agent.id, receiptSigner(agent));
  return { agent, token, hub: hubClient(env.TEST_HUB_URL, { token: token.token }) };
}

const record = (from: string, to: string, text: string) => inboxRecord({ v: "a2a/0.1", msg_id: crypto.randomUUID(), ts: 1_700_000_000, from, to, type: "message", payload: { text } });

async function hubApi(path: string, init?: RequestInit): Promise<unknown> {
  return (await fetch(`${env.TEST_HUB_URL}${path}`, init)).json();
}

describe("the registry", () => {
  it("looks up a key the hub holds, and null for one it does not know", async () => {
    const agent = newAgent();
    await registerReceiptKey(agent);
    const hub = hubClient(env.TEST_HUB_URL);
    expect(await lookupHubKey(hub, agent.id, agent.receiptKeyId)).toEqual({ key_id: agent.receiptKeyId, agent_id: agent.id, pubkey: agent.receiptPublicKey, state: "active" });
    expect(await lookupHubKey(hub, agent.id, "k_unknown")).toBeNull();
  });

  it("refreshes the token with the receipt key: the hub's current one, held for its 24 h", async () => {
    const before = Date.now();
    const { agent, token } = await linkedAgent();
    const side = await hubSide(agent.id);
    expect([side.token, side.refreshes]).toEqual([token.token, 1]);
    expect(token.expiresAtMs).toBeGreaterThan(before + 86_400_000 - 2000);
    expect(token.expiresAtMs % 1000).toBe(0);
    // A key the hub does not hold as active proves nothing.
    const stranger = newAgent();
    const refused = await refreshHubToken(hubClient(env.TEST_HUB_URL), stranger.id, receiptSigner(stranger)).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(HubCallError);
    expect(refused).toMatchObject({ code: "hub_unauthorized", hubStatus: 401, detail: "Signature verification failed" });
  });
});

describe("the pull inbox", () => {
  it("leases waiting records, renews and acks them; acked ones do not come back", async () => {
    const { agent, hub } = await linkedAgent();
    const records = [record("ag_aaaaaaaaaaaa", agent.id, "one"), record("ag_aaaaaaaaaaaa", agent.id, "two")];
    await scriptInbox(agent.id, records);
    const ids = records.map((r) => String(r.hub_msg_id));

    const page = await pullHubInbox(hub);
    expect(page.hasMore).toBe(false);
    expect(page.messages.map((m) => m.hub_msg_id)).toEqual(ids);
    expect(page.messages[0]!.envelope).toMatchObject({ from: "ag_aaaaaaaaaaaa", payload: { text: "one" } });
    expect((await hubSide(agent.id)).states).toEqual({ [ids[0]!]: "processing", [ids[1]!]: "processing" });

    await renewHubLeases(hub, [ids[1]!]);
    await ackHubInbox(hub, ids);
    const side = await hubSide(agent.id);
    expect([side.renewed, side.acked, side.states]).toEqual([[ids[1]], ids, { [ids[0]!]: "delivered", [ids[1]!]: "delivered" }]);
    expect((await pullHubInbox(hub)).messages).toEqual([]);
  });

  it("a token another client's refresh ended is refused: hub_unauthorized, so the relay can drop it and refresh", async () => {
    const { agent, hub } = await linkedAgent();
    await refreshElsewhere(agent.id);
    const error = await pullHubInbox(hub).catch((err: unknown) => err);
    expect(error).toMatchObject({ code: "hub_unauthorized", hubStatus: 401, status: 502 });
    expect((error as Error).message).toBe("hub refused GET /hub/inbox?limit=50&timeout=0&ack=false: 401 Invalid or expired token");
  });
});

describe("history", () => {
  it("without a cursor, the newest returned oldest first; after one, the records after it", async () => {
    const { agent, hub } = await linkedAgent();
    const records: Record<string, unknown>[] = ["a", "b", "c"].map((text) => ({ ...record(agent.id, "ag_bbbbbbbbbbbb", text), state: "delivered", created_at: "2026-12-01T00:00:00Z" }));
    await scriptHistory(agent.id, records);
    const ids = records.map((r) => String(r.hub_msg_id));
    expect((await fetchHubHistory(hub, null)).messages.map((m) => m.hub_msg_id)).toEqual(ids);
    const after = await fetchHubHistory(hub, ids[0]!);
    expect([after.messages.map((m) => m.hub_msg_id), after.hasMore]).toEqual([ids.slice(1), false]);
    expect(after.messages[0]).toMatchObject({ state: "delivered", created_at: "2026-12-01T00:00:00Z" });
  });
});

describe("receipts", () => {
  it("accepted on 2xx; refused on a permanent 4xx; retried on 408, 429, 5xx and when the hub cannot be reached — the body sent as it was kept", async () => {
    const from = newAgent().id;
    await hubApi(`/__test/receipt-script/${from}`, { method: "PUT", body: JSON.stringify([400, 429, 503, 200]) });
    const receipt = `{"from":"${from}","type":"ack",  "payload":{}}`;
    const hub = hubClient(env.TEST_HUB_URL);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await postHubReceipt(hub, receipt));
    expect(results).toEqual([
      { outcome: "refused", status: 400, detail: "scripted failure" },
      { outcome: "retry", status: 429, detail: "scripted failure" },
      { outcome: "retry", status: 503, detail: "scripted failure" },
      { outcome: "accepted", status: 200, detail: "" },
    ]);
    expect(await hubApi(`/__test/receipts/${from}`)).toHaveLength(4);
    const down = hubClient("https://hub.invalid", { fetch: (async () => Promise.reject(new TypeError("Network connection lost."))) as typeof fetch });
    expect(await postHubReceipt(down, receipt)).toEqual({ outcome: "retry", status: 0, detail: "cannot reach the hub at https://hub.invalid (POST /hub/receipt): Network connection lost." });
  });
});
