// The inbox's history from the command line, end to end: the real relay (bundled, in Miniflare) keeps what
// the real agent delivered to a stand-in gateway, `clawrelay messages --state delivered --search` finds a
// delivered message by a word in its body (any case) with its excerpt, and `clawrelay messages replay
// --since T --state delivered` re-delivers each matching one once, in order (a dry run only counts); `status`
// says what is kept.
import { describe, expect, it } from "vitest";
import type { AgentStatusAnswer } from "../../local-agent/agent-status.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import type { HistoryItem } from "../../local-agent/relay/history.ts";
import { ownerCall, postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();
const relayUrl = () => fixture.relay().url;
const AGENT = "agentgram_inbox/agent";

async function hook(home: AgentHome, body: string): Promise<number> {
  const answer = await postHook(relayUrl(), home, AGENT, body);
  expect(answer.status).toBe(202);
  return answer.body.id as number;
}

/** The relay's kept (delivered) messages, as history lists them. */
async function delivered(home: AgentHome): Promise<HistoryItem[]> {
  const answer = await ownerCall(relayUrl(), home, "GET", "/history?state=delivered&limit=200");
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return (answer.body as { messages: HistoryItem[] }).messages;
}

/** Nothing waits at the relay: every message is delivered (or dead). */
async function settled(home: AgentHome): Promise<boolean> {
  const answer = await ownerCall(relayUrl(), home, "GET", "/queue?limit=1");
  const summary = (answer.body as { summary: { queued: number; sent: number } }).summary;
  return summary.queued === 0 && summary.sent === 0;
}

describe("history from the CLI", () => {
  it("messages --state delivered --search finds a delivered message by a word in its body, any case, with its excerpt", async () => {
    const { gateway, home } = await fixture.setUp();
    const agent = await fixture.run(home);
    const bodies = ['{"message":"the heron lands"}', '{"message":"a Pelican dives for fish"}', '{"message":"the gull waits"}'];
    const ids: number[] = [];
    for (const body of bodies) ids.push(await hook(home, body));
    await waitUntil("the three hooks at the gateway", () => gateway.received.length === 3);
    await waitUntil("the three kept as delivered", async () => (await delivered(home)).length === 3);

    const json = await runCli(["messages", "--state", "delivered", "--search", "PELICAN", "--json"], home.env);
    expect(json.stderr).toBe("");
    expect(json.code).toBe(0);
    const found = JSON.parse(json.stdout) as { messages: HistoryItem[]; next_cursor: string | null };
    expect(found.messages.map((m) => [m.id, m.state])).toEqual([[ids[1], "delivered"]]);
    expect(found.messages[0]!.excerpt).toContain("Pelican dives");

    const text = await runCli(["messages", "--state", "delivered", "--search", "pelican"], home.env);
    expect(text.code).toBe(0);
    const lines = text.stdout.split("\n");
    expect(lines[1]).toMatch(new RegExp(`^${ids[1]}\\s+delivered\\s+${AGENT}`));
    expect(lines[2]).toMatch(/^ {4}match: “.*Pelican dives.*”$/);
    expect(text.stdout).not.toContain("heron");

    // Today's listing (no history flag) still lists only what waits: nothing.
    expect((await runCli(["messages"], home.env)).stdout).toMatch(/^no messages\n/);
    // `status` says what is kept and for how long (the relay's default retention: 7 days).
    const status = (await (await fetch(`http://127.0.0.1:${agent.apiPort}/clawrelay/status`)).json()) as AgentStatusAnswer;
    expect(statusText(status, process.pid, Date.now()).split("\n")).toContainEqual(expect.stringMatching(/^history {3}3 kept for 7 d, the oldest \d+ s ago — /));
  });

  it("messages replay --since T --state delivered re-delivers each matching one once, in order; a dry run only counts", async () => {
    const { gateway, home } = await fixture.setUp();
    await fixture.run(home);
    const early = await hook(home, '{"n":0}');
    await waitUntil("the early hook at the gateway", () => gateway.received.length === 1);
    await waitUntil("the early hook kept", async () => (await delivered(home)).length === 1);
    const kept = await delivered(home);
    // Since just after the early hook was received: only the three after it match.
    const since = new Date(kept[0]!.received_at + 1).toISOString();
    const ids: number[] = [];
    for (let n = 1; n <= 3; n++) ids.push(await hook(home, JSON.stringify({ n })));
    await waitUntil("the three hooks at the gateway", () => gateway.received.length === 4);
    await waitUntil("all four kept as delivered", async () => (await delivered(home)).length === 4);
    expect((await delivered(home)).every((m) => m.received_at >= kept[0]!.received_at + 1 || m.id === early)).toBe(true);

    const dry = await runCli(["messages", "replay", "--since", since, "--state", "delivered", "--dry-run"], home.env);
    expect(dry.stderr).toBe("");
    expect(dry.stdout).toContain("dry run: 3 message(s) would be replayed, in order; nothing was replayed");
    expect(await settled(home)).toBe(true);
    expect(gateway.received.length).toBe(4);

    const replay = await runCli(["messages", "replay", "--since", since, "--state", "delivered", "--json"], home.env);
    expect(replay.stderr).toBe("");
    const answer = JSON.parse(replay.stdout) as { replayed: number; ids: { from: number; to: number }[]; skipped_live: number };
    expect(answer.replayed).toBe(3);
    expect(answer.ids.map((pair) => pair.from)).toEqual(ids);
    const newIds = answer.ids.map((pair) => pair.to);
    expect(newIds.every((id, i) => id > ids[2]! && (i === 0 || id > newIds[i - 1]!))).toBe(true);

    await waitUntil("the three replays at the gateway", () => gateway.received.length === 7);
    await waitUntil("nothing waiting at the relay", () => settled(home));
    expect(gateway.received.slice(4).map((h) => h.body.toString())).toEqual(['{"n":1}', '{"n":2}', '{"n":3}']);
    // Each once: the gateway got each replay under its own new id, and nothing more.
    expect(gateway.received.slice(4).map((h) => h.idempotencyKey)).toEqual(newIds.map((id) => `clawrelay:${home.settings.agent_id}:${id}`));
    expect(gateway.received.length).toBe(7);
  });
});
