// `clawrelay retry` (local-agent/cli/cli-retry.ts → POST /clawrelay/retry → DeliveryLoop.retryNow), issue 24:
// after a fix nobody should wait out a config error's 60 s. The real CLI finds the agent by run.json, ends
// the wait at once and says what it woke; the inspector's route does the same with the page's token.
import { describe, expect, it } from "vitest";
import { startAgent } from "../../local-agent/agent.ts";
import { TOKEN_HEADER } from "../../local-agent/inspector/inspector-routes.ts";
import { silentLogger } from "../../local-agent/logger.ts";
import { journalPath } from "../../local-agent/settings.ts";
import { runCli } from "./cli-harness.ts";
import { postHook, relayFixture, waitUntil } from "../support/node/stack.ts";

const stack = relayFixture();
const AGENT = "agentgram_inbox/agent";

describe("clawrelay retry", () => {
  it("ends a 60 s config-error wait at once and prints what it woke", async () => {
    const { gateway, home } = await stack.setUp("Retrier");
    const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir: home.env.CLAWRELAY_HOME, journalFile: journalPath(home.env.CLAWRELAY_HOME) });
    stack.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    // One 401 (the gateway's token was rotated, and put back): the message waits 60 s for its next try.
    gateway.script({ status: 401 });
    expect((await postHook(stack.relay().url, home, AGENT, JSON.stringify({ message: "after the fix" }))).status).toBe(202);
    await waitUntil("paused on 401", () => agent.status().delivery.paused !== null);

    // The message's own next try is 60 s away, past the test's timeout: the retry is what delivers it.
    const result = await runCli(["retry"], home.env);
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("woke 1 waiting retry");
    expect(result.stdout).toContain("the pause is over: delivery goes on (1 delivered since)");
    expect(agent.status().delivery).toMatchObject({ paused: null, delivered: 1 });
    expect(gateway.received).toHaveLength(1);
  });

  it("with nothing waiting it says so; without a running agent it says how to start one", async () => {
    const { home } = await stack.setUp("Idle");
    const none = await runCli(["retry"], home.env);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain("nothing to retry (clawrelay start)");
    const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0, runDir: home.env.CLAWRELAY_HOME });
    stack.cleanups.push(() => agent.close());
    const idle = await runCli(["retry", "--json"], home.env);
    expect(JSON.parse(idle.stdout)).toEqual({ woken: 0, hold_cut_ms: 0, probe_now: false, paused: null, relay_reconnect: false });
  });

  it("the inspector's Retry now (POST /inspector/api/retry) needs the page's token and wakes the wait", async () => {
    const { gateway, home } = await stack.setUp("Inspected");
    const agent = await startAgent({ settings: home.settings, env: home.env, logger: silentLogger, apiPort: 0 });
    stack.cleanups.push(() => agent.close());
    await waitUntil("connected", () => agent.status().relay.state === "connected");
    gateway.script({ status: 401 });
    await postHook(stack.relay().url, home, AGENT, JSON.stringify({ message: "page" }));
    await waitUntil("paused on 401", () => agent.status().delivery.paused !== null);
    const base = `http://127.0.0.1:${agent.apiPort}`;
    expect((await fetch(`${base}/inspector/api/retry`, { method: "POST" })).status).toBe(403);
    const token = /name="clawrelay-token" content="([^"]+)"/.exec(await (await fetch(`${base}/`)).text())?.[1] ?? "";
    const res = await fetch(`${base}/inspector/api/retry`, { method: "POST", headers: { [TOKEN_HEADER]: token } });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ woken: 1 });
    await waitUntil("delivered", () => agent.status().delivery.delivered === 1);
  });
});
