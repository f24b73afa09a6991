// The inspector's lanes in headless Chromium (as inspector.browser.test.ts, skipped where no Chromium is
// installed), issue 30: the Lanes panel merges what the agent holds of each lane (waiting, posting, since,
// the head's next try and last error) with the relay's counts (queued, sent), the oldest first; each message
// of the relay's list shows its lane, and so does its panel. A lane's name is sender-chosen (a hook body's
// sessionKey): one made of markup and escape sequences is shown as text, never run. With an agent and a
// relay from before lanes the panel stays hidden. The page is served by the real inspector routes, with a
// status made here and a stand-in relay for the queue.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { CHROMIUM, useChromium } from "../support/node/chromium.ts";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import type { AgentLane } from "../../local-agent/delivery/delivery-status.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import { DeliveryFeed } from "../../local-agent/inspector/delivery-feed.ts";
import type { LaneSummary, QueueItem, QueueSummary } from "../../protocol/index.ts";
import { agentStatusFixture, serveInspector } from "./inspector-server.ts";

const browser = useChromium("inspector lanes browser test");
const HOSTILE = '<img src=x onerror="window.__pwned=1">\u001b[31m\u202eevil';
const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function item(id: number, lane: string | undefined, receivedAt: number): QueueItem {
  return {
    id, state: "queued", kind: "hook", subpath: "agentgram_inbox/agent", content_type: "application/json", size: 20, received_at: receivedAt, expires_at: receivedAt + 86_400_000,
    sender: null, msg_id: null, type: null, attempts: 0, reason: null, last_status: null, dead_at: null, replay_of: null, ...(lane !== undefined ? { lane } : {}),
  };
}

/** A relay that answers the queue listing (with `lanes` in its summary when given) and each message of it. */
async function standInRelay(items: QueueItem[], lanes: LaneSummary[] | undefined): Promise<string> {
  const summary: QueueSummary = { queued: items.length, sent: 0, dead: 0, oldest_waiting_at: items[0]?.received_at ?? null, ...(lanes ? { lanes } : {}) };
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    const one = items.find((m) => path.endsWith(`/queue/${m.id}`));
    const body = path.endsWith("/queue") ? { messages: items, has_more: false, next_after: items.at(-1)?.id ?? 0, summary } : one ? { message: one, body: "{}", encoding: "utf8", headers: null } : null;
    res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { error: { code: "not_found", message: "no such message" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

function agentStatus(now: number, relayUrl: string, lanes: AgentLane[] | undefined): AgentStatus {
  const status = agentStatusFixture(now, relayUrl, { delivered: 3, queued: 2, in_flight: 1, lanes: lanes ?? [], cursor: 3 });
  // An agent from before lanes reports no `lanes` at all.
  if (lanes === undefined) Reflect.deleteProperty(status.delivery, "lanes");
  return status;
}

async function openPage(now: number, items: QueueItem[], relayLanes: LaneSummary[] | undefined, agentLanes: AgentLane[] | undefined) {
  const relayUrl = await standInRelay(items, relayLanes);
  const identity = await newIdentity();
  const api = await serveInspector({ status: () => agentStatus(now, relayUrl, agentLanes), feed: new DeliveryFeed(), access: { relayUrl, agentId: identity.agentId, identity } });
  cleanups.push(() => api.close());
  const page = await browser().newPage({ viewport: { width: 1360, height: 900 } });
  cleanups.push(() => page.close());
  const pageErrors: string[] = [];
  page.on("pageerror", (err) => pageErrors.push(err.message));
  await page.goto(`http://127.0.0.1:${api.port}/`);
  return { page, pageErrors };
}

describe.skipIf(!CHROMIUM)("lanes in the inspector page", () => {
  it("shows which lanes wait (the agent's and the relay's view, the oldest first), each message's lane, and a hostile lane name as text", async () => {
    const now = Date.now();
    const items = [item(7, "source:stripe", now - 200_000), item(8, HOSTILE, now - 30_000), item(9, "agent:main:dm:ag_feedfacecafe", now - 10_000)];
    const relayLanes: LaneSummary[] = [
      { lane: "source:stripe", queued: 120, sent: 32, oldest_at: now - 200_000 },
      { lane: HOSTILE, queued: 1, sent: 0, oldest_at: now - 30_000 },
      { lane: "agent:main:dm:ag_feedfacecafe", queued: 1, sent: 0, oldest_at: now - 10_000 },
    ];
    const agentLanes: AgentLane[] = [
      { lane: "source:stripe", waiting: 31, posting: 1, since: now - 200_000, next_try_at: now + 3_600_000, last_error: "the app answered 503: maintenance" },
      { lane: "source:github", waiting: 0, posting: 1, since: now - 120_000, next_try_at: null, last_error: null },
    ];
    const { page, pageErrors } = await openPage(now, items, relayLanes, agentLanes);
    const stripe = page.locator('#lanes tbody tr[data-lane="source:stripe"]');
    await stripe.waitFor({ timeout: 15_000 });
    // The relay's lanes arrive with its listing, after the first state push.
    await page.locator("#lanes tbody tr").nth(3).waitFor();
    expect(await page.locator("#lanes").isVisible()).toBe(true);
    expect(await page.locator("#lanes tbody tr").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-lane")))).toEqual(["source:stripe", "source:github", HOSTILE, "agent:main:dm:ag_feedfacecafe"]);
    const cells = await stripe.locator("td").allTextContents();
    expect(cells[0]).toBe("source:stripe");
    expect(cells[1]).toBe("120 queued, 32 sent");
    expect(cells[2]).toBe("31 waiting, 1 posting");
    expect(cells[3]).toBe("3m ago");
    expect(cells[4]).toBe("in 60 min");
    expect(cells[5]).toBe("the app answered 503: maintenance");
    expect(await stripe.getAttribute("class")).toBe("failing");
    expect(await page.locator('#lanes tbody tr[data-lane="source:github"] td').allTextContents()).toEqual(["source:github", "", "1 posting", "2m ago", "", ""]);

    // Each message of the relay's list with its lane; the hostile one as its text, markup not parsed.
    await page.locator('#queue tbody tr[data-id="8"]').waitFor();
    expect(await page.locator('#queue tbody tr[data-id="7"] td').nth(3).textContent()).toBe("source:stripe");
    const hostileCell = page.locator('#queue tbody tr[data-id="8"] td').nth(3);
    expect(await hostileCell.textContent()).toBe(HOSTILE);
    expect(await hostileCell.getAttribute("title")).toBe(HOSTILE);
    expect(await page.locator('#lanes tbody tr td:first-child', { hasText: "<img" }).textContent()).toBe(HOSTILE);
    expect(await page.locator("#lanes img, #queue img").count()).toBe(0);
    expect(await page.evaluate("window.__pwned")).toBeUndefined();

    // The message's panel names its lane.
    await page.locator('#queue tbody tr[data-id="8"]').click();
    await page.locator("#detail-meta dt", { hasText: /^lane$/ }).waitFor();
    expect(await page.locator("#detail-meta dt", { hasText: /^lane$/ }).locator("xpath=following-sibling::dd[1]").textContent()).toBe(HOSTILE);
    expect(await page.locator("#detail img").count()).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 60_000);

  it("stays hidden with an agent and a relay from before lanes, and their messages show no lane", async () => {
    const now = Date.now();
    const { page, pageErrors } = await openPage(now, [item(7, undefined, now - 5000)], undefined, undefined);
    await page.locator('#queue tbody tr[data-id="7"]').waitFor({ timeout: 15_000 });
    expect(await page.locator("#lanes").isVisible()).toBe(false);
    expect(await page.locator('#queue tbody tr[data-id="7"] td').nth(3).textContent()).toBe("—");
    await page.locator('#queue tbody tr[data-id="7"]').click();
    await page.locator("#detail-meta dt", { hasText: /^kind$/ }).waitFor();
    expect(await page.locator("#detail-meta dt", { hasText: /^lane$/ }).count()).toBe(0);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});
