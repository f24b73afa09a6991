// Issue 32, item 7: anyone who knows an agent id kept its agent offline by holding the inbox's 16 slots for
// unauthenticated sockets and reopening each as the relay closed it; the agent's every reconnect met 429.
// Here the real agent (its upgrade signed: protocol/upgrade-proof.ts) starts while 32 anonymous clients
// hold and reopen those slots against the bundled relay in Miniflare, and connects without a refusal.
import { afterEach, describe, expect, it } from "vitest";
import { anonymousFlood } from "../support/node/anonymous-flood.ts";
import type { AnonymousFlood } from "../support/node/anonymous-flood.ts";
import { recordingLogger, relayFixture, waitUntil } from "../support/node/stack.ts";

const fixture = relayFixture();
let flood: AnonymousFlood | null = null;
afterEach(async () => {
  await flood?.stop();
  flood = null;
});

describe("anonymous sockets filling the cap", () => {
  it("regression: the owner's agent connects while 32 anonymous clients reopen the cap's slots, never refused 429 (it was refused for the whole flood)", async () => {
    const { home } = await fixture.setUp();
    flood = anonymousFlood(fixture.relay().url, home.settings.agent_id, 32);
    // The cap is full: anonymous upgrades are being refused before the agent starts.
    await waitUntil("the relay to refuse an anonymous upgrade", () => flood!.refused > 0);
    const logger = recordingLogger();
    await fixture.run(home, logger);
    await waitUntil("the agent's relay connected", () => logger.lines.some((line) => line.event === "relay connected"));
    expect(logger.lines.filter((line) => line.event === "relay disconnected")).toEqual([]);
    // Still full while the agent came in: more anonymous upgrades were refused after it.
    const refusedBefore = flood.refused;
    await waitUntil("another anonymous refusal", () => flood!.refused > refusedBefore);
    expect(logger.lines.filter((line) => line.event === "relay disconnected")).toEqual([]);
  });
});
