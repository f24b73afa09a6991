// The one hub client's core and registry calls (protocol/hub-api-core.ts, hub-api-registry.ts), in
// workerd, the relay's runtime, with a fetch passed in that answers as a hub would: what a call sends
// (method, JSON, the bearer token), strict reading of answers (a duplicate key, bytes that are not
// UTF-8), one error type with a stable code per failure and no JWT in any message, the deadline — and
// its timer gone when the call ends, since a pending timer keeps a Durable Object awake — and what a
// key look-up and a token refresh make of each answer.
import { afterEach, describe, expect, it, vi } from "vitest";
import {
  HUB_ANSWER_MAX_BYTES,
  HUB_DEADLINE_MS,
  HUB_TOKEN_LIFETIME_MS,
  HubCallError,
  hubClient,
  hubDetail,
  hubJson,
  lookupHubKey,
  refreshHubToken,
  toBase64Url,
  utf8,
} from "../../protocol/index.ts";

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
}

/** A fetch that records what it was sent and answers with `answer` (a Response, or a function making one). */
function fakeHub(answer: Response | ((sent: Sent, signal: AbortSignal) => Promise<Response>)) {
  const sent: Sent[] = [];
  const fetch = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    const one = { url: String(input), method: init?.method ?? "GET", headers, body: typeof init?.body === "string" ? init.body : null };
    sent.push(one);
    return typeof answer === "function" ? answer(one, init!.signal!) : answer.clone();
  }) as typeof globalThis.fetch;
  return { sent, fetch };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json", ...headers } });
const JWT = `${toBase64Url(utf8('{"alg":"HS256"}'))}.${toBase64Url(utf8(JSON.stringify({ agent_id: "ag_ff73a0647bbc", exp: 2_000_000_000 })))}.c2lnbmF0dXJlLW9mLXRoZS1odWI`;
const signer = { keyId: "k_receipt", sign: async (message: Uint8Array) => message.slice(0, 64) };

function caught(run: () => Promise<unknown>): Promise<HubCallError> {
  return run().then(
    () => {
      throw new Error("the call did not fail");
    },
    (err: unknown) => {
      expect(err).toBeInstanceOf(HubCallError);
      return err as HubCallError;
    },
  );
}

afterEach(() => {
  vi.useRealTimers();
});

describe("a call", () => {
  it("sends the method, JSON and the bearer token to the hub's URL, and reads status, headers and body", async () => {
    const hub = fakeHub(json(201, { ok: true }, { Warning: '299 BotCord "deprecated"' }));
    const client = hubClient("https://hub.example/", { token: JWT, fetch: hub.fetch });
    const answer = await client.call("POST", "/registry/agents/ag_1/endpoints", { body: { url: "https://relay" } });
    expect(hub.sent).toEqual([{ url: "https://hub.example/registry/agents/ag_1/endpoints", method: "POST", headers: expect.objectContaining({ authorization: `Bearer ${JWT}`, "content-type": "application/json" }) as unknown, body: '{"url":"https://relay"}' }]);
    expect(answer).toMatchObject({ status: 201, body: { ok: true }, problem: null, headers: { warning: '299 BotCord "deprecated"' } });
    // A call's own token wins over the client's; a body kept as text goes out as it is.
    await client.call("POST", "/hub/receipt", { token: "other", bodyJson: '{"b":1 }' });
    expect(hub.sent[1]).toMatchObject({ headers: { authorization: "Bearer other" }, body: '{"b":1 }' });
  });

  it("reads answers strictly: a duplicate key or bytes that are not UTF-8 make a 2xx a hub_bad_answer", async () => {
    const duplicate = hubClient("https://hub", { fetch: fakeHub(new Response('{"message_policy":"open","message_policy":"contacts_only"}')).fetch });
    const dup = await caught(() => hubJson(duplicate, "GET", "/registry/agents/ag_1/policy"));
    expect(dup).toMatchObject({ code: "hub_bad_answer", status: 502, hubStatus: 502 });
    expect(dup.message).toContain('the key "message_policy" twice');
    const latin1 = hubClient("https://hub", { fetch: fakeHub(new Response(new Uint8Array([0x7b, 0x22, 0xe9, 0x22, 0x3a, 0x31, 0x7d]))).fetch });
    expect((await caught(() => hubJson(latin1, "GET", "/x"))).message).toBe("GET /x: the hub's answer has a body that is not UTF-8 text");
    const list = hubClient("https://hub", { fetch: fakeHub(json(200, [1])).fetch });
    expect((await caught(() => hubJson(list, "GET", "/x"))).message).toBe("GET /x: the hub's answer has JSON that is not an object");
  });

  it("a refusal is hub_unauthorized (401) or hub_refused, with the hub's words; the JWT it echoes is cut out", async () => {
    const echo = hubClient("https://hub", { token: JWT, fetch: fakeHub(json(401, { detail: `Invalid token ${JWT}` })).fetch });
    const refused = await caught(() => hubJson(echo, "GET", "/hub/history?limit=1"));
    expect(refused).toMatchObject({ code: "hub_unauthorized", hubStatus: 401, detail: "Invalid token <the JWT>" });
    expect(refused.message).toBe("hub refused GET /hub/history?limit=1: 401 Invalid token <the JWT>");
    const shapes: [Response, string][] = [
      [json(403, { error: { code: "NOT_IN_CONTACTS", message: "not a contact" } }), "NOT_IN_CONTACTS: not a contact"],
      [json(422, { detail: [{ loc: ["body"], msg: "field required" }] }), '[{"loc":["body"],"msg":"field required"}]'],
      [new Response("Bad Gateway", { status: 502 }), "Bad Gateway"],
      [new Response("", { status: 500 }), "no detail"],
    ];
    for (const [response, words] of shapes) {
      const error = await caught(() => hubJson(hubClient("https://hub", { fetch: fakeHub(response).fetch }), "POST", "/p"));
      expect([error.code, error.detail]).toEqual(["hub_refused", words]);
    }
  });

  it("no answer: hub_unreachable with hubStatus 0, naming the hub and the call, never the JWT", async () => {
    const down = hubClient("https://hub.example", { token: JWT, fetch: (async () => Promise.reject(new TypeError(`connect refused (${JWT})`))) as typeof fetch });
    const error = await caught(() => down.call("GET", "/hub/inbox"));
    expect(error).toMatchObject({ code: "hub_unreachable", hubStatus: 0, status: 502 });
    expect(error.message).toBe("cannot reach the hub at https://hub.example (GET /hub/inbox): connect refused (<the JWT>)");
  });

  it("gives up at the deadline, and leaves no timer behind after an answer (a pending one keeps a Durable Object awake)", async () => {
    vi.useFakeTimers();
    const silent = fakeHub((_sent, signal) => new Promise<Response>((_resolve, reject) => signal.addEventListener("abort", () => reject(signal.reason as Error))));
    const waiting = caught(() => hubClient("https://hub", { fetch: silent.fetch }).call("GET", "/hub/inbox"));
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(HUB_DEADLINE_MS);
    const error = await waiting;
    expect(error).toMatchObject({ code: "hub_unreachable", hubStatus: 0 });
    expect(error.message).toContain(`no answer within ${HUB_DEADLINE_MS / 1000} s`);

    await hubClient("https://hub", { fetch: fakeHub(json(200, {})).fetch, deadlineMs: 60_000 }).call("GET", "/x");
    await caught(() => hubJson(hubClient("https://hub", { fetch: fakeHub(json(404, {})).fetch }), "GET", "/x"));
    expect(vi.getTimerCount()).toBe(0);
  });
});

describe("hubDetail", () => {
  it("prefers FastAPI's detail, then the error object, then the text", () => {
    const answer = (body: Record<string, unknown>, text: string | null = JSON.stringify(body)) => ({ status: 400, headers: {}, text, body, problem: null });
    expect(hubDetail(answer({ detail: "Nonce already used", error: "x" }))).toBe("Nonce already used");
    expect(hubDetail(answer({ error: "INVALID_BIND_CODE" }))).toBe("INVALID_BIND_CODE");
    expect(hubDetail(answer({}, "x".repeat(400)))).toHaveLength(300);
  });
});

describe("key look-up", () => {
  const lookup = (response: Response) => lookupHubKey(hubClient("https://hub", { fetch: fakeHub(response).fetch }), "ag_ff73a0647bbc", "k_1");

  it("a record; null on 404; an owner the hub names is believed; an unknown state is revoked", async () => {
    const pubkey = "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=";
    expect(await lookup(json(200, { key_id: "k_1", pubkey, state: "active", created_at: "2026-01-01T00:00:00Z" }))).toEqual({ key_id: "k_1", agent_id: "ag_ff73a0647bbc", pubkey, state: "active" });
    expect(await lookup(json(404, { detail: "Key not found" }))).toBeNull();
    expect(await lookup(json(200, { key_id: "k_1", agent_id: "ag_000000000000", pubkey, state: "rotating" }))).toMatchObject({ agent_id: "ag_000000000000", state: "revoked" });
  });

  it("anything else is key_lookup_failed (the intake's 502: ask again later)", async () => {
    for (const [response, words] of [
      [json(500, { detail: "boom" }), "answered 500 without a usable key record for k_1"],
      [json(200, { key_id: "k_1" }), "answered 200 without a usable key record for k_1"],
      [new Response('{"key_id":"k_1","key_id":"k_2","pubkey":"p"}'), "answered 200 without a usable key record"],
    ] as const) {
      const error = await caught(() => lookup(response));
      expect([error.code, error.status]).toEqual(["key_lookup_failed", 502]);
      expect(error.message).toContain(words);
    }
    const down = await caught(() => lookupHubKey(hubClient("https://hub", { fetch: (async () => Promise.reject(new TypeError("fetch failed"))) as typeof fetch }), "ag_1", "k_9"));
    expect(down).toMatchObject({ code: "key_lookup_failed", hubStatus: 0, message: "could not reach the hub at https://hub to look up key k_9; retry later" });
  });
});

describe("token refresh", () => {
  const NOW_MS = Date.parse("2026-12-01T12:00:00Z");
  const refresh = (response: Response) => {
    const hub = fakeHub(response);
    return { hub, token: refreshHubToken(hubClient("https://hub", { fetch: hub.fetch }), "ag_ff73a0647bbc", signer, NOW_MS) };
  };

  it("signs a fresh 32-byte nonce with the key; expires_at in seconds, ms or ISO becomes expiresAtMs", async () => {
    const { hub, token } = refresh(json(200, { agent_token: JWT, expires_at: 1_800_000_000 }));
    expect(await token).toEqual({ token: JWT, expiresAtMs: 1_800_000_000_000 });
    const body = JSON.parse(hub.sent[0]!.body!) as { key_id: string; nonce: string; sig: string };
    expect(hub.sent[0]!.url).toBe("https://hub/registry/agents/ag_ff73a0647bbc/token/refresh");
    expect(body.key_id).toBe("k_receipt");
    expect(atob(body.nonce)).toHaveLength(32);
    expect(body.sig).toBe(body.nonce);
    expect(await refresh(json(200, { agent_token: JWT, expires_at: 1_800_000_000_000 })).token).toEqual({ token: JWT, expiresAtMs: 1_800_000_000_000 });
    expect(await refresh(json(200, { agent_token: JWT, expires_at: "2027-01-15T08:00:00.500Z" })).token).toEqual({ token: JWT, expiresAtMs: Date.parse("2027-01-15T08:00:00Z") });
  });

  it("regression: an answer without expires_at is held for the JWT's exp, else the hub's 24 h — not the relay's 1 h refresh margin, which made it refresh on every pull and log every other client out", async () => {
    expect((await refresh(json(200, { agent_token: JWT })).token).expiresAtMs).toBe(2_000_000_000_000);
    expect((await refresh(json(200, { agent_token: "opaque-token", expires_at: "soon" })).token).expiresAtMs).toBe(NOW_MS + HUB_TOKEN_LIFETIME_MS);
    // An expiry already past is no expiry to go by.
    expect((await refresh(json(200, { agent_token: "opaque-token", expires_at: NOW_MS / 1000 - 5 })).token).expiresAtMs).toBe(NOW_MS + HUB_TOKEN_LIFETIME_MS);
  });

  it("a refusal keeps the hub's status and words; an answer without a token is hub_bad_answer", async () => {
    expect(await caught(() => refresh(json(409, { detail: "Nonce already used" })).token)).toMatchObject({ code: "hub_refused", hubStatus: 409, detail: "Nonce already used" });
    expect(await caught(() => refresh(json(200, { expires_at: 1_800_000_000 })).token)).toMatchObject({ code: "hub_bad_answer", message: "the hub's answer to POST /registry/agents/ag_ff73a0647bbc/token/refresh carries no agent_token" });
  });
});

describe("an answer's bounds", () => {
  it("refuses a body past the cap as it streams, pulling no more of it once past, and one that declares a larger length unread", async () => {
    let pulled = 0;
    const endless = () =>
      new Response(new ReadableStream<Uint8Array>({ pull: (controller) => void (pulled++, controller.enqueue(new Uint8Array(64 * 1024))) }), { status: 200 });
    const client = hubClient("https://hub", { fetch: fakeHub(async () => endless()).fetch });
    const err = await caught(() => client.call("GET", "/hub/inbox", { maxBytes: 1024 * 1024 }));
    expect(err).toMatchObject({ code: "hub_answer_too_large", status: 502 });
    expect(err.message).toBe("GET /hub/inbox: the hub's answer is larger than the 1 MiB clawrelay reads of it; nothing of it was used");
    // 16 chunks fill the cap; the 17th passes it; the stream may have queued one more ahead of the reader.
    expect(pulled).toBeLessThanOrEqual(18);
    const declared = hubClient("https://hub", { fetch: fakeHub(new Response("{}", { headers: { "content-length": String(HUB_ANSWER_MAX_BYTES + 1) } })).fetch });
    expect((await caught(() => hubJson(declared, "GET", "/registry/agents/ag_1/policy"))).code).toBe("hub_answer_too_large");
  });

  it("never follows a redirect: a 3xx is a hub_redirected naming where it led, and the request asked fetch not to follow", async () => {
    const hub = fakeHub(new Response(null, { status: 302, headers: { location: "http://169.254.169.254/latest/meta-data/" } }));
    const asked: (string | undefined)[] = [];
    const fetch = ((input: RequestInfo | URL, init?: RequestInit) => (asked.push(init?.redirect), hub.fetch(input, init))) as typeof globalThis.fetch;
    const err = await caught(() => hubJson(hubClient("https://hub", { fetch }), "GET", "/hub/inbox"));
    expect(err).toMatchObject({ code: "hub_redirected", hubStatus: 302 });
    expect(err.message).toContain("the hub answered 302 to http://169.254.169.254; clawrelay follows no redirect from a hub");
    expect(asked).toEqual(["manual"]);
  });
});
