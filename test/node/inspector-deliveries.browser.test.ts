// The inspector's Deliveries list and message panel in headless Chromium (as inspector.browser.test.ts,
// skipped where no Chromium is installed), after issue 24: nine retries of one message during an outage
// were nine rows with the whole reason each, the page 3,000 px tall, the message opened at the page's
// bottom and a `sent` message counted as queued. Now: one row per message with its attempts and the
// reason on one line (all of it in the tooltip and the panel), changed in place as its events arrive;
// the panel opens in the window beside the row clicked; the relay's counts shown state by state. The
// page is served by the real inspector routes, with a feed made here and a stand-in relay for the queue.
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { describe, expect, it } from "vitest";
import { CHROMIUM, useChromium } from "../support/node/chromium.ts";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import { DeliveryFeed } from "../../local-agent/inspector/delivery-feed.ts";
import type { DeliveryEvent } from "../../local-agent/inspector/delivery-feed.ts";
import type { QueueItem, QueueSummary } from "../../protocol/index.ts";
import { agentStatusFixture, serveInspector } from "./inspector-server.ts";

const browser = useChromium("inspector deliveries browser test");

const REASON = `gateway unreachable: connect ECONNREFUSED 127.0.0.1:18789 — is OpenClaw running? ${"The gateway did not answer; the message waits and is posted again with backoff. ".repeat(4)}\nsecond line of the reason`;
const SUMMARY: QueueSummary = { queued: 2, sent: 1, dead: 1, oldest_waiting_at: Date.now() - 90_000 };

function item(id: number, state: QueueItem["state"], reason: string | null = null): QueueItem {
  const at = Date.now() - 90_000;
  return { id, state, kind: "hook", subpath: "agentgram_inbox/agent", content_type: "application/json", size: 20, received_at: at, expires_at: at + 86_400_000, sender: null, msg_id: null, type: null, attempts: 0, reason, last_status: null, dead_at: null, replay_of: null };
}

/** A relay that answers the inbox's queue listing and message 40, signatures unchecked (the relay's own tests check them). */
async function standInRelay(): Promise<{ url: string; close: () => void }> {
  const listing = { messages: [item(5, "dead", "the gateway refused it: 400 bad request"), item(40, "sent"), item(41, "queued"), item(42, "queued")], has_more: false, next_after: 42, summary: SUMMARY };
  const server = createServer((req, res) => {
    const path = (req.url ?? "").split("?")[0] ?? "";
    const body = path.endsWith("/queue") ? listing : path.endsWith("/queue/40") ? { message: item(40, "sent"), body: '{"message":"held up by the outage"}', encoding: "utf8", headers: null } : null;
    res.writeHead(body ? 200 : 404, { "content-type": "application/json" });
    res.end(JSON.stringify(body ?? { error: { code: "not_found", message: "no such message" } }));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => server.close() };
}

function agentStatus(now: number, relayUrl: string): AgentStatus {
  return agentStatusFixture(now, relayUrl, { delivered: 30, queued: 1, cursor: 42 });
}

describe.skipIf(!CHROMIUM)("the inspector's deliveries, one row per message", () => {
  it("groups nine retries into one row with its attempts and a one-line reason, updates it in place, opens the message in view and counts as the relay does", async () => {
    const now = Date.now();
    const feed = new DeliveryFeed();
    const event = (id: number, at: number, more: Partial<DeliveryEvent> = {}): DeliveryEvent => ({ outcome: "delivered", id, subpath: "agentgram_inbox/agent", sender: "ag_feedfacecafe", status: 202, at, latency_ms: 15, attempts: 1, detail: null, ...more });
    for (let id = 1; id <= 30; id++) feed.record(event(id, now - 600_000 + id * 1000));
    for (let attempt = 1; attempt <= 9; attempt++) feed.record(event(40, now - 90_000 + attempt * 8000, { outcome: "retrying", status: 0, attempts: attempt, detail: REASON }));
    const relay = await standInRelay();
    const identity = await newIdentity();
    const api = await serveInspector({ status: () => agentStatus(now, relay.url), feed, access: { relayUrl: relay.url, agentId: identity.agentId, identity } });
    const page = await browser().newPage({ viewport: { width: 1280, height: 720 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    const inView = async (selector: string) => {
      const box = await page.locator(selector).boundingBox();
      expect(box, `${selector} has a box`).not.toBeNull();
      return box!.x >= 0 && box!.y >= 0 && box!.x + box!.width <= 1280 && box!.y + box!.height <= 720;
    };
    try {
      await page.goto(`http://127.0.0.1:${api.port}/`);
      const retried = page.locator('#deliveries tbody tr[data-id="40"]');
      await retried.waitFor({ timeout: 15_000 });
      expect(await page.locator("#deliveries tbody tr").count()).toBe(31);
      expect(await retried.count()).toBe(1);
      expect(await retried.getAttribute("data-outcome")).toBe("retrying");
      expect(await retried.getAttribute("data-attempts")).toBe("9");
      expect(await retried.locator("td.attempts").textContent()).toBe("9");
      const reason = retried.locator("td.reason");
      const shown = (await reason.textContent()) ?? "";
      expect(shown.startsWith("retrying: gateway unreachable: connect ECONNREFUSED")).toBe(true);
      expect(shown.length).toBeLessThanOrEqual("retrying: ".length + 80);
      expect(await reason.getAttribute("title")).toBe(`retrying: ${REASON}`);
      // The outcome, last on the row, is in sight without scrolling the list sideways.
      const cellBox = (await reason.boundingBox())!;
      const listBox = (await page.locator("#deliveries").boundingBox())!;
      expect(cellBox.x + Math.min(cellBox.width, 100)).toBeLessThanOrEqual(listBox.x + listBox.width);
      // One line: as tall as a delivered message's row.
      const tall = (await retried.boundingBox())!.height;
      expect(tall).toBeLessThanOrEqual((await page.locator('#deliveries tbody tr[data-id="1"]').boundingBox())!.height + 1);

      // The relay's own counts, one figure per state (a sent message is not "queued").
      await page.locator("#n-queued", { hasText: /^\d+$/ }).waitFor();
      expect(await page.locator("#n-queued").textContent()).toBe(String(SUMMARY.queued));
      expect(await page.locator("#n-sent").textContent()).toBe(String(SUMMARY.sent));
      expect(await page.locator("#n-dead").textContent()).toBe(String(SUMMARY.dead));

      // Opened where the user is looking: the panel in the window, the row clicked still in it, not under it.
      await retried.click();
      await page.locator("#detail-body", { hasText: "held up by the outage" }).waitFor();
      expect(await inView("#detail")).toBe(true);
      expect(await inView('#deliveries tbody tr[data-id="40"]')).toBe(true);
      const panel = (await page.locator("#detail").boundingBox())!;
      const row = (await page.locator('#deliveries tbody tr[data-id="40"] td').first().boundingBox())!;
      expect(row.x + row.width <= panel.x || row.x >= panel.x + panel.width).toBe(true);
      expect(await page.locator("#detail-meta").textContent()).toContain("second line of the reason");
      expect(await page.locator("#detail-meta").textContent()).toContain("9 attempts");

      // Deep in a page taller than the window, the same.
      expect(await page.evaluate<number>("document.documentElement.scrollHeight")).toBeGreaterThan(900);
      await page.keyboard.press("Escape");
      await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)");
      const oldest = page.locator('#deliveries tbody tr[data-id="1"]');
      expect(await inView('#deliveries tbody tr[data-id="1"]')).toBe(true);
      await oldest.click();
      await page.locator("#detail-id", { hasText: /^1$/ }).waitFor();
      expect(await inView("#detail")).toBe(true);
      expect(await inView('#deliveries tbody tr[data-id="1"]')).toBe(true);
      await page.keyboard.press("Escape");

      // Live: the tenth retry and the delivery change the same row, in the same place.
      await retried.evaluate((el) => el.setAttribute("data-mark", "the same element"));
      const place = await retried.evaluate((el) => [...(el.parentElement?.children ?? [])].indexOf(el));
      feed.record(event(40, Date.now(), { outcome: "retrying", status: 503, attempts: 10, detail: "the gateway answered 503" }));
      await page.locator('#deliveries tbody tr[data-id="40"][data-attempts="10"]').waitFor();
      feed.record(event(40, Date.now(), { attempts: 11 }));
      await page.locator('#deliveries tbody tr[data-id="40"][data-outcome="delivered"]').waitFor();
      expect(await retried.count()).toBe(1);
      expect(await retried.getAttribute("data-mark")).toBe("the same element");
      expect(await retried.getAttribute("data-attempts")).toBe("11");
      expect(await retried.locator("td.reason").textContent()).toBe("delivered");
      expect(await retried.evaluate((el) => [...(el.parentElement?.children ?? [])].indexOf(el))).toBe(place);
      expect(await page.locator("#deliveries tbody tr").count()).toBe(31);
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
      await api.close();
      relay.close();
    }
  }, 60_000);
});
