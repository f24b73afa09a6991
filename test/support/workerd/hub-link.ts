// Scripting the workerd tests' stand-in hub for an inbox linked to it (standin-hub-inbox.ts): records
// shaped as the real hub's /hub/inbox and /hub/history answer them (test/fixtures/hub/current), the
// inbox's receipt key registered so it can refresh its token, and what the hub saw.
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { signEnvelope } from "../../../protocol/index.ts";
import type { Envelope, UnsignedEnvelope } from "../../../protocol/index.ts";
import { claimInbox, newAgent } from "./agents.ts";
import type { ClaimedInbox, TestAgent } from "./agents.ts";

export interface HubSideState {
  token: string | null;
  refreshes: number;
  acked: string[];
  renewed: string[];
  pulls: number;
  states: Record<string, string>;
}

async function hub(path: string, init?: RequestInit): Promise<unknown> {
  const res = await fetch(`${env.TEST_HUB_URL}${path}`, init);
  if (!res.ok) throw new Error(`stand-in hub ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** The inbox's receipt key as an active key of the agent at the hub: what `hub register` leaves. */
export async function registerReceiptKey(agent: TestAgent): Promise<void> {
  await hub("/__test/keys", { method: "PUT", body: JSON.stringify({ owner: agent.id, key_id: agent.receiptKeyId, pubkey: agent.receiptPublicKey, state: "active" }) });
}

export function scriptInbox(agentId: string, records: Record<string, unknown>[]): Promise<unknown> {
  return hub(`/__test/agents/${agentId}/inbox`, { method: "POST", body: JSON.stringify(records) });
}

export function scriptHistory(agentId: string, records: Record<string, unknown>[]): Promise<unknown> {
  return hub(`/__test/agents/${agentId}/history`, { method: "POST", body: JSON.stringify(records) });
}

/**
 * Another client of the agent refreshes its token: every older one is refused from now on. `laterSec`:
 * it does so that long after the inbox's own refresh, on the hub's clock (its token expires that much later).
 */
export async function refreshElsewhere(agentId: string, laterSec = 0): Promise<{ agent_token: string; expires_at: number }> {
  return (await hub(`/__test/agents/${agentId}/refresh`, { method: "POST", body: JSON.stringify({ later_sec: laterSec }) })) as { agent_token: string; expires_at: number };
}

/** The agent's next pull answered as a misbehaving hub would (standin-hub-inbox.ts, InboxScript). */
export function scriptNextPull(agentId: string, script: { kind: "bytes"; bytes: number } | { kind: "page"; text: string } | { kind: "redirect"; status: number; location: string }): Promise<unknown> {
  return hub(`/__test/agents/${agentId}/inbox-script`, { method: "POST", body: JSON.stringify(script) });
}

/** How often a redirect's target on the stand-in hub was fetched, and what each scripted huge answer had written when its connection ended. */
export async function hubProbes(): Promise<{ redirectHits: number; scriptedBytes: number[] }> {
  const { hits } = (await hub("/__test/redirect-hits")) as { hits: number };
  return { redirectHits: hits, scriptedBytes: (await hub("/__test/scripted-bytes")) as number[] };
}

export async function hubSide(agentId: string): Promise<HubSideState> {
  return (await hub(`/__test/agents/${agentId}/state`)) as HubSideState;
}

let records = 0;

/** A record as GET /hub/inbox returns it (inbox-record-a2a-0.1.json), with the envelope's extras. */
export function inboxRecord(envelope: Envelope | Record<string, unknown>, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const e = envelope as Envelope;
  const dm = e.to?.startsWith("ag_") ? `rm_dm_${[e.from, e.to].sort().join("_")}` : null;
  return {
    hub_msg_id: `h_${(++records).toString(16).padStart(32, "0")}`,
    envelope: { topic: null, goal: null, mentions: null, trace_id: null, ...envelope },
    text: typeof e.payload?.text === "string" ? e.payload.text : JSON.stringify(e.payload),
    room_id: dm, room_name: dm ? `DM ${e.to} & ${e.from}` : null, room_rule: null, room_member_count: dm ? 2 : null,
    room_member_names: dm ? ["Bob", "Alice"] : null, my_role: dm ? "member" : null, my_can_send: dm ? true : null,
    topic: null, topic_id: null, goal: null, delivery_note: null, mentioned: true,
    source_type: "agent", source_user_id: null, source_user_name: null, source_session_kind: null, reply_preview: null,
    ...fields,
  };
}

/** An envelope signed by `sender`, in a2a/0.1 or (with topic/goal) a2a/0.2. */
export function signedBy(sender: TestAgent, unsigned: UnsignedEnvelope): Promise<Envelope> {
  return signEnvelope(unsigned, sender.keyId, (m) => sender.sign(m));
}

/** An inbox claimed in pull mode, once the pull its claim sets off (from the alarm, at once) is over. */
export async function pullingInbox(limits: Record<string, unknown> = {}): Promise<ClaimedInbox> {
  const agent = newAgent();
  await registerReceiptKey(agent);
  const inbox = await claimInbox(agent, { hub: { mode: "pull", prefix: null, pull_interval_sec: 120 }, ...(Object.keys(limits).length ? { limits } : {}) });
  const stub = env.INBOX.getByName(agent.id);
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    if (await runInDurableObject(stub, (o) => o.hub.pullStatus().nextAtMs !== null && !o.hub.pullStatus().pulling)) return inbox;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("the claim's first pull did not finish within 10 s (the claim sets it off from the alarm at once)");
}

/**
 * Runs the alarm as due for a pull (the claim's own first pull may have run already, and set the next
 * one). The pull is made due without setting an alarm, so the runtime's own alarm cannot run beside this one.
 */
export async function pullNow(inbox: ClaimedInbox): Promise<void> {
  const stub = env.INBOX.getByName(inbox.agent.id);
  await runInDurableObject(stub, (o) => o.hub.pullAtNextAlarm());
  await runDurableObjectAlarm(stub);
}
