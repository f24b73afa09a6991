// run.json tells `clawrelay status` where the running agent is: it is removed on a clean stop, and a
// replaced agent must not remove the one written by the agent that replaced it.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { relayFixture, waitUntil } from "../support/node/stack.ts";

const fixture = relayFixture();

describe("run.json", () => {
  it("regression: a replaced agent leaves the run.json of the agent that replaced it; a clean stop removes its own", async () => {
    const { home } = await fixture.setUp();
    const runDir = home.env.CLAWRELAY_HOME;
    const runFile = join(runDir, "run.json");
    const start = () => startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir });
    const first = await start();
    await waitUntil("the first agent connected", () => first.status().relay.state === "connected");
    const second = await start();
    fixture.cleanups.push(() => second.close(), () => first.close());
    await first.replaced;
    await first.close();
    expect(existsSync(runFile)).toBe(true);
    expect((JSON.parse(readFileSync(runFile, "utf8")) as { api_port: number }).api_port).toBe(second.apiPort);
    await second.close();
    expect(existsSync(runFile)).toBe(false);
  });
});
