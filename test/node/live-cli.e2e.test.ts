// The CLI's part of live requests against the real relay: `sources add|set --live[=SECONDS] | --no-live`
// (sent as live_sec, said in words, shown in `sources list`), the flag's mistakes said as usage errors, and
// `listen` making its source live (10 s) unless --no-live, its lines of before kept and one added.
import { describe, expect, it } from "vitest";
import { relayFixture } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

describe("live sources on the command line", () => {
  it("sources add --live, sources set --live=SECONDS and --no-live; sources list shows the deadline", async () => {
    const { home } = await fixture.setUp("Live CLI");
    const added = await runCli(["sources", "add", "shop", "--kind", "token", "--forward", "http://127.0.0.1:3999/hooks", "--live"], home.env);
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toContain('source "shop" (token) added; its events go to http://127.0.0.1:3999/hooks');
    expect(added.stdout).toContain("Live: while the agent runs, the app's answer goes back to the sender (waited for up to 10 s)");
    const listed = await runCli(["sources", "list"], home.env);
    expect(listed.stdout).toMatch(/LIVE/);
    expect(listed.stdout).toMatch(/shop .* 10s /);
    const set = await runCli(["sources", "set", "shop", "--live=5"], home.env);
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toBe('source "shop": answered live from now on, waiting up to 5 s for the answer\n');
    const off = await runCli(["sources", "set", "shop", "--no-live"], home.env);
    expect(off.stdout).toBe('source "shop": answered at once from now on, delivered later (not live)\n');
    expect((await runCli(["sources", "list"], home.env)).stdout).not.toMatch(/LIVE/);
    for (const [args, said] of [
      [["--live=0"], "--live takes the seconds the relay waits for the app's answer, 1-300"],
      [["--live=301"], "1-300"],
      [["--live", "--no-live"], "--live and --no-live contradict each other"],
    ] as const) {
      const wrong = await runCli(["sources", "set", "shop", ...args], home.env);
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain(said);
    }
    const help = await runCli(["sources", "add", "--help"], home.env);
    expect(help.stdout).toContain("--live[=SECONDS]");
  });

  it("listen makes its source live (10 s) unless --no-live", async () => {
    const { home } = await fixture.setUp("Live listen");
    const live = await runCli(["listen", "3998", "--json"], home.env);
    expect(live.code, live.stderr).toBe(0);
    expect(JSON.parse(live.stdout)).toMatchObject({ name: "listen-3998", how: "made", live_sec: 10 });
    const notLive = await runCli(["listen", "3998", "--no-live", "--json"], home.env);
    expect(JSON.parse(notLive.stdout)).toMatchObject({ name: "listen-3998", how: "reused", live_sec: null });
  });
});
