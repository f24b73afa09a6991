// The inspector page during a gateway outage in headless Chromium (as inspector.browser.test.ts, skipped
// where no Chromium is installed), after issue 32 (item 4): a row froze at "attempts 5" while the status
// counted 127 probes, "gateway down" never appeared, a forwarded URL was cut before its path, and the
// detail panel still said "dead" after Replay. Now the waiting row's attempts follow the status's probes,
// a pill says the gateway is down, a forwarded URL is shown whole, the panel follows the replayed message
// to its new id, and a credential header is shown redacted. The real inspector routes, a status and feed
// made here, and a stand-in relay for the queue.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { CHROMIUM, useChromium } from "../support/node/chromium.ts";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import { DeliveryFeed } from "../../local-agent/inspector/delivery-feed.ts";
import type { QueueItem, QueueSummary } from "../../protocol/index.ts";
import { agentStatusFixture, serveInspector } from "./inspector-server.ts";

const browser = useChromium("inspector outage browser test");

const VERY_LONG_URL = `http://127.0.0.1:3000/webhooks/${"segment/".repeat(30)}end?token_hint=tail-of-the-query`;
const LONG_URL = "http://shop-backend.internal.localhost.example:3000/webhooks/stripe/events/v2?account=acct_1234567890&mode=live";

function item(id: number, state: QueueItem["state"], more: Partial<QueueItem> = {}): QueueItem {
  const at = Date.now() - 90_000;
  return { id, state, kind: "hook", subpath: "agentgram_inbox/agent", content_type: "application/json", size: 20, received_at: at, expires_at: at + 86_400_000, sender: null, msg_id: null, type: null, attempts: 0, reason: null, last_status: null, dead_at: null, replay_of: null, ...more };
}

/** A relay holding dead message 5 (a forwarded source event with credentials) until it is replayed as 6. */
async function standInRelay(): Promise<{ url: string; close: () => void }> {
  let replayed = false;
  const dead = item(5, "dead", { subpath: "sources/shop", sender: "source:shop", reason: "the app refused this event with 400: bad", last_status: 400 });
  const request = { method: "POST", tail: "/orders?x=1", headers: [["authorization", "Bearer sk_live_secret"], ["x-shop-topic", "orders/create"]] };
  const summary = (): QueueSummary => ({ queued: replayed ? 1 : 0, sent: 0, dead: replayed ? 0 : 1, oldest_waiting_at: null });
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    let body: unknown = null;
    if (path.endsWith("/queue")) body = { messages: replayed ? [item(6, "queued", { replay_of: 5 })] : [dead], has_more: false, next_after: 6, summary: summary() };
    else if (path.endsWith("/queue/5") && !replayed) body = { message: dead, body: '{"order":1}', encoding: "utf8", headers: { cookie: "session=abc", "x-shop-topic": "orders/create" }, request, forward: "http://127.0.0.1:3000/webhooks" };
    else if (path.endsWith("/queue/5/replay") && req.method === "POST" && !replayed) {
      replayed = true;
      body = { replayed: 5, id: 6, state: "queued" };
    } else if (path.endsWith("/queue/6") && replayed) body = { message: item(6, "queued", { replay_of: 5, subpath: "sources/shop" }), body: '{"order":1}', encoding: "utf8", headers: null, request, forward: "http://127.0.0.1:3000/webhooks" };
    res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { error: { code: "message_not_found", message: "no such message" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

function agentStatus(now: number, relayUrl: string, probes: number): AgentStatus {
  return agentStatusFixture(now, relayUrl, {
    queued: 1, in_flight: 1, cursor: 4,
    gateway_down: { since: now - 120_000, probes, reason: "gateway unreachable: connect ECONNREFUSED 127.0.0.1:18789" },
  });
}

describe.skipIf(!CHROMIUM)("the inspector during a gateway outage", () => {
  it("shows the gateway down, a waiting row's attempts follow the probes, a forwarded URL whole, and the panel follows a Replay", async () => {
    const now = Date.now();
    let probes = 120;
    const feed = new DeliveryFeed();
    const reason = "gateway unreachable: connect ECONNREFUSED 127.0.0.1:18789";
    for (let attempt = 1; attempt <= 5; attempt++) feed.record({ outcome: "retrying", id: 40, subpath: "agentgram_inbox/agent", sender: "ag_feedfacecafe", status: 0, at: now - 130_000 + attempt * 1000, latency_ms: 10, attempts: attempt, detail: reason });
    feed.record({ outcome: "delivered", id: 2, subpath: "/t", sender: "source:shop", status: 200, at: now - 210_000, latency_ms: 12, attempts: 1, detail: null, method: "POST", target: VERY_LONG_URL });
    feed.record({ outcome: "delivered", id: 3, subpath: "/orders?x=1", sender: "source:shop", status: 200, at: now - 200_000, latency_ms: 12, attempts: 1, detail: null, method: "PUT", target: LONG_URL });
    const relay = await standInRelay();
    const identity = await newIdentity();
    const api = await serveInspector({ status: () => agentStatus(now, relay.url, probes), feed, access: { relayUrl: relay.url, agentId: identity.agentId, identity } });
    const page = await browser().newPage({ viewport: { width: 1360, height: 900 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    try {
      await page.goto(`http://127.0.0.1:${api.port}/`);
      const waiting = page.locator('#deliveries tbody tr[data-id="40"]');
      await waiting.waitFor({ timeout: 15_000 });
      await page.locator("#gateway-down", { hasText: "probed 120 times" }).waitFor({ timeout: 15_000 });
      expect(await page.locator("#gateway-down").isVisible()).toBe(true);
      expect(await page.locator("#gateway-down").textContent()).toMatch(/^gateway down since 2m ago · probed 120 times$/);
      expect(await waiting.locator("td.attempts").textContent()).toBe("5 + 120 probes");
      // The status counts on; the row follows at the next state push, not frozen at 5.
      probes = 127;
      await waiting.locator("td.attempts", { hasText: "5 + 127 probes" }).waitFor({ timeout: 15_000 });
      await page.locator("#gateway-down", { hasText: "probed 127 times" }).waitFor();

      // The forwarded URL whole: origin, path and query in the cell and its tooltip.
      const forwarded = page.locator('#deliveries tbody tr[data-id="3"] td').nth(2);
      expect(await forwarded.textContent()).toBe(`PUT ${LONG_URL}`);
      expect(await forwarded.getAttribute("title")).toBe(`PUT ${LONG_URL}`);
      expect((await forwarded.boundingBox())!.width).toBeGreaterThan(150);
      // Past 160 characters: cut in its middle, the origin and the query's end kept, the whole in the tooltip.
      const cut = page.locator('#deliveries tbody tr[data-id="2"] td').nth(2);
      const cutText = (await cut.textContent()) ?? "";
      expect(cutText).toMatch(/^POST http:\/\/127\.0\.0\.1:3000\/webhooks\/segment.*….*end\?token_hint=tail-of-the-query$/);
      expect(await cut.getAttribute("title")).toBe(`POST ${VERY_LONG_URL}`);

      // The dead forwarded message: its whole URL, its credentials redacted; Replay moves the panel to the new id.
      await page.locator('#queue tbody tr[data-id="5"]').click();
      await page.locator("#detail-meta", { hasText: "dead" }).waitFor({ timeout: 15_000 });
      expect(await page.locator("#detail-meta").textContent()).toContain("POST http://127.0.0.1:3000/webhooks/orders?x=1");
      const headers = await page.locator("#detail-headers").textContent();
      expect(headers).toContain("[redacted]");
      expect(headers).not.toContain("session=abc");
      expect(headers).toContain("orders/create");
      await page.locator("#replay").click();
      await page.locator("#detail-id", { hasText: "6" }).waitFor({ timeout: 15_000 });
      await page.locator("#detail-meta dd", { hasText: "queued" }).waitFor({ timeout: 15_000 });
      expect(await page.locator("#detail-meta").textContent()).not.toContain("dead");
      expect(await page.locator("#detail-meta").textContent()).toContain("replay of5");
      expect(await page.locator("#action-result").textContent()).toContain("queued again as message 6");
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
      await api.close();
      relay.close();
    }
  }, 60_000);
});
