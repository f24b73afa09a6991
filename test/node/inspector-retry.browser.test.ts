// The inspector's "Retry now" in headless Chromium (as inspector.browser.test.ts, skipped where no
// Chromium is installed): shown while delivery is paused or messages wait to retry, hidden otherwise; a
// click reaches POST /inspector/api/retry with the page's token (the real routes refuse it without), the
// page shows what the answer said and asks the agent's status again. Served by the real inspector routes
// with a host made here whose retry() counts its calls; no relay (the queue's listing fails, as it may).
import { describe, expect, it } from "vitest";
import { CHROMIUM, useChromium } from "../support/node/chromium.ts";
import type { AgentStatus } from "../../local-agent/agent-status.ts";
import type { RetryNow } from "../../local-agent/delivery/delivery-status.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import { DeliveryFeed } from "../../local-agent/inspector/delivery-feed.ts";
import type { DeliveryEvent } from "../../local-agent/inspector/delivery-feed.ts";
import { agentStatusFixture, serveInspector } from "./inspector-server.ts";

const browser = useChromium("inspector retry browser test");

const PAUSE = "the gateway refused the hook token (401): fix hooks.token in openclaw.json";
const NO_RELAY = "http://127.0.0.1:9";

function agentStatus(now: number, delivery: Partial<AgentStatus["delivery"]>): AgentStatus {
  return agentStatusFixture(now, NO_RELAY, { delivered: 3, cursor: 3, ...delivery });
}

const event = (id: number, more: Partial<DeliveryEvent> = {}): DeliveryEvent => ({ outcome: "delivered", id, subpath: "agentgram_inbox/agent", sender: null, status: 202, at: Date.now(), latency_ms: 12, attempts: 1, detail: null, ...more });

/** The real inspector routes over a host whose status the test sets; counts the retries and the status asks. */
async function inspectorHost(delivery: Partial<AgentStatus["delivery"]>, answer: RetryNow & { relay_reconnect: boolean }) {
  const now = Date.now();
  const feed = new DeliveryFeed();
  for (let id = 1; id <= 3; id++) feed.record(event(id));
  const identity = await newIdentity();
  const calls = { retry: 0, state: 0 };
  const host = { delivery, onRetry: () => {} };
  const inspector = {
    status: () => agentStatus(now, host.delivery),
    feed,
    access: { relayUrl: NO_RELAY, agentId: identity.agentId, identity },
    retry: () => {
      calls.retry += 1;
      host.onRetry();
      return answer;
    },
  };
  const api = await serveInspector(inspector, (app) =>
    app.use("/inspector/api/state", async (c, next) => {
      if (c.req.method === "GET") calls.state += 1;
      await next();
    }),
  );
  return { host, feed, calls, url: `http://127.0.0.1:${api.port}/`, close: () => api.close() };
}

const NOTHING_WOKEN = { woken: 0, hold_cut_ms: 0, probe_now: false, paused: null, relay_reconnect: false };

describe.skipIf(!CHROMIUM)("the inspector's Retry now", () => {
  it("is shown while delivery is paused, reaches the agent's retry with the page's token, shows its answer and asks the status again", async () => {
    const agent = await inspectorHost({ paused: PAUSE, queued: 1, in_flight: 1 }, { woken: 1, hold_cut_ms: 0, probe_now: false, paused: PAUSE, relay_reconnect: false });
    // The fix took: the paused message went through, nothing waits any more.
    agent.host.onRetry = () => void (agent.host.delivery = { paused: null, queued: 0, in_flight: 0 });
    const page = await browser().newPage();
    const pageErrors: string[] = [];
    page.on("pageerror", (err) => pageErrors.push(err.message));
    try {
      await page.goto(agent.url);
      await page.locator("#last-error", { hasText: PAUSE }).waitFor({ timeout: 15_000 });
      const button = page.locator("#retry-now");
      expect(await button.isVisible()).toBe(true);
      expect(await button.textContent()).toBe("Retry now");
      expect(agent.calls.retry).toBe(0);

      const asked = agent.calls.state;
      await button.click();
      await page.locator("#retry-result", { hasText: "woke 1 waiting retry" }).waitFor({ timeout: 15_000 });
      expect(agent.calls.retry).toBe(1);
      expect(await page.locator("#retry-result").textContent()).toBe(`woke 1 waiting retry; paused (${PAUSE}): the pause ends when a post gets through`);
      // Asked again at once (a state push every 2 s would do it too, but not by the API): the pause is over.
      await expect.poll(() => agent.calls.state, { timeout: 15_000 }).toBeGreaterThan(asked);
      await button.waitFor({ state: "hidden", timeout: 15_000 });
      expect(await page.locator("#last-error").isVisible()).toBe(false);
      // What the answer said stays in sight after the button went.
      expect(await page.locator("#retry-result").isVisible()).toBe(true);

      // A message waiting to retry (started, its latest event a retry) brings the button back.
      agent.host.delivery = { queued: 1, in_flight: 1 };
      agent.feed.record(event(4, { outcome: "retrying", status: 0, detail: "gateway unreachable: connect ECONNREFUSED" }));
      await button.waitFor({ state: "visible", timeout: 15_000 });
      expect(pageErrors).toEqual([]);
    } finally {
      await page.close();
      await agent.close();
    }
  }, 60_000);

  it("is hidden while nothing is paused and no message waits to retry", async () => {
    const agent = await inspectorHost({ queued: 0, in_flight: 0 }, NOTHING_WOKEN);
    const page = await browser().newPage();
    try {
      await page.goto(agent.url);
      await page.locator('#deliveries tbody tr[data-id="3"]').waitFor({ timeout: 15_000 });
      expect(await page.locator("#agent-id").textContent()).toBe("ag_0123456789ab");
      expect(await page.locator("#retry-now").isVisible()).toBe(false);
      expect(await page.locator("#retry-line").isVisible()).toBe(false);
      // A row still saying "retrying" whose message no longer waits (dropped meanwhile: nothing in flight)
      // brings no button either. Counted before the row comes: the page may ask for the state before the
      // row is seen here (on a loaded machine it did, and no later ask came).
      const asked = agent.calls.state;
      agent.feed.record(event(5, { outcome: "retrying", status: 503, detail: "the gateway answered 503" }));
      await page.locator('#deliveries tbody tr[data-id="5"][data-outcome="retrying"]').waitFor({ timeout: 15_000 });
      await expect.poll(() => agent.calls.state, { timeout: 15_000 }).toBeGreaterThan(asked);
      expect(await page.locator("#retry-now").isVisible()).toBe(false);
      expect(agent.calls.retry).toBe(0);
    } finally {
      await page.close();
      await agent.close();
    }
  }, 60_000);
});
