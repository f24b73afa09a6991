// Setting aside on the real relay (the bundled Worker) with the real agent and a window of 8: a source's
// app refuses connections while 12 of its events arrive — more than the window — and then a message for
// the gateway. The agent sets the source's waiting events aside to the dead shelf (each with a reason that
// says what happened and how to replay it by hand), so the gateway's message is delivered while the app is
// down; `clawrelay status` shows how many are set aside. When the app comes up the agent replays them:
// every event reaches the app exactly once, in the original order, and the dead shelf ends empty. Then the
// source is out of set-aside mode: a later outage below the threshold sets nothing aside.
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { statusText } from "../../local-agent/cli/cli-status.ts";
import { inboxAccess } from "../../local-agent/relay/messages.ts";
import { addSource } from "../../local-agent/relay/sources.ts";
import { journalPath } from "../../local-agent/settings.ts";
import { postHook, queueItems, recordingLogger, relayFixture, waitUntil } from "../support/node/stack.ts";
import { startStandinApp } from "./forward-app.ts";

const fixture = relayFixture();
const WINDOW = 8;

describe("a down app's events set aside on the real relay", () => {
  it("lets the gateway's message through while the app is down; replays the set-aside events in order, once each, when it answers; then leaves set-aside mode", async () => {
    const { gateway, home } = await fixture.setUp("Shopkeeper");
    const relayUrl = fixture.relay().url;
    const shop = await startStandinApp();
    fixture.cleanups.push(() => shop.close());
    await shop.down();
    const logger = recordingLogger();
    const agent: AgentHandle = await startAgent({ settings: { ...home.settings, window: WINDOW }, env: home.env, logger, apiPort: 0, journalFile: journalPath(home.env.CLAWRELAY_HOME) });
    fixture.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    const source = await addSource(await inboxAccess(home.settings), { name: "shop", kind: "token", target: { forward: `${shop.url}/hooks`, allowPublic: false } });
    const post = async (n: number) => {
      const answer = await fetch(`${source.post_url}/orders?n=${n}`, { method: "POST", headers: { "content-type": "application/json" }, body: `{"n":${n}}` });
      expect(answer.status).toBe(200);
      return ((await answer.json()) as { id: number }).id;
    };
    const ids: number[] = [];
    for (let n = 1; n <= 12; n++) ids.push(await post(n));

    expect((await postHook(relayUrl, home, "agentgram_inbox/agent", '{"message":"while the app is down"}')).status).toBe(202);
    // Without setting aside, the 8 unfinished messages the relay allows are all the source's: this never comes.
    await waitUntil("the gateway's message delivered while the app is down", () => gateway.received.length === 1, 20_000);
    expect(gateway.received[0]!.body.toString()).toBe('{"message":"while the app is down"}');
    expect(shop.requests).toHaveLength(0);

    // Every event but the head (retrying in the agent) is on the dead shelf, saying why and how to get it back.
    await waitUntil("11 events set aside", () => agent.status().delivery.forwards[0]?.set_aside === 11);
    const dead = await queueItems(relayUrl, home, "dead");
    expect(dead.map((m) => m.id)).toEqual(ids.slice(1));
    for (const m of dead) {
      expect(m.reason).toMatch(new RegExp(`^set aside: the app at ${shop.url}/hooks has not taken an event since \\S+Z \\(connection refused by 127\\.0\\.0\\.1:${shop.port} \\(is the app running\\?\\)\\); \\d+ events of source "shop" would have held up every other message\\. The agent replays them, oldest first, when the app answers again; if the agent stops before that: clawrelay messages replay ${m.id}$`));
      expect(m.attempts).toBe(0);
    }
    const status = agent.status();
    const line = statusText({ ...status, relay_queue: { queued: 1, sent: 1, dead: 11, oldest_waiting_at: null }, relay_hub: null }, 1, Date.now());
    expect(line).toMatch(/forward   shop → .*refusing connections for \d+ s; delivered 0, rejected 0; set aside 11 \(on the dead shelf; the agent replays them when the app answers\)/);

    await shop.up();
    await waitUntil("all 12 events at the app", () => shop.requests.length === 12, 20_000);
    expect(shop.requests.map((r) => r.body.toString())).toEqual(Array.from({ length: 12 }, (_, i) => `{"n":${i + 1}}`));
    expect(shop.requests.map((r) => r.url)).toEqual(Array.from({ length: 12 }, (_, i) => `/hooks/orders?n=${i + 1}`));
    await waitUntil("the relay holding nothing, the source out of set-aside mode", async () => agent.status().delivery.forwards[0]?.set_aside === 0 && (await queueItems(relayUrl, home, "all")).length === 0);
    // The relay holds nothing: no event is left that could reach the app again.
    expect(shop.requests).toHaveLength(12);
    expect(agent.status().delivery.forwards[0]).toMatchObject({ delivered: 12, rejected: 0, set_aside: 0, failing_since: null });

    // A later outage with fewer events than 3/4 of the window: they wait in the agent, none on the shelf.
    await shop.down();
    const head = await post(13);
    for (let n = 14; n <= 15; n++) await post(n);
    // Each failed attempt decides whether to set aside: two of them, and none did.
    const failed = () => logger.lines.filter((l) => l.event === "app did not take a forwarded event" && l.fields.id === head).length;
    await waitUntil("two failed attempts at the app", () => failed() >= 2);
    expect(await queueItems(relayUrl, home, "dead")).toEqual([]);
    expect(agent.status().delivery.forwards[0]?.set_aside).toBe(0);
    await shop.up();
    await waitUntil("the three at the app", () => shop.requests.length === 15, 20_000);
    expect(shop.requests.slice(12).map((r) => r.body.toString())).toEqual(['{"n":13}', '{"n":14}', '{"n":15}']);
  });
});
