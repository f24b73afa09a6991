// The gateway's A2A channel as clawrelay reads it from openclaw.json (local-agent/a2a/a2a-config.ts): on
// or off, replyTimeoutMs (default 120 s) and the relay's deadline just above it (at most 300 s), each
// peer's token with `${VAR}` resolved as the gateway resolves config strings (an upper-case name from the
// environment; `$${VAR}` stays literal; unset or empty → the peer cannot be resolved and is named), and the
// SHA-256 of each resolvable token, the only thing the relay is sent.
import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { a2aChannelFrom, channelDeadlineSec, peerHashes } from "../../local-agent/a2a/a2a-config.ts";

const config = (a2a: unknown) => ({ channels: { a2a } });

describe("the A2A channel in openclaw.json", () => {
  it("resolves ${VAR} tokens from the environment, keeps $${VAR} literal, and names a peer whose variable is unset or empty", async () => {
    const channel = a2aChannelFrom(
      config({ enabled: true, peers: { hermes: { token: "${A2A_HERMES_TOKEN}" }, plain: { token: "literal-secret" }, escaped: { token: "$${NOT_EXPANDED}" }, mixed: { token: "pre-${A2A_PART}-post" }, unset: { token: "${A2A_MISSING}" }, empty: { token: "${A2A_EMPTY}" }, none: {}, lower: { token: "${lower_case}" } } }),
      { A2A_HERMES_TOKEN: "s3cret", A2A_PART: "mid", A2A_EMPTY: "", lower_case: "x" },
    );
    expect(channel.enabled).toBe(true);
    const byName = Object.fromEntries(channel.peers.map((p) => [p.name, p]));
    expect(byName.hermes).toEqual({ name: "hermes", token: "s3cret", problem: null });
    expect(byName.plain?.token).toBe("literal-secret");
    expect(byName.escaped?.token).toBe("${NOT_EXPANDED}");
    expect(byName.mixed?.token).toBe("pre-mid-post");
    // Only upper-case names are variables to the gateway: the text stays as it is.
    expect(byName.lower?.token).toBe("${lower_case}");
    expect(byName.unset).toMatchObject({ token: null, problem: expect.stringContaining("${A2A_MISSING}") });
    expect(byName.empty).toMatchObject({ token: null, problem: expect.stringContaining("${A2A_EMPTY}") });
    expect(byName.none).toMatchObject({ token: null, problem: expect.stringContaining("no token") });

    const hashes = await peerHashes(channel);
    expect(hashes.map((h) => h.name)).toEqual(["hermes", "plain", "escaped", "mixed", "lower"]);
    expect(hashes[0]!.token_sha256).toBe(createHash("sha256").update("s3cret").digest("hex"));
  });

  it("reads the channel as off when it is not enabled, and the reply time-out (default 120 s) into the relay's deadline", () => {
    expect(a2aChannelFrom({}, {}).enabled).toBe(false);
    expect(a2aChannelFrom(config({ enabled: "yes" }), {}).enabled).toBe(false);
    // As the gateway reads it: channels.a2a present and enabled not false runs the channel.
    expect(a2aChannelFrom(config({ peers: {} }), {}).enabled).toBe(true);
    expect(a2aChannelFrom(config({ enabled: false }), {}).enabled).toBe(false);
    expect(channelDeadlineSec(a2aChannelFrom(config({ enabled: true }), {}))).toBe(125);
    expect(channelDeadlineSec(a2aChannelFrom(config({ enabled: true, replyTimeoutMs: 5000 }), {}))).toBe(10);
    expect(channelDeadlineSec(a2aChannelFrom(config({ enabled: true, replyTimeoutMs: 30_500 }), {}))).toBe(36);
    expect(channelDeadlineSec(a2aChannelFrom(config({ enabled: true, replyTimeoutMs: 600_000 }), {}))).toBe(300);
  });
});
