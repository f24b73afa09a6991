// Webhook sources end to end: the CLI adds them on the real relay (workerd), a provider-signed event
// (signed here with node:crypto) reaches the stand-in gateway through the real local agent with its
// body byte-exact and its headers of interest, refusals show in `sources list`, rotation and removal.
import { createHmac, generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, queueItems, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

async function setUp(): Promise<{ gateway: Awaited<ReturnType<typeof startStandinGateway>>; home: AgentHome }> {
  const gateway = await startStandinGateway({ mappings: ["agentgram_inbox/agent", "agentgram_inbox/wake", "sources/github", "sources/zapier"] });
  const home = await makeAgentHome(fixture.relay(), gateway, "Sourced");
  fixture.cleanups.push(() => gateway.close(), () => home.cleanup());
  return { gateway, home };
}

async function cli(home: AgentHome, args: string[], input?: string): Promise<string> {
  const result = await runCli(args, home.env, 20_000, input);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

function postGithub(url: string, secret: string, body: string, delivery: string): Promise<Response> {
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  return fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": signature, "x-github-event": "push", "x-github-delivery": delivery }, body });
}

describe("webhook sources", () => {
  it("a GitHub push reaches the gateway at sources/github, byte-exact, with its event headers; once", async () => {
    const { gateway, home } = await setUp();
    const added = JSON.parse(await cli(home, ["sources", "add", "github", "--kind", "github", "--json"])) as { post_url: string; secret: string };
    expect(added.post_url).toBe(`${fixture.relay().url}/inbox/${home.settings.agent_id}/sources/github`);
    const body = '{ "ref": "refs/heads/main",\n  "repository": { "full_name": "octo/repo" } }';
    const first = await postGithub(added.post_url, added.secret, body, "d-1");
    expect(first.status).toBe(200);
    // GitHub's redelivery of the same delivery is answered, not stored again.
    expect(await (await postGithub(added.post_url, added.secret, body, "d-1")).json()).toMatchObject({ duplicate: true });
    await fixture.run(home);
    await waitUntil("the push at the gateway", () => gateway.received.length === 1);
    const [hook] = gateway.received;
    expect(hook!.subpath).toBe("sources/github");
    expect(hook!.body.toString("utf8")).toBe(body);
    expect(hook!.headers).toMatchObject({
      "x-github-event": "push",
      "x-github-delivery": "d-1",
      "x-clawrelay-source": "github",
      "x-clawrelay-event": "push",
      "x-clawrelay-delivery": "d-1",
      authorization: `Bearer ${gateway.token}`,
    });
    expect(hook!.headers["x-hub-signature-256"]).toBeUndefined();
    // Once: the inbox empty, nothing is left that could reach the gateway again.
    await waitUntil("the inbox empty", async () => (await queueItems(fixture.relay().url, home)).length === 0);
    expect(gateway.received).toHaveLength(1);
  });

  it("the CLI lists sources with the last refusal, rotates with a secret from stdin and a grace, removes", async () => {
    const { home } = await setUp();
    await cli(home, ["sources", "add", "github", "--kind", "github"]);
    const text = await cli(home, ["sources", "add", "zapier", "--kind", "token"]);
    expect(text).toContain('source "zapier" (token) added');
    const tokenUrl = /URL: (\S+)/.exec(text)![1]!;
    expect((await fetch(tokenUrl, { method: "POST", body: "hello" })).status).toBe(200);
    const forged = await postGithub(`${fixture.relay().url}/inbox/${home.settings.agent_id}/sources/github`, "not-the-secret-at-all", "{}", "d-9");
    expect(forged.status).toBe(401);
    const listing = await cli(home, ["sources", "list"]);
    expect(listing).toMatch(/^NAME\s+KIND\s+GOES TO\s+URL\s+LAST REFUSAL$/m);
    expect(listing).toMatch(/^github\s+github\s+gateway: sources\/github\s+\S+\/sources\/github\s+\d+s ago: invalid_signature$/m);
    expect(listing).toMatch(/^zapier\s+token\s+gateway: sources\/zapier\s+\S+\/sources\/zapier\/\{secret\}$/m);
    const mine = "my-own-long-github-secret-1234";
    const rotated = await cli(home, ["sources", "rotate", "github", "--secret", "-", "--grace", "600"], `${mine}\n`);
    expect(rotated).toContain('source "github" (github) rotated');
    expect(rotated).toContain("The previous secret keeps working until");
    expect(rotated).not.toContain(mine);
    const url = `${fixture.relay().url}/inbox/${home.settings.agent_id}/sources/github`;
    expect((await postGithub(url, mine, "{}", "d-10")).status).toBe(200);
    const removed = await cli(home, ["sources", "remove", "github"]);
    expect(removed).toContain('source "github" removed');
    expect((await postGithub(url, mine, "{}", "d-11")).status).toBe(404);
    const json = JSON.parse(await cli(home, ["sources", "list", "--json"])) as { name: string }[];
    expect(json.map((s) => s.name)).toEqual(["zapier"]);
  });

  it("bad use of the CLI says what to fix", async () => {
    const { home } = await setUp();
    const noKind = await runCli(["sources", "add", "x"], home.env);
    expect(noKind.code).toBe(2);
    expect(noKind.stderr).toContain("sources add needs --kind");
    const stripe = await runCli(["sources", "add", "pay", "--kind", "stripe"], home.env);
    expect(stripe.code).not.toBe(0);
    expect(stripe.stderr).toContain("signing secret");
    const empty = await runCli(["sources", "add", "slack", "--kind", "slack", "--secret", "-"], home.env, 20_000, "");
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain("--secret - read nothing from stdin");
    const unknown = await runCli(["sources", "rotate", "nope"], home.env);
    expect(unknown.stderr).toContain("source_not_found");
  });

  it("a Discord source takes the application's public key (64 hex digits), said before the relay is asked; added, it names the Interactions Endpoint URL", async () => {
    const { home } = await setUp();
    // 0100…00 is the curve's neutral point: 64 hex digits, and no signature would ever verify under it.
    for (const secret of [[], ["--secret", "1289020000000000000"], ["--secret", "g".repeat(64)], ["--secret", `01${"0".repeat(62)}`]]) {
      const refused = await runCli(["sources", "add", "discord", "--kind", "discord", ...secret], home.env);
      expect(refused.code, refused.stderr).toBe(2);
      expect(refused.stderr).toContain("Public Key");
    }
    const jwk = generateKeyPairSync("ed25519").publicKey.export({ format: "jwk" });
    const key = Buffer.from(jwk.x!, "base64url").toString("hex");
    const added = await cli(home, ["sources", "add", "discord", "--kind", "discord", "--secret", key]);
    expect(added).toContain("Interactions Endpoint URL");
    expect(added).toContain(`${fixture.relay().url}/inbox/${home.settings.agent_id}/sources/discord`);
  });
});
