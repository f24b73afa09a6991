// A source's forward policy from the command line (issue 30): `sources add|set` read --timeout, --retries
// and --ordered/--unordered, check them against the relay's limits before anything is sent, and send them
// as the relay's fields (timeout_sec, retries, ordered); `sources set` takes a policy alone; what the relay
// answers is printed after the lines `sources add` always printed (scripts read them), and `sources list`
// has a policy column only when a forwarding source reports one. Against a stand-in relay on an
// ephemeral port that records each request (the relay's own tests check how it keeps the fields).
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { FORWARD_POLICY } from "../../protocol/index.ts";
import type { SourceView } from "../../protocol/index.ts";
import { UsageError } from "../../local-agent/cli/cli-args.ts";
import type { Values } from "../../local-agent/cli/cli-args.ts";
import { runSourcesCommand } from "../../local-agent/cli/cli-sources.ts";
import type { SourcesAction } from "../../local-agent/cli/cli-sources.ts";
import { policyFlags } from "../../local-agent/cli/forward-flags.ts";
import { newIdentity } from "../../local-agent/identity.ts";
import { sourceAddedText, sourcesTable } from "../../local-agent/relay/sources.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function view(over: Partial<SourceView> = {}): SourceView {
  return {
    name: "stripe", kind: "stripe", subpath: "sources/stripe", url: "https://relay.test/inbox/ag_0123456789ab/sources/stripe", secret_sealed: true,
    previous_secret_until: null, created_at: NOW, updated_at: NOW, last_refusal: null, forward: "http://127.0.0.1:3000/webhooks", allow_public_target: false, ...over,
  };
}

/** A relay that answers every sources call with `source` (the policy fields the request named merged in) and records the requests. */
async function standInRelay(source: SourceView): Promise<{ url: string; requests: { method: string; path: string; body: Record<string, unknown> }[] }> {
  const requests: { method: string; path: string; body: Record<string, unknown> }[] = [];
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
    req.on("end", () => {
      const body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
      requests.push({ method: req.method ?? "", path: (req.url ?? "").split("?")[0] ?? "", body });
      const policy = Object.fromEntries(Object.entries(body).filter(([k]) => ["timeout_sec", "retries", "ordered"].includes(k)));
      res.writeHead(req.method === "POST" ? 201 : 200, { "content-type": "application/json" });
      res.end(JSON.stringify({ source: { ...source, ...policy }, post_url: source.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  cleanups.push(() => server.close());
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests };
}

async function run(relayUrl: string, action: SourcesAction, values: Values): Promise<string> {
  const identity = await newIdentity();
  return runSourcesCommand({ action, name: "stripe", values, access: async () => ({ relayUrl, agentId: identity.agentId, identity }), readSecret: async () => "whsec_test" });
}

describe("--timeout, --retries, --ordered / --unordered", () => {
  it("become the relay's fields; none given is no policy", () => {
    expect(policyFlags({ timeout: "10", retries: "3", unordered: true })).toEqual({ timeout_sec: 10, retries: 3, ordered: false });
    expect(policyFlags({ ordered: true })).toEqual({ ordered: true });
    expect(policyFlags({ retries: "0" })).toEqual({ retries: 0 });
    expect(policyFlags({ timeout: String(FORWARD_POLICY.timeoutSecMax), retries: String(FORWARD_POLICY.retriesMax) })).toEqual({ timeout_sec: 300, retries: 100 });
    expect(policyFlags({ forward: "http://127.0.0.1:3000/" })).toBeUndefined();
  });

  it("out of the relay's limits, not whole numbers, or contradicting: a usage mistake saying what to type", () => {
    const mistake = (values: Values) => {
      try {
        policyFlags(values);
      } catch (err) {
        expect(err).toBeInstanceOf(UsageError);
        return (err as Error).message;
      }
      throw new Error(`${JSON.stringify(values)} was accepted`);
    };
    expect(mistake({ timeout: "0" })).toBe('--timeout must be a whole number of seconds from 1 to 300, not "0"');
    expect(mistake({ timeout: "301" })).toBe('--timeout must be a whole number of seconds from 1 to 300, not "301"');
    expect(mistake({ timeout: "1.5" })).toBe('--timeout must be a whole number of seconds from 1 to 300, not "1.5"');
    expect(mistake({ timeout: "30s" })).toBe('--timeout must be a whole number of seconds from 1 to 300, not "30s"');
    expect(mistake({ retries: "101" })).toBe('--retries must be a whole number of retries from 0 to 100, not "101"');
    expect(mistake({ retries: "-1" })).toBe('--retries must be a whole number of retries from 0 to 100, not "-1"');
    expect(mistake({ ordered: true, unordered: true })).toBe("--ordered and --unordered contradict each other: give one");
  });
});

describe("clawrelay sources add|set with a policy", () => {
  it("add sends the policy with the target and prints its lines as before, the policy after them", async () => {
    const relay = await standInRelay(view());
    const text = await run(relay.url, "add", { kind: "stripe", forward: "http://127.0.0.1:3000/webhooks", timeout: "10", retries: "3", unordered: true });
    expect(relay.requests).toHaveLength(1);
    expect(relay.requests[0]).toMatchObject({ method: "POST", body: { name: "stripe", kind: "stripe", forward: "http://127.0.0.1:3000/webhooks", allow_public_target: false, timeout_sec: 10, retries: 3, ordered: false } });
    const lines = text.split("\n");
    expect(lines[0]).toBe('source "stripe" (stripe) added; its events go to http://127.0.0.1:3000/webhooks');
    expect(lines.at(-1)).toBe("Forward policy: a post times out after 10 s; a failing event is tried again up to 3 times, then goes to the dead shelf; posted several at once, in any order.");
    // What it printed before policies existed is all there, unchanged, before the new line.
    expect(lines.slice(0, -1).join("\n")).toBe(sourceAddedText({ source: view(), post_url: view().url }, "added"));
  });

  it("add without policy flags sends none", async () => {
    const relay = await standInRelay(view({ forward: null }));
    await run(relay.url, "add", { kind: "stripe" });
    expect(Object.keys(relay.requests[0]!.body).sort()).toEqual(["kind", "name", "secret"]);
  });

  it("set takes a policy alone (the target stays the relay's) and says what it changed", async () => {
    const relay = await standInRelay(view());
    const text = await run(relay.url, "set", { timeout: "45", ordered: true });
    expect(relay.requests[0]).toEqual({ method: "PATCH", path: expect.stringMatching(/\/sources\/stripe$/), body: { timeout_sec: 45, ordered: true } });
    expect(text).toBe('source "stripe": a post times out after 45 s; posted one at a time, in order — from now on, those waiting at the relay included');
  });

  it("set with a target and a policy prints the target's line as before, then the policy's", async () => {
    const relay = await standInRelay(view({ timeout_sec: 30, retries: 8, ordered: true }));
    const text = await run(relay.url, "set", { forward: "http://127.0.0.1:3000/webhooks", retries: "5" });
    expect(relay.requests[0]!.body).toEqual({ forward: "http://127.0.0.1:3000/webhooks", allow_public_target: false, retries: 5 });
    expect(text.split("\n")).toEqual([
      'source "stripe": its events go to http://127.0.0.1:3000/webhooks from now on, those waiting at the relay included',
      'source "stripe": a post times out after 30 s; a failing event is tried again up to 5 times, then goes to the dead shelf; posted one at a time, in order — from now on, those waiting at the relay included',
    ]);
  });

  it("a policy given to a source whose events go to the gateway is said to be kept for when they go to an app", async () => {
    const relay = await standInRelay(view({ forward: null }));
    const kept = 'source "stripe": its forward policy is kept for when its events go to a local app (clawrelay sources set stripe --forward URL); the gateway\'s own retries apply meanwhile';
    expect((await run(relay.url, "add", { kind: "stripe", retries: "2" })).split("\n").at(-1)).toBe(kept);
    expect(await run(relay.url, "set", { gateway: true, retries: "2" })).toBe(`source "stripe": its events go to the gateway's hooks path + /sources/stripe from now on, those waiting at the relay included\n${kept}`);
    expect(await run(relay.url, "add", { kind: "stripe" })).not.toContain("forward policy");
  });

  it("set with neither a target nor a policy, or a bad value, is refused before the relay is asked", async () => {
    const relay = await standInRelay(view());
    await expect(run(relay.url, "set", {})).rejects.toThrow("sources set needs --forward URL (a local app) or --gateway, or how its events are posted: --timeout SECONDS, --retries N, --ordered or --unordered");
    await expect(run(relay.url, "set", { retries: "many" })).rejects.toThrow(UsageError);
    await expect(run(relay.url, "add", { kind: "stripe", forward: "http://127.0.0.1:3000/", timeout: "0" })).rejects.toThrow(UsageError);
    expect(relay.requests).toEqual([]);
  });
});

describe("clawrelay sources list", () => {
  it("shows each forwarding source's policy in its own column when the relay reports one", () => {
    const table = sourcesTable([view({ timeout_sec: 10, retries: 3, ordered: false }), view({ name: "github", kind: "github", forward: null, subpath: "sources/github", url: "https://relay.test/inbox/ag_0123456789ab/sources/github", timeout_sec: 30, retries: 8, ordered: true })], NOW);
    expect(table.split("\n")[0]).toMatch(/^NAME\s+KIND\s+GOES TO\s+POLICY\s+URL\s+LAST REFUSAL$/);
    expect(table).toMatch(/^stripe\s+stripe\s+http:\/\/127\.0\.0\.1:3000\/webhooks\s+10s, 3 retries, unordered\s+https:\/\/relay\.test\S+\/sources\/stripe$/m);
    // A source for the gateway has no forward policy to show.
    expect(table).toMatch(/^github\s+github\s+gateway: sources\/github\s+https:\/\/relay\.test\S+\/sources\/github$/m);
  });

  it("from an older relay (no policy reported) is the table of before", () => {
    expect(sourcesTable([view()], NOW).split("\n")[0]).toMatch(/^NAME\s+KIND\s+GOES TO\s+URL\s+LAST REFUSAL$/);
  });
});
