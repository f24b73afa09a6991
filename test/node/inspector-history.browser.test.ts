// The inspector's History in headless Chromium (as inspector.browser.test.ts, skipped where no Chromium is
// installed): the page the real agent serves lists what the real relay kept after delivery, a search by a
// word in a body narrows it to that message with its excerpt shown as text (markup in a body stays text),
// the state filter narrows it, and a row opens the message's detail from the relay's kept copy.
import { describe, expect, it } from "vitest";
import { CHROMIUM, useChromium } from "../support/node/chromium.ts";
import { ownerCall, postHook, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";

const fixture = relayFixture();
const browser = useChromium("inspector history browser test");
const AGENT = "agentgram_inbox/agent";

async function keptCount(home: AgentHome): Promise<number> {
  const answer = await ownerCall(fixture.relay().url, home, "GET", "/history?state=delivered&limit=200");
  return (answer.body as { messages?: unknown[] }).messages?.length ?? 0;
}

describe.skipIf(!CHROMIUM)("the inspector's History in headless Chromium", () => {
  it("lists kept messages, finds one by a word in its body with its excerpt as text, filters by state and opens the detail", async () => {
    const { gateway, home } = await fixture.setUp();
    const agent = await fixture.run(home);
    const bodies = ['{"message":"the heron lands"}', '{"message":"a Pelican dives <img src=x onerror=alert(1)>"}', '{"message":"the gull waits"}'];
    const ids: number[] = [];
    for (const body of bodies) ids.push((await postHook(fixture.relay().url, home, AGENT, body)).body.id as number);
    await waitUntil("the three hooks at the gateway", () => gateway.received.length === 3);
    await waitUntil("the three kept as delivered", async () => (await keptCount(home)) === 3);

    const page = await browser().newPage({ viewport: { width: 1360, height: 900 } });
    await page.goto(`http://127.0.0.1:${agent.apiPort}/`);
    for (const id of ids) await page.locator(`#history tbody tr[data-id="${id}"][data-state="delivered"]`).waitFor({ timeout: 15_000 });

    await page.locator("#history-search").fill("pelican");
    await page.locator("#history-go").click();
    await page.locator(`#history tbody tr[data-id="${ids[0]}"]`).waitFor({ state: "detached" });
    expect(await page.locator("#history tbody tr").count()).toBe(1);
    const match = page.locator(`#history tbody tr[data-id="${ids[1]}"] td.excerpt`);
    expect(await match.textContent()).toContain("Pelican dives <img");
    // The body's markup is text on the page, never an element.
    expect(await page.locator("#history img").count()).toBe(0);

    await page.locator(`#history tbody tr[data-id="${ids[1]}"]`).click();
    await page.locator("#detail-body", { hasText: "Pelican dives" }).waitFor();
    expect(await page.locator("#detail-meta").textContent()).toContain("delivered");
    await page.keyboard.press("Escape");

    await page.locator("#history-search").fill("");
    await page.locator("#history-state").selectOption("dead");
    await page.locator("#history .empty", { hasText: "Nothing kept matches." }).waitFor();
    expect(await page.locator("#history tbody tr").count()).toBe(0);
    await page.close();
  });
});
