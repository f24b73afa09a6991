// The inspector page in a real browser: headless Chromium (Debian's `chromium`, driven by playwright-core)
// loads the page a real local agent serves, against the real relay and a stand-in gateway: a message
// appears live and its body opens, one the gateway refuses lands on the dead shelf, is replayed from
// the page and reaches the gateway; a GitHub webhook source's push shows its headers. Writes
// test-output/inspector.png. Skipped, saying so, only where no
// Chromium is installed (.ci/run installs it).
import { createHmac } from "node:crypto";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CHROMIUM, useChromium } from "../support/node/chromium.ts";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const SCREENSHOT = join(import.meta.dirname, "../../test-output/inspector.png");

const fixture = relayFixture();
const browser = useChromium("inspector browser test");

describe.skipIf(!CHROMIUM)("the inspector page in headless Chromium", () => {
  it("shows a delivery live, opens its body, replays a dead message and sees it delivered", async () => {
    const gateway = await startStandinGateway({ mappings: ["agentgram_inbox/agent", "agentgram_inbox/wake", "sources/github"] });
    const home = await makeAgentHome(fixture.relay(), gateway, "Inspected");
    fixture.cleanups.push(() => gateway.close(), () => home.cleanup());
    gateway.refuse = (hook) => (hook.body.toString().includes('"refuse me"') ? 400 : null);
    const agent = await fixture.run(home);
    const page = await browser().newPage({ viewport: { width: 1360, height: 900 } });
    const consoleErrors: string[] = [];
    page.on("console", (m) => {
      if (m.type() === "error" || m.type() === "warning") consoleErrors.push(m.text());
    });
    await page.goto(`http://127.0.0.1:${agent.apiPort}/`);
    await page.locator("#relay-state", { hasText: "connected" }).waitFor({ timeout: 15_000 });
    await page.locator("#live", { hasText: "live" }).waitFor();

    const hello = JSON.stringify({ message: "hello through the inspector", name: "ag_0123456789ab", sessionKey: "agentline:ag_0123456789ab" });
    const sent = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", hello);
    const row = page.locator(`#deliveries tbody tr[data-id="${String(sent.body.id)}"]`);
    await row.waitFor({ timeout: 15_000 }).catch(async (err: Error) => {
      await page.screenshot({ path: join(import.meta.dirname, "../../test-output/inspector-fail.png"), fullPage: true });
      throw new Error(`${err.message}\ngateway got ${gateway.received.length}; status ${JSON.stringify(agent.status().delivery)}; console ${consoleErrors.join(" | ")}`);
    });
    expect(await row.getAttribute("data-outcome")).toBe("delivered");
    expect(await row.textContent()).toContain("ag_0123456789ab");
    await row.click();
    await page.locator("#detail-body", { hasText: "hello through the inspector" }).waitFor();
    expect(await page.locator("#detail-body").textContent()).toContain('"message": "hello through the inspector"');

    // Esc closes the panel (it lies over the relay's list, where the next click goes).
    await page.keyboard.press("Escape");
    expect(await page.locator("#detail").isHidden()).toBe(true);

    const refused = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", JSON.stringify({ message: "refuse me", sessionKey: "agentline:ag_0123456789ab" }));
    const deadRow = page.locator(`#queue tbody tr[data-id="${String(refused.body.id)}"][data-state="dead"]`);
    await deadRow.waitFor({ timeout: 15_000 });
    expect(await page.locator(`#deliveries tbody tr[data-id="${String(refused.body.id)}"]`).getAttribute("data-outcome")).toBe("rejected");
    await deadRow.click();
    await page.locator("#detail-meta", { hasText: "dead" }).waitFor();
    expect(await page.locator("#detail-meta").textContent()).toContain("400");

    gateway.refuse = undefined;
    const before = gateway.received.length;
    const clicked = Date.now();
    await page.locator("#replay").click();
    await waitUntil("the replayed message at the gateway", () => gateway.received.length > before, 15_000);
    const reached = gateway.received.at(-1)!;
    const replayMs = reached.at - clicked;
    process.stderr.write(`\n[inspector browser test] replay click → gateway: ${replayMs} ms\n`);
    expect(reached.body.toString()).toContain("refuse me");
    const result = await page.locator("#action-result", { hasText: "queued again" }).textContent();
    const newId = Number(/message (\d+)/.exec(result ?? "")?.[1]);
    await page.locator(`#deliveries tbody tr[data-id="${newId}"][data-outcome="delivered"]`).waitFor({ timeout: 15_000 });
    await page.locator(`#queue tbody tr[data-id="${String(refused.body.id)}"]`).waitFor({ state: "detached", timeout: 15_000 });
    await page.locator("#n-delivered", { hasText: "2" }).waitFor();

    // A webhook source's event: its headers of interest show beside the body.
    const added = await runCli(["sources", "add", "github", "--kind", "github", "--json"], home.env);
    const { post_url: url, secret } = JSON.parse(added.stdout) as { post_url: string; secret: string };
    const push = JSON.stringify({ ref: "refs/heads/main", repository: { full_name: "octo/inspector" }, head_commit: { message: "Show the dead shelf in the inspector" } });
    const signature = `sha256=${createHmac("sha256", secret).update(push).digest("hex")}`;
    const posted = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-github-event": "push", "x-github-delivery": "9b2c6e5e-inspector", "x-hub-signature-256": signature }, body: push });
    const { id: pushId } = (await posted.json()) as { id: number };
    await page.locator("#detail-close").click();
    await page.locator(`#deliveries tbody tr[data-id="${pushId}"][data-outcome="delivered"]`).click();
    await page.locator("#detail-headers", { hasText: "x-github-event" }).waitFor();
    expect(await page.locator("#detail-headers").textContent()).toContain("9b2c6e5e-inspector");
    expect(await page.locator("#detail-meta").textContent()).toContain("source:github");
    await page.locator("#detail-body", { hasText: "Show the dead shelf" }).waitFor();
    await page.locator("#chart-scale", { hasText: "3 delivered in the last hour" }).waitFor();
    await page.locator("#gateway-last", { hasText: "200" }).waitFor();
    mkdirSync(join(SCREENSHOT, ".."), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(consoleErrors).toEqual([]);
    await page.close();
  }, 90_000);
});
