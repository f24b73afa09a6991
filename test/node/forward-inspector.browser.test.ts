// The inspector page's forward targets in headless Chromium (as inspector.browser.test.ts, skipped where no
// Chromium is installed): the "Forward targets" list (source → target, the app's last answer, failing
// since) and forwarded deliveries with their method and URL, while the gateway's last answer stays the
// gateway's. The page is served by the real inspector routes with a status and feed made here.
import { describe, expect, it } from "vitest";
import { CHROMIUM, useChromium } from "../support/node/chromium.ts";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import type { Identity } from "../../local-agent/identity.ts";
import { DeliveryFeed } from "../../local-agent/inspector/delivery-feed.ts";
import { serveInspector } from "./inspector-server.ts";


const browser = useChromium("forward inspector browser test");

function agentStatus(now: number): AgentStatus {
  return {
    agent_id: "ag_0123456789ab",
    runs_in: "standalone",
    relay: { url: "http://127.0.0.1:9", state: "connected", since: now - 60_000, backlog: 0, error: null },
    gateway: { port: 18789, hooks_path: "/hooks", config_path: null, auth_source: "none", config_error: null, problem: null },
    delivery: {
      counted_since: now, delivered: 2, rejected: 0, last_delivery: null, paused: null, recent_rejections: [], last_error: null,
      queued: 1, in_flight: 1, concurrency: 4, gateway_down: null, lanes: [], cursor: 2,
      forwards: [
        { source: "stripe", target: "http://127.0.0.1:3000/webhooks", last_answer: { status: 200, detail: "ok", at: now - 120_000, id: 2 }, failing_since: now - 90_000, last_error: "connection refused by 127.0.0.1:3000 (is the app running?)", delivered: 1, rejected: 0, next_try_at: null, head_failures: 0 },
        { source: "github", target: "http://127.0.0.1:4000/gh", last_answer: { status: 204, detail: "", at: now - 5000, id: 1 }, failing_since: null, last_error: null, delivered: 1, rejected: 0, next_try_at: null, head_failures: 0 },
      ],
    },
    delegation: { waiting: 0, late_results_dropped: 0 },
    hub: { mode: null, watch: { state: "off", url: "", since: now, last_update_at: null, updates: 0, error: null }, credentials: null },
    api_port: 0,
    started_at: now - 60_000,
  };
}

describe.skipIf(!CHROMIUM)("forward targets in the inspector page", () => {
  it("lists the forward targets and shows forwarded deliveries with their method and URL", async () => {
    const now = Date.now();
    const feed = new DeliveryFeed();
    const base = { sender: null, latency_ms: 12, detail: null };
    feed.record({ ...base, outcome: "delivered", id: 1, subpath: "agentgram_inbox/agent", status: 202, at: now - 3000, attempts: 1 });
    feed.record({ ...base, outcome: "delivered", id: 2, subpath: "/events?x=1", sender: "source:stripe", status: 200, at: now - 2000, attempts: 1, method: "PUT", target: "http://127.0.0.1:3000/webhooks/events?x=1" });
    feed.record({ ...base, outcome: "retrying", id: 3, subpath: "stripe", sender: "source:stripe", status: 0, at: now - 1000, attempts: 1, detail: "connection refused by 127.0.0.1:3000 (is the app running?)", method: "POST", target: "http://127.0.0.1:3000/webhooks" });
    const access = { relayUrl: "http://127.0.0.1:9", agentId: "ag_0123456789ab", identity: {} as Identity };
    const api = await serveInspector({ status: () => agentStatus(now), feed, access });
    const page = await browser().newPage({ viewport: { width: 1360, height: 900 } });
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    try {
      await page.goto(`http://127.0.0.1:${api.port}/`);
      const stripe = page.locator('#forwards tbody tr[data-source="stripe"]');
      await stripe.waitFor({ timeout: 15_000 });
      expect(await page.locator("#forwards").isVisible()).toBe(true);
      expect(await stripe.getAttribute("class")).toBe("failing");
      const cells = await stripe.locator("td").allTextContents();
      expect(cells.slice(0, 4)).toEqual(["stripe", "http://127.0.0.1:3000/webhooks", "200 2m ago", "2m ago"]);
      expect(cells[6]).toContain("connection refused");
      expect(await page.locator('#forwards tbody tr[data-source="github"] td').nth(3).textContent()).toBe("—");

      const forwarded = page.locator('#deliveries tbody tr[data-id="2"]');
      expect(await forwarded.getAttribute("data-target")).toBe("http://127.0.0.1:3000/webhooks/events?x=1");
      expect(await forwarded.locator("td").nth(2).textContent()).toBe("PUT http://127.0.0.1:3000/webhooks/events?x=1");
      expect(await page.locator('#deliveries tbody tr[data-id="1"] td').nth(2).textContent()).toBe("agentgram_inbox/agent");
      // The newest events are the app's: the gateway's last answer is still its own 202.
      expect(await page.locator("#gateway-last").textContent()).toMatch(/^202 /);
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
      await api.close();
    }
  }, 60_000);
});
