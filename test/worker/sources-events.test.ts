// Events from webhook sources: each kind verified as its provider documents it (signatures computed
// with node:crypto here, and the providers' published examples), refused ones stored nowhere, the
// provider's retries dropped by delivery id, accepted ones delivered with their headers of interest.
import { describe, expect, it } from "vitest";
import { claimInbox, errorCode, frameBytes, poll } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { addSource, githubHeaders, nowSec, pathOf, postToSource, slackHeaders, standardHeaders, stripeHeaders } from "../support/workerd/sources.ts";
import { importHmacKey } from "../../worker/sources/hmac.ts";
import { verifySlack } from "../../worker/sources/slack.ts";
import { standardWebhooksKey, verifyStandardWebhooks } from "../../worker/sources/standard-webhooks.ts";
import { utf8 } from "../../protocol/index.ts";

const STRIPE_SECRET = "whsec_test_9f8e7d6c5b4a39281706f5e4d3c2b1a0";
const SLACK_SECRET = "8f742231b10e8888abcd99yyyzzz85a5";

async function stored(inbox: ClaimedInbox) {
  return (await poll(inbox.agent)).messages;
}

async function refused(res: Response, status: number, code: string): Promise<void> {
  expect(res.status).toBe(status);
  expect(await errorCode(res)).toBe(code);
}

describe("github", () => {
  it("accepts GitHub's published example (secret, body and signature from its guide) and stores it byte-exact", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "github", kind: "github", secret: "It's a Secret to Everybody" });
    const res = await postToSource(pathOf(source.url), "Hello, World!", {
      "content-type": "application/json",
      "x-hub-signature-256": "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17",
      "x-github-event": "push",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-github-hook-id": "292430182",
    });
    expect(res.status).toBe(200);
    const [frame] = await stored(inbox);
    expect(new TextDecoder().decode(frameBytes(frame!))).toBe("Hello, World!");
    expect(frame).toMatchObject({ kind: "hook", subpath: "sources/github", content_type: "application/json" });
    expect(frame!.headers).toEqual({
      "x-github-event": "push",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-github-hook-id": "292430182",
      "x-clawrelay-source": "github",
      "x-clawrelay-event": "push",
      "x-clawrelay-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
    });
  });

  it("refuses a missing, malformed, tampered or wrong-secret signature with 401, storing nothing", async () => {
    const inbox = await claimInbox();
    const added = await addSource(inbox, { name: "gh", kind: "github" });
    const secret = added.secret!;
    const path = pathOf(added.source.url);
    const body = '{"ref":"refs/heads/main"}';
    await refused(await postToSource(path, body, { "x-github-event": "push" }), 401, "missing_signature");
    await refused(await postToSource(path, body, { "x-hub-signature-256": "sha1=abc" }), 401, "invalid_signature_header");
    await refused(await postToSource(path, body.replace("main", "evil"), githubHeaders(secret, body)), 401, "invalid_signature");
    await refused(await postToSource(path, body, githubHeaders(`${secret}x`, body)), 401, "invalid_signature");
    expect(await stored(inbox)).toEqual([]);
  });

  it("drops GitHub's redelivery of the same X-GitHub-Delivery; answers the ping without storing it", async () => {
    const inbox = await claimInbox();
    const { source, secret } = await addSource(inbox, { name: "gh", kind: "github" });
    const body = '{"action":"opened"}';
    const headers = githubHeaders(secret!, body, { "x-github-event": "issues" });
    const first = (await (await postToSource(pathOf(source.url), body, headers)).json()) as { id: number };
    const again = await postToSource(pathOf(source.url), body, headers);
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ queued: true, id: first.id, duplicate: true });
    const ping = await postToSource(pathOf(source.url), '{"zen":"Keep it logically awesome."}', githubHeaders(secret!, '{"zen":"Keep it logically awesome."}', { "x-github-event": "ping" }));
    expect(ping.status).toBe(200);
    expect(await ping.json()).toEqual({ ok: true, ping: true });
    const messages = await stored(inbox);
    expect(messages.map((m) => m.id)).toEqual([first.id]);
    expect(messages[0]!.headers?.["x-clawrelay-event"]).toBe("issues");
  });
});

describe("stripe", () => {
  const event = (id: string) => JSON.stringify({ id, object: "event", type: "payment_intent.succeeded", data: { object: { amount: 2000 } } });

  it("accepts t.body signed with the endpoint secret, dedups by event id, types it", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
    const body = event("evt_1");
    const ok = await postToSource(pathOf(source.url), body, stripeHeaders(STRIPE_SECRET, body));
    expect(ok.status).toBe(200);
    // Stripe's retry: the same event, signed again at a later time.
    const retry = await postToSource(pathOf(source.url), body, stripeHeaders(STRIPE_SECRET, body, nowSec() + 60));
    expect(await retry.json()).toMatchObject({ duplicate: true });
    const messages = await stored(inbox);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.headers).toEqual({ "x-clawrelay-source": "stripe", "x-clawrelay-event": "payment_intent.succeeded", "x-clawrelay-delivery": "evt_1" });
  });

  it("takes any of several v1 signatures (a secret being rolled) and ignores v0", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
    const body = event("evt_2");
    const ts = nowSec();
    const headers = stripeHeaders(STRIPE_SECRET, body, ts);
    const ours = headers["stripe-signature"]!.split(",")[1]!;
    headers["stripe-signature"] = `t=${ts},v1=${"0".repeat(64)},${ours},v0=${"1".repeat(64)}`;
    expect((await postToSource(pathOf(source.url), body, headers)).status).toBe(200);
  });

  it("refuses with 400: no header, no v1, stale or future timestamp, tampered body, wrong secret", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
    const path = pathOf(source.url);
    const body = event("evt_3");
    await refused(await postToSource(path, body, {}), 400, "missing_signature");
    await refused(await postToSource(path, body, { "stripe-signature": `t=${nowSec()}` }), 400, "invalid_signature_header");
    await refused(await postToSource(path, body, stripeHeaders(STRIPE_SECRET, body, nowSec() - 301)), 400, "timestamp_out_of_range");
    await refused(await postToSource(path, body, stripeHeaders(STRIPE_SECRET, body, nowSec() + 400)), 400, "timestamp_out_of_range");
    await refused(await postToSource(path, `${body} `, stripeHeaders(STRIPE_SECRET, body)), 400, "invalid_signature");
    await refused(await postToSource(path, body, stripeHeaders("whsec_another_secret_entirely", body)), 400, "invalid_signature");
    expect(await stored(inbox)).toEqual([]);
  });
});

describe("slack", () => {
  it("verifies Slack's published example (its secret, timestamp, body and signature)", async () => {
    const body =
      "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
    const headers = new Headers({ "x-slack-request-timestamp": "1531420618", "x-slack-signature": "v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503" });
    const keys = [await importHmacKey(utf8(SLACK_SECRET))];
    const verdict = await verifySlack({ headers, body: utf8(body), nowSec: 1531420618 + 10, pathSecret: null }, keys);
    expect(verdict).toEqual({ event: { deliveryId: null, eventType: "/webhook-collect", headers: { "x-slack-request-timestamp": "1531420618" } } });
    await expect(verifySlack({ headers, body: utf8(`${body}&x=1`), nowSec: 1531420618, pathSecret: null }, keys)).rejects.toMatchObject({ code: "invalid_signature" });
  });

  it("answers url_verification with the challenge, stores events, recognises retries by event_id", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "slack", kind: "slack", secret: SLACK_SECRET });
    const path = pathOf(source.url);
    const challenge = JSON.stringify({ token: "t", challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P", type: "url_verification" });
    const answer = await postToSource(path, challenge, slackHeaders(SLACK_SECRET, challenge));
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ challenge: "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P" });
    const body = JSON.stringify({ type: "event_callback", event_id: "Ev08MFMKH6", event: { type: "app_mention", text: "<@U1> hi" } });
    expect((await postToSource(path, body, slackHeaders(SLACK_SECRET, body))).status).toBe(200);
    const retry = await postToSource(path, body, slackHeaders(SLACK_SECRET, body, nowSec(), { "x-slack-retry-num": "1", "x-slack-retry-reason": "http_timeout" }));
    expect(await retry.json()).toMatchObject({ duplicate: true });
    const messages = await stored(inbox);
    expect(messages).toHaveLength(1);
    expect(messages[0]!.headers).toMatchObject({ "x-clawrelay-event": "app_mention", "x-clawrelay-delivery": "Ev08MFMKH6" });
  });

  it("a retry whose first attempt never arrived is stored, with Slack's retry headers", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "slack", kind: "slack", secret: SLACK_SECRET });
    const body = JSON.stringify({ type: "event_callback", event_id: "Ev2", event: { type: "message" } });
    await postToSource(pathOf(source.url), body, slackHeaders(SLACK_SECRET, body, nowSec(), { "x-slack-retry-num": "2", "x-slack-retry-reason": "http_error" }));
    expect((await stored(inbox))[0]!.headers).toMatchObject({ "x-slack-retry-num": "2", "x-slack-retry-reason": "http_error" });
  });

  it("refuses with 401: no headers, stale, tampered, wrong secret; the challenge too when unsigned", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "slack", kind: "slack", secret: SLACK_SECRET });
    const path = pathOf(source.url);
    const body = JSON.stringify({ type: "url_verification", challenge: "c" });
    await refused(await postToSource(path, body, {}), 401, "missing_signature");
    await refused(await postToSource(path, body, slackHeaders(SLACK_SECRET, body, nowSec() - 600)), 401, "timestamp_out_of_range");
    await refused(await postToSource(path, body.replace('"c"', '"d"'), slackHeaders(SLACK_SECRET, body)), 401, "invalid_signature");
    await refused(await postToSource(path, body, slackHeaders("0".repeat(32), body)), 401, "invalid_signature");
    expect(await stored(inbox)).toEqual([]);
  });
});

describe("standard webhooks", () => {
  it("verifies the specification's example (secret, id, timestamp, body, signature)", async () => {
    const headers = new Headers({
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    });
    const keys = [await importHmacKey(standardWebhooksKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")!)];
    const request = { headers, body: utf8('{"test": 2432232314}'), nowSec: 1614265330, pathSecret: null };
    expect(await verifyStandardWebhooks(request, keys)).toMatchObject({ event: { deliveryId: "msg_p5jXN8AQM9LWM0D4loKWxJek" } });
    await expect(verifyStandardWebhooks({ ...request, nowSec: 1614265330 + 301 }, keys)).rejects.toMatchObject({ code: "timestamp_out_of_range", status: 400 });
  });

  it("accepts webhook-* and svix-* headers, several signatures, dedups by id", async () => {
    const inbox = await claimInbox();
    const { source, secret } = await addSource(inbox, { name: "resend", kind: "standard-webhooks" });
    expect(secret).toMatch(/^whsec_/);
    const path = pathOf(source.url);
    const body = JSON.stringify({ type: "email.delivered", data: { to: "a@example.com" } });
    expect((await postToSource(path, body, standardHeaders(secret!, "msg_1", body, nowSec(), "svix", ["v1a,bm90IGFuIGVkMjU1MTkgc2ln", "v1,AAAA"]))).status).toBe(200);
    const replay = await postToSource(path, body, standardHeaders(secret!, "msg_1", body));
    expect(await replay.json()).toMatchObject({ duplicate: true });
    expect((await postToSource(path, body, standardHeaders(secret!, "msg_2", body))).status).toBe(200);
    const messages = await stored(inbox);
    expect(messages.map((m) => m.headers?.["webhook-id"])).toEqual(["msg_1", "msg_2"]);
    expect(messages[0]!.headers).toMatchObject({ "x-clawrelay-event": "email.delivered", "webhook-timestamp": expect.stringMatching(/^\d+$/) });
  });

  it("refuses with 400: missing headers, only v1a, stale, tampered, wrong secret", async () => {
    const inbox = await claimInbox();
    const { source, secret } = await addSource(inbox, { name: "clerk", kind: "standard-webhooks" });
    const path = pathOf(source.url);
    const body = '{"type":"user.created"}';
    await refused(await postToSource(path, body, { "webhook-id": "msg_1" }), 400, "missing_signature");
    await refused(await postToSource(path, body, { ...standardHeaders(secret!, "msg_1", body), "webhook-signature": "v1a,abcd" }), 400, "invalid_signature_header");
    await refused(await postToSource(path, body, standardHeaders(secret!, "msg_1", body, nowSec() - 400)), 400, "timestamp_out_of_range");
    await refused(await postToSource(path, '{"type":"user.deleted"}', standardHeaders(secret!, "msg_1", body)), 400, "invalid_signature");
    await refused(await postToSource(path, body, standardHeaders(`whsec_${btoa("x".repeat(32))}`, "msg_1", body)), 400, "invalid_signature");
    // The id is signed: the same signature under another id fails.
    const headers = standardHeaders(secret!, "msg_1", body);
    await refused(await postToSource(path, body, { ...headers, "webhook-id": "msg_9" }), 400, "invalid_signature");
    expect(await stored(inbox)).toEqual([]);
  });
});

describe("token", () => {
  it("takes events at the URL with the secret, refuses others, dedups by Idempotency-Key", async () => {
    const inbox = await claimInbox();
    const added = await addSource(inbox, { name: "ifttt", kind: "token" });
    expect(added.secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(added.post_url.endsWith(`/sources/ifttt/${added.secret}`)).toBe(true);
    expect(added.source.url.endsWith("/sources/ifttt/{secret}")).toBe(true);
    const path = pathOf(added.post_url);
    expect((await postToSource(path, '{"value1":"x"}', { "content-type": "application/json" })).status).toBe(200);
    expect((await postToSource(path, "plain text", { "content-type": "text/plain", "idempotency-key": "k1" })).status).toBe(200);
    expect(await (await postToSource(path, "plain text", { "content-type": "text/plain", "idempotency-key": "k1" })).json()).toMatchObject({ duplicate: true });
    await refused(await postToSource(path.slice(0, path.lastIndexOf("/")), "{}", {}), 401, "missing_source_secret");
    await refused(await postToSource(`${path.slice(0, -1)}${path.endsWith("A") ? "B" : "A"}`, "{}", {}), 401, "invalid_source_secret");
    const messages = await stored(inbox);
    expect(messages.map((m) => m.content_type)).toEqual(["application/json", "text/plain"]);
    expect(messages[1]!.headers).toEqual({ "x-clawrelay-source": "ifttt", "x-clawrelay-delivery": "k1" });
  });
});

describe("every kind", () => {
  it("an unknown source is 404; a secret path on a signed kind is 404; nothing is stored", async () => {
    const inbox = await claimInbox();
    const { source, secret } = await addSource(inbox, { name: "gh", kind: "github" });
    const body = "{}";
    await refused(await postToSource(`/inbox/${inbox.agent.id}/sources/nope`, body, githubHeaders(secret!, body)), 404, "source_not_found");
    await refused(await postToSource(`${pathOf(source.url)}/extra`, body, githubHeaders(secret!, body)), 404, "not_found");
    expect(await stored(inbox)).toEqual([]);
  });

  it("a body over the inbox's limit is 413 before any check; a full inbox is 507 but a retry is still answered", async () => {
    const inbox = await claimInbox(undefined, { limits: { max_body_bytes: 1024, max_queue_messages: 1 } });
    const { source } = await addSource(inbox, { name: "stripe", kind: "stripe", secret: STRIPE_SECRET });
    const big = JSON.stringify({ id: "evt_big", pad: "x".repeat(2000) });
    await refused(await postToSource(pathOf(source.url), big, stripeHeaders(STRIPE_SECRET, big)), 413, "payload_too_large");
    const first = JSON.stringify({ id: "evt_a", type: "a" });
    expect((await postToSource(pathOf(source.url), first, stripeHeaders(STRIPE_SECRET, first))).status).toBe(200);
    const second = JSON.stringify({ id: "evt_b", type: "b" });
    await refused(await postToSource(pathOf(source.url), second, stripeHeaders(STRIPE_SECRET, second)), 507, "inbox_full");
    expect(await (await postToSource(pathOf(source.url), first, stripeHeaders(STRIPE_SECRET, first))).json()).toMatchObject({ duplicate: true });
  });
});
