// Forward targets end to end with the providers' own SDKs on both ends: an event signed by Stripe's,
// Octokit's or Standard Webhooks' SDK (Slack's scheme by hand) is posted to the real relay (workerd),
// verified there, taken by the real local agent and posted to a local app that verifies it again with the
// same SDK — byte-exact, its signature headers unchanged. The app down for a while, then up: each event
// delivered once, in order. A 400 from the app: on the dead shelf with its status and words, replayed
// after the fix. The CLI's sources add/set drive it all.
import { createHmac, randomBytes } from "node:crypto";
import { sign as signGithub } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";
import { describe, expect, it } from "vitest";
import { startStandinGateway } from "../../scripts/standin-gateway.ts";
import { makeAgentHome, queueItems, recordingLogger, relayFixture, waitUntil } from "../support/node/stack.ts";
import type { AgentHome } from "../support/node/stack.ts";
import { startWebhookApp } from "../support/node/webhook-app.ts";
import type { AppSecrets, WebhookApp } from "../support/node/webhook-app.ts";
import { runCli } from "./cli-harness.ts";

const fixture = relayFixture();

const secrets: AppSecrets = {
  stripe: `whsec_${randomBytes(24).toString("hex")}`,
  github: randomBytes(24).toString("hex"),
  standard: `whsec_${randomBytes(32).toString("base64")}`,
  slack: randomBytes(16).toString("hex"),
};

async function setUp(): Promise<{ app: WebhookApp; home: AgentHome; gatewayReceived: () => number }> {
  const gateway = await startStandinGateway({ mappings: ["agentgram_inbox/agent", "agentgram_inbox/wake", "sources/plain"] });
  const home = await makeAgentHome(fixture.relay(), gateway, "Forwarder");
  const app = await startWebhookApp(secrets);
  fixture.cleanups.push(() => gateway.close(), () => home.cleanup(), () => app.close());
  return { app, home, gatewayReceived: () => gateway.received.length };
}

async function cli(home: AgentHome, args: string[], input?: string): Promise<string> {
  const result = await runCli(args, home.env, 20_000, input);
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

async function addSource(home: AgentHome, name: string, kind: string, secret: string | null, target: string): Promise<string> {
  const args = ["sources", "add", name, "--kind", kind, ...(secret ? ["--secret", "-"] : []), "--forward", target, "--json"];
  const answer = JSON.parse(await cli(home, args, secret ? `${secret}\n` : undefined)) as { post_url: string; source: { forward: string } };
  expect(answer.source.forward).toBe(target);
  return answer.post_url;
}

function stripeEvent(id: string): string {
  // Stripe's own layout: pretty-printed, two-space indent, a trailing newline-free body.
  return JSON.stringify({ id, object: "event", type: "payment_intent.succeeded", data: { object: { id: `pi_${id}`, amount: 2000, currency: "eur" } } }, null, 2);
}

async function postStripe(url: string, body: string): Promise<Response> {
  const signature = Stripe.webhooks.generateTestHeaderString({ payload: body, secret: secrets.stripe });
  return fetch(url, { method: "POST", headers: { "content-type": "application/json; charset=utf-8", "stripe-signature": signature, "user-agent": "Stripe/1.0 (+https://stripe.com/docs/webhooks)" }, body });
}

describe("forward targets with the providers' SDKs", () => {
  it("Stripe, GitHub, Standard Webhooks and Slack events reach the app, which verifies each with the SDK", async () => {
    const { app, home, gatewayReceived } = await setUp();
    const stripeUrl = await addSource(home, "stripe", "stripe", secrets.stripe, `${app.url}/webhooks/stripe`);
    const githubUrl = await addSource(home, "github", "github", secrets.github, `${app.url}/webhooks/github`);
    const standardUrl = await addSource(home, "resend", "standard-webhooks", secrets.standard, `${app.url}/webhooks/standard`);
    const slackUrl = await addSource(home, "slack", "slack", secrets.slack, `${app.url}/webhooks/slack`);

    const stripeBody = stripeEvent("evt_sdk_1");
    expect((await postStripe(stripeUrl, stripeBody)).status).toBe(200);
    const githubBody = '{"ref":"refs/heads/main","after":"9f1c","repository":{"full_name":"octo/app"}}';
    const githubSignature = await signGithub(secrets.github, githubBody);
    const github = await fetch(githubUrl, { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": githubSignature, "x-github-event": "push", "x-github-delivery": "d-77" }, body: githubBody });
    expect(github.status).toBe(200);
    const standardBody = '{"type":"email.delivered","data":{"to":["a@example.com"]}}';
    const msgId = "msg_2Lb0Zk";
    const when = new Date();
    const standardSignature = new Webhook(secrets.standard).sign(msgId, when, standardBody);
    const standardHeaders = { "content-type": "application/json", "webhook-id": msgId, "webhook-timestamp": String(Math.floor(when.getTime() / 1000)), "webhook-signature": standardSignature };
    expect((await fetch(standardUrl, { method: "POST", headers: standardHeaders, body: standardBody })).status).toBe(200);
    const slackBody = '{"type":"event_callback","event_id":"Ev01","event":{"type":"app_mention","text":"hi"}}';
    const ts = String(Math.floor(Date.now() / 1000));
    const slackSignature = `v0=${createHmac("sha256", secrets.slack).update(`v0:${ts}:${slackBody}`).digest("hex")}`;
    expect((await fetch(slackUrl, { method: "POST", headers: { "content-type": "application/json", "x-slack-request-timestamp": ts, "x-slack-signature": slackSignature }, body: slackBody })).status).toBe(200);

    await fixture.run(home);
    await waitUntil("four events at the app", () => app.received.length >= 4);
    const byPath = (suffix: string) => app.received.find((r) => r.url === `/webhooks/${suffix}`)!;
    expect(byPath("stripe").verdict).toBe("stripe evt_sdk_1");
    expect(byPath("stripe").body.toString("utf8")).toBe(stripeBody);
    expect(byPath("stripe").headers["content-type"]).toBe("application/json; charset=utf-8");
    expect(byPath("stripe").headers["user-agent"]).toBe("Stripe/1.0 (+https://stripe.com/docs/webhooks)");
    expect(byPath("github").verdict).toBe("github");
    expect(byPath("github").headers["x-hub-signature-256"]).toBe(githubSignature);
    expect(byPath("github").headers["x-github-delivery"]).toBe("d-77");
    expect(byPath("standard").verdict).toBe(`standard ${msgId}`);
    expect(byPath("slack").verdict).toBe("slack");
    expect(app.received.every((r) => r.method === "POST" && r.status === 200)).toBe(true);
    // Nothing of the relay's own reaches the app, nor does anything go to the gateway.
    expect(byPath("stripe").headers["cf-connecting-ip"]).toBeUndefined();
    expect(byPath("stripe").headers.authorization).toBeUndefined();
    await waitUntil("the inbox empty", async () => (await queueItems(fixture.relay().url, home)).length === 0);
    expect(gatewayReceived()).toBe(0);
  });

  it("the app down for a while, then up: every event delivered once, in order, none lost", async () => {
    const { app, home } = await setUp();
    const url = await addSource(home, "stripe", "stripe", secrets.stripe, `${app.url}/webhooks/stripe`);
    await app.down();
    const logger = recordingLogger();
    await fixture.run(home, logger);
    for (const n of [1, 2, 3]) expect((await postStripe(url, stripeEvent(`evt_down_${n}`))).status).toBe(200);
    // Down for a while: the agent has tried the app three times and is waiting to try again.
    await waitUntil("three failed attempts at the app", () => logger.lines.filter((l) => l.event === "app did not take a forwarded event").length >= 3);
    await app.up();
    await waitUntil("three events at the app", () => app.received.length >= 3);
    // The inbox empty: nothing is left that could reach the app again.
    await waitUntil("the inbox empty", async () => (await queueItems(fixture.relay().url, home)).length === 0);
    expect(app.received.map((r) => r.verdict)).toEqual(["stripe evt_down_1", "stripe evt_down_2", "stripe evt_down_3"]);
  });

  it("a 400 from the app puts the event on the dead shelf with the app's words; replayed after the fix it is delivered", async () => {
    const { app, home } = await setUp();
    const url = await addSource(home, "stripe", "stripe", secrets.stripe, `${app.url}/webhooks/stripe`);
    app.answerNext({ status: 400, body: "Webhook Error: No such customer cus_missing\n   (fix the fixture)" });
    await fixture.run(home);
    expect((await postStripe(url, stripeEvent("evt_bad_1"))).status).toBe(200);
    await waitUntil("the event on the dead shelf", async () => (await queueItems(fixture.relay().url, home, "dead")).length === 1);
    const [dead] = await queueItems(fixture.relay().url, home, "dead");
    expect(dead!.last_status).toBe(400);
    expect(dead!.reason).toContain("No such customer cus_missing (fix the fixture)");
    expect(dead!.attempts).toBe(1);
    const replayed = await cli(home, ["messages", "replay", String(dead!.id)]);
    expect(replayed).toMatch(/queued again as id \d+/);
    await waitUntil("the replay at the app", () => app.received.filter((r) => r.verdict === "stripe evt_bad_1").length === 1);
    await waitUntil("the inbox empty", async () => (await queueItems(fixture.relay().url, home)).length === 0);
    expect(app.received.map((r) => r.status)).toEqual([400, 200]);
  });

  it("sources set switches a source between the app and the gateway, waiting events included", async () => {
    const { app, home, gatewayReceived } = await setUp();
    const tokenText = await cli(home, ["sources", "add", "plain", "--kind", "token"]);
    const tokenUrl = /URL: (\S+)/.exec(tokenText)![1]!;
    expect((await fetch(tokenUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":1}' })).status).toBe(200);
    const set = await cli(home, ["sources", "set", "plain", "--forward", `${app.url}/in`]);
    expect(set).toContain(`its events go to ${app.url}/in from now on`);
    expect(await cli(home, ["sources", "list"])).toMatch(new RegExp(`^plain\\s+token\\s+${app.url}/in\\s`, "m"));
    await fixture.run(home);
    await waitUntil("the waiting event at the app", () => app.received.length === 1);
    expect(app.received[0]!.url).toBe("/in");
    expect(app.received[0]!.body.toString("utf8")).toBe('{"n":1}');
    await cli(home, ["sources", "set", "plain", "--gateway"]);
    expect((await fetch(tokenUrl, { method: "POST", headers: { "content-type": "application/json" }, body: '{"n":2}' })).status).toBe(200);
    await waitUntil("the next one at the gateway", () => gatewayReceived() === 1);
    expect(app.received).toHaveLength(1);
  });
});
