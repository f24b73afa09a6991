// Every route of the relay under generated bad requests: odd methods, paths, headers and bodies. The
// answer is never a 5xx other than a gateway's 502/504, every JSON error has the one shape, and
// nothing is stored — in the claimed inbox or the directory — unless the request was a valid one.
// Paths near the routes asked with each method: a 405 names exactly the methods the path is routed for.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { signedRequestHeaders, toBase64, utf8 } from "../../../protocol/index.ts";
import { claimInbox, relayFetch } from "../../support/workerd/agents.ts";
import type { ClaimedInbox, TestAgent } from "../../support/workerd/agents.ts";
import {
  anyBody, anyJsonText, badBase64, configText, directoryCardCount, expectWellFormedAnswer, headerValue, malformedJsonText, pathSegment, settings, storedCount,
  withFieldText, wrongTyped,
} from "./arbitraries.ts";

// Fixed so every run is the same; replay a failure with `{ ...settings(SEED, RUNS), path: "<reported path>" }`.
const SEED = 0x5eed_0002;
const ROUTE_RUNS = 1500;
const SIGNED_RUNS = 150;

const METHODS = ["GET", "HEAD", "PUT", "POST", "DELETE", "PATCH", "OPTIONS", "PROPFIND", "get"];

type Route = readonly [method: string, path: (id: string, n: string, sub: string) => string];

/** The documented routes with generated holes, and paths that are no route. */
const ROUTES: readonly Route[] = [
  ["GET", () => "/healthz"],
  ["PUT", (id) => `/inbox/${id}`],
  ["POST", (id, _n, sub) => `/inbox/${id}/hooks/${sub}`],
  ["POST", (id) => `/inbox/${id}/hooks`],
  ["POST", (id) => `/inbox/${id}/envelopes`],
  ["GET", (id) => `/inbox/${id}/connect`],
  ["GET", (id, n, sub) => `/inbox/${id}/messages?after=${n}&limit=${n}&timeout=0&ack=${sub}`],
  ["GET", (id, n, sub) => `/inbox/${id}/queue?state=${sub}&after=${n}`],
  ["GET", (id, n) => `/inbox/${id}/queue/${n}`],
  ["DELETE", (id, n) => `/inbox/${id}/queue/${n}`],
  ["POST", (id, n) => `/inbox/${id}/queue/${n}/replay`],
  ["GET", (id, n) => `/inbox/${id}/outbox?before=${n}&limit=${n}`],
  ["POST", (id) => `/inbox/${id}/outbox`],
  ["POST", (id, _n, sub) => `/inbox/${id}/outbox/${sub}/outcome`],
  ["PUT", (id) => `/inbox/${id}/outbox/settings`],
  ["PUT", (_id, _n, sub) => `/directory/agents/${sub}`],
  ["GET", (_id, _n, sub) => `/directory/agents/${sub}`],
  ["DELETE", (_id, _n, sub) => `/directory/agents/${sub}`],
  ["POST", () => "/directory/search"],
  ["GET", (_id, _n, sub) => `/${sub}`],
  ["POST", (id, _n, sub) => `/inbox/${id}/${sub}`],
  ["GET", (_id, _n, sub) => `/directory/${sub}`],
];

interface BadRequest {
  method: string;
  path: string;
  headers: [string, string][];
  body: string | Uint8Array;
}

/** Mostly the route's own method with the claimed inbox's id and token, so requests get past routing. */
function badRequest(inbox: ClaimedInbox): fc.Arbitrary<BadRequest> {
  const id = fc.oneof({ weight: 4, arbitrary: fc.constant(inbox.agent.id) }, fc.constantFrom("ag_0123456789ab", "AG_0123456789AB", "ag_", ""), pathSegment);
  const n = fc.oneof(fc.constantFrom("1", "0", "-1", "01", "1e3", "0x10", "9007199254740993", "99999999999999999999", "NaN", " 1"), pathSegment);
  const sub = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom("agentgram_inbox/agent", "wake", "bad-input-bot", "..%2F..%2Fv1%2Fchat%2Fcompletions", "a%2Fb", "%2e%2e/x", "true", "dead") },
    fc.array(pathSegment, { minLength: 1, maxLength: 4 }).map((s) => s.join("/")),
  );
  const request = fc.record({ route: fc.constantFrom(...ROUTES), other: fc.constantFrom(...METHODS), own: fc.nat(3).map((k) => k > 0), id, n, sub });
  const token = fc.oneof({ weight: 3, arbitrary: fc.constantFrom(`Bearer ${inbox.token}`, `bearer  ${inbox.token} `) }, headerValue);
  const header = fc.oneof(
    { weight: 3, arbitrary: fc.tuple(fc.constant("authorization"), token) },
    fc.tuple(fc.constantFrom("x-openclaw-token", "x-clawrelay-key", "x-clawrelay-timestamp", "x-clawrelay-nonce", "x-clawrelay-signature", "content-type", "upgrade", "sec-websocket-key", "connection", "x-forwarded-for"), headerValue),
    fc.tuple(fc.constant("x-clawrelay-key"), fc.constantFrom(inbox.agent.publicKey, `ed25519:${toBase64(new Uint8Array(32))}`)),
    fc.tuple(fc.constant("upgrade"), fc.constant("websocket")),
    fc.tuple(fc.stringMatching(/^[a-z][a-z0-9-]{0,15}$/), headerValue),
  );
  // All four signed-request headers at once, each right or garbage, so checks past "missing" are reached.
  const signatureSet = fc
    .record({
      key: fc.oneof(fc.constant(inbox.agent.publicKey), headerValue),
      now: fc.boolean(),
      timestamp: headerValue,
      nonce: fc.oneof(fc.constant("0123456789abcdef0123456789abcdef"), headerValue),
      signature: fc.oneof(fc.constant(toBase64(new Uint8Array(64))), badBase64.filter((b) => /^[\x20-\x7e]*$/.test(b)), headerValue),
    })
    .map((h): [string, string][] => [
      ["x-clawrelay-key", h.key],
      // The clock is read when the run happens: a replay gets a fresh, still valid, timestamp.
      ["x-clawrelay-timestamp", h.now ? String(Math.floor(Date.now() / 1000)) : h.timestamp],
      ["x-clawrelay-nonce", h.nonce],
      ["x-clawrelay-signature", h.signature],
    ]);
  return fc
    .record({ request, signed: fc.option(signatureSet), headers: fc.array(header, { maxLength: 6 }), body: anyBody })
    .map(({ request: r, signed, headers, body }) => ({
      method: r.own ? r.route[0] : r.other,
      path: r.route[1](r.id, r.n, r.sub),
      headers: [...(signed ?? []), ...headers],
      body,
    }));
}

function send(request: BadRequest): Promise<Response> {
  const bodyless = request.method.toUpperCase() === "GET" || request.method.toUpperCase() === "HEAD";
  return relayFetch(request.path, { method: request.method, headers: request.headers, ...(bodyless ? {} : { body: request.body }) });
}

/** A request signed by `agent` over exactly these bytes, as a client with a buggy serialiser sends it. */
async function signedRaw(agent: TestAgent, method: string, path: string, body: string): Promise<Response> {
  const bytes = utf8(body);
  const headers = await signedRequestHeaders(agent.publicKey, method, path, bytes, (m) => agent.sign(m));
  return relayFetch(path, { method, headers: { ...headers, "content-type": "application/json" }, body: bytes });
}

describe("every route under generated bad requests", () => {
  it("never answers 5xx (but 502/504), answers JSON errors in the one shape, stores only what was valid", { timeout: 120_000 }, async () => {
    const inbox = await claimInbox();
    let stored = 0;
    const cards = await directoryCardCount();
    await fc.assert(
      fc.asyncProperty(badRequest(inbox), async (request) => {
        const res = await send(request);
        await expectWellFormedAnswer(res, `${request.method} ${request.path.slice(0, 200)}`, request.method);
        // Only a valid request is answered 202 and stored (here: a hook with the right token and a plain sub-path).
        if (res.status === 202) stored++;
        expect(await storedCount(inbox.agent.id)).toBe(stored);
        expect(await directoryCardCount()).toBe(cards);
      }),
      settings(SEED, ROUTE_RUNS),
    );
  });

  it("the generator reaches refusals and acceptance: a garbage body to the hooks is stored, one to envelopes is not", async () => {
    const inbox = await claimInbox();
    const hook = await send({ method: "POST", path: `/inbox/${inbox.agent.id}/hooks/wake`, headers: [["authorization", `Bearer ${inbox.token}`]], body: "{" });
    expect(hook.status).toBe(202);
    await hook.text();
    const envelope = await send({ method: "POST", path: `/inbox/${inbox.agent.id}/envelopes`, headers: [], body: "{" });
    expect(envelope.status).toBe(400);
    await envelope.text();
    expect(await storedCount(inbox.agent.id)).toBe(1);
  });
});

/** The methods the routers take; HEAD is answered as GET by Hono, so it is left out. */
const ROUTED_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"] as const;
const ALLOW_RUNS = 300;

/** Paths near the routes: each route's shape with generated holes, one segment more or less, a trailing slash. */
function nearRoutePath(inbox: ClaimedInbox): fc.Arbitrary<string> {
  const segment = fc.oneof({ weight: 3, arbitrary: fc.constantFrom("1", "github", "x", "token", "pull", "replay", "hooks", "queue", "sources", "hub", "agents", "search", "live", "a2a", "v1") }, pathSegment.filter((s) => s.length < 40));
  const id = fc.oneof({ weight: 3, arbitrary: fc.constant(inbox.agent.id) }, fc.constantFrom("ag_0123456789ab", "not-an-agent"));
  const known = fc.constantFrom(
    "/healthz", "/inbox/{id}", "/inbox/{id}/hooks", "/inbox/{id}/hooks/{s}", "/inbox/{id}/hooks/{s}/{s}", "/inbox/{id}/envelopes", "/inbox/{id}/connect",
    "/inbox/{id}/messages", "/inbox/{id}/queue", "/inbox/{id}/queue/{s}", "/inbox/{id}/queue/{s}/replay", "/inbox/{id}/hub", "/inbox/{id}/hub/token",
    "/inbox/{id}/hub/pull", "/inbox/{id}/sources", "/inbox/{id}/sources/{s}", "/inbox/{id}/sources/{s}/{s}", "/directory/agents/{s}", "/directory/search",
    "/inbox/{id}/live", "/inbox/{id}/a2a", "/inbox/{id}/a2a/v1", "/inbox/{id}/.well-known/agent-card.json", "/inbox/{id}/.well-known/agent.json",
  );
  return fc
    .record({ template: known, id, holes: fc.array(segment, { minLength: 3, maxLength: 3 }), extra: fc.option(segment), slash: fc.boolean(), cut: fc.boolean() })
    .map(({ template, id: agentId, holes, extra, slash, cut }) => {
      let k = 0;
      let path = template.replace("{id}", agentId).replace(/\{s\}/g, () => holes[k++]!);
      if (cut) path = path.slice(0, path.lastIndexOf("/")) || "/";
      if (extra !== null) path += `/${extra}`;
      return slash ? `${path}/` : path;
    });
}

/** What the router made of a method on a path: the 405's Allow, "unrouted" (its own 404), or "routed". */
async function routing(path: string, method: string): Promise<string[] | "unrouted" | "routed"> {
  const res = await relayFetch(path, { method });
  const text = await expectWellFormedAnswer(res, `${method} ${path.slice(0, 200)}`, method);
  if (res.status === 405) return (res.headers.get("allow") ?? "").split(", ");
  const error = res.status === 404 ? (JSON.parse(text) as { error: { code: string; message: string } }).error : null;
  return error?.code === "not_found" && error.message.startsWith("no route for") ? "unrouted" : "routed";
}

describe("the 405 and the routers agree", () => {
  it("on generated paths, a 405's Allow names exactly the methods the path is routed for, and a routed path is never answered with the router's own 404", { timeout: 120_000 }, async () => {
    const inbox = await claimInbox();
    let answered405 = 0;
    await fc.assert(
      fc.asyncProperty(nearRoutePath(inbox), async (path) => {
        const seen = new Map<string, string[] | "unrouted" | "routed">();
        for (const method of ROUTED_METHODS) seen.set(method, await routing(path, method));
        const routed = ROUTED_METHODS.filter((m) => seen.get(m) === "routed");
        for (const method of ROUTED_METHODS) {
          const what = seen.get(method)!;
          if (Array.isArray(what)) {
            answered405++;
            expect(what, `Allow of ${method} ${path}`).toEqual(routed);
          } else if (what === "unrouted") {
            expect(routed, `${method} ${path} is the router's 404 though the path takes ${routed.join(", ")}`).toEqual([]);
          }
        }
      }),
      settings(SEED, ALLOW_RUNS),
    );
    // The generator reaches the 405 often, not by luck: a 405 for most paths (fewer than one a path since a
    // token source's URL takes every method, GET and HEAD for live sources).
    expect(answered405).toBeGreaterThan(ALLOW_RUNS * 0.75);
    expect(await storedCount(inbox.agent.id)).toBe(0);
  });
});

const CLAIM_FIELDS: [string, fc.Arbitrary<unknown>][] = [
  ["keys", wrongTyped("array")],
  ["receipt_key", wrongTyped("object")],
  ["hub_url", wrongTyped("string")],
  ["policy", wrongTyped("object")],
  ["rate_per_minute", wrongTyped("integer")],
  ["limits", wrongTyped("object")],
  ["rotate_webhook_token", wrongTyped("boolean")],
];

describe("signed requests with bodies of the wrong types", () => {
  it("a claim signed by the root key with a wrong-typed field or broken JSON is refused and changes nothing", { timeout: 60_000 }, async () => {
    const inbox = await claimInbox();
    const path = `/inbox/${inbox.agent.id}`;
    const wrongField = fc.oneof(...CLAIM_FIELDS.map(([field, value]) => value.map((v) => withFieldText({ rate_per_minute: 30 }, field, JSON.stringify(v)))));
    const keyEntry = fc.tuple(fc.constantFrom("key_id", "pubkey", "state"), fc.oneof(badBase64.map((b) => JSON.stringify(b)), anyJsonText)).map(([field, text]) =>
      `{"keys":[${withFieldText({ key_id: inbox.agent.keyId, pubkey: inbox.agent.publicKey }, field, text)}]}`,
    );
    const receiptKey = fc.tuple(fc.constantFrom("key_id", "private_key"), fc.oneof(badBase64.map((b) => JSON.stringify(b)), anyJsonText)).map(([field, text]) =>
      `{"receipt_key":${withFieldText({ key_id: inbox.agent.receiptKeyId, private_key: toBase64(inbox.agent.receiptSeed) }, field, text)}}`,
    );
    await fc.assert(
      fc.asyncProperty(fc.oneof(wrongField, keyEntry, receiptKey, malformedJsonText), async (body) => {
        const config = await configText(inbox.agent.id);
        const res = await signedRaw(inbox.agent, "PUT", path, body);
        await expectWellFormedAnswer(res, `claim ${body.slice(0, 200)}`);
        // A generated value may happen to be valid (a key entry's state "revoked"): only refusals must change nothing.
        if (res.status >= 400) {
          expect(res.status).toBeLessThan(500);
          expect(await configText(inbox.agent.id)).toBe(config);
        }
        expect(await storedCount(inbox.agent.id)).toBe(0);
      }),
      settings(SEED, SIGNED_RUNS),
    );
  });

  it("a card signed by its agent with a wrong-typed field or broken JSON is refused and the directory is unchanged", { timeout: 60_000 }, async () => {
    const { agent } = await claimInbox();
    const card = { agent_id: agent.id, description: "d", skills: [{ id: "s", name: "S", description: "", tags: [], examples: [] }] };
    const fields: [string, fc.Arbitrary<unknown>][] = [["agent_id", wrongTyped("string")], ["description", wrongTyped("string")], ["skills", wrongTyped("array")], ["name", wrongTyped("string")]];
    const wrongCard = fc.oneof(...fields.map(([field, value]) => value.map((v) => withFieldText(card, field, JSON.stringify(v)))));
    const wrongSkill = fc.tuple(fc.constantFrom("id", "name", "description", "tags", "examples"), anyJsonText).map(([field, text]) =>
      withFieldText({ agent_id: agent.id }, "skills", `[${withFieldText(card.skills[0]!, field, text)}]`),
    );
    const name = fc.oneof(fc.constant("bad-input-bot"), pathSegment);
    await fc.assert(
      fc.asyncProperty(fc.oneof(wrongCard, wrongSkill, malformedJsonText), name, async (body, cardName) => {
        const cards = await directoryCardCount();
        const res = await signedRaw(agent, "PUT", `/directory/agents/${cardName}`, body);
        await expectWellFormedAnswer(res, `card ${cardName.slice(0, 40)} ${body.slice(0, 200)}`);
        // A generated value may happen to be valid (tags: []): only refusals must change nothing.
        if (res.status >= 400) expect(await directoryCardCount()).toBe(cards);
      }),
      settings(SEED, SIGNED_RUNS),
    );
  });
});
