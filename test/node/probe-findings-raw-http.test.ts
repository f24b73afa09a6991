// The outside probe's findings that need a real socket (the relay bundled in Miniflare on a port):
// raw paths with dot segments, which fetch() and Request would resolve before sending, and a WebSocket
// upgrade without Sec-WebSocket-Key, which an in-process fetch fills in (the auth deadline as a remote
// client sees it is in auth-deadline.e2e.test.ts), and a forwarded request's headers as the runtime hands
// them over (sorted, repeats joined: what docs/forwarding.md says the app gets), and CONNECT, which the
// runtime answers before any of the relay's code could (docs/protocol.md, Conventions). Plus one property: whatever raw hook path arrives, a stored sub-path is
// canonical. The workerd-side findings are in test/worker/bad-input/probe-findings.test.ts.
import { request } from "node:http";
import { connect } from "node:net";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  agentIdFor, defaultKeyIdFor, formatPublicKey, generateSeed, publicKeyFromSeed, signWithSeed, signedRequestHeaders, toBase64, utf8,
} from "../../protocol/index.ts";
import { startRelay } from "../support/node/stack.ts";
import type { LocalRelay } from "../support/node/stack.ts";

// Fixed so a failure replays exactly: `fc.assert(…, { seed: SEED, path })` with the reported path.
const SEED = 0x5eed_0005;
const RAW_PATH_RUNS = 120;

interface RawAnswer {
  status: number;
  contentType: string;
  body: string;
}

let relay: LocalRelay;
beforeAll(async () => {
  relay = await startRelay();
});
afterAll(() => relay?.stop());

/** An HTTP request whose path goes on the wire exactly as given (no URL parsing, no dot resolution). */
function raw(method: string, path: string, headers: Record<string, string> | string[], body = ""): Promise<RawAnswer> {
  const length = ["content-length", String(Buffer.byteLength(body))];
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port: relay.port, method, path, headers: Array.isArray(headers) ? [...headers, ...length] : { ...headers, [length[0]!]: length[1]! } }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, contentType: String(res.headers["content-type"] ?? ""), body: Buffer.concat(chunks).toString() }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

interface Inbox {
  id: string;
  token: string;
  signed(method: string, path: string, body?: unknown): Promise<Response>;
}

async function claimInbox(): Promise<Inbox> {
  const seed = generateSeed();
  const publicKey = formatPublicKey(publicKeyFromSeed(seed));
  const id = await agentIdFor(publicKey);
  const signed = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const bytes = body === undefined ? new Uint8Array(0) : utf8(JSON.stringify(body));
    const headers = await signedRequestHeaders(publicKey, method, path, bytes, (m) => signWithSeed(seed, m));
    return fetch(relay.url + path, { method, headers: { ...headers, "content-type": "application/json" }, ...(body === undefined ? {} : { body: bytes }) });
  };
  const receipt = generateSeed();
  const res = await signed("PUT", `/inbox/${id}`, {
    keys: [{ key_id: await defaultKeyIdFor(publicKey), pubkey: publicKey }],
    receipt_key: { key_id: await defaultKeyIdFor(formatPublicKey(publicKeyFromSeed(receipt))), private_key: toBase64(receipt) },
    hub_url: "http://127.0.0.1:9",
  });
  const json = (await res.json()) as { webhook_token?: string };
  if (res.status !== 201 || !json.webhook_token) throw new Error(`claim failed: ${res.status} ${JSON.stringify(json)}`);
  return { id, token: json.webhook_token, signed };
}

/** The sub-paths of every stored message (the owner's queue API). */
async function storedSubpaths(inbox: Inbox): Promise<(string | null)[]> {
  const res = await inbox.signed("GET", `/inbox/${inbox.id}/queue?limit=200`);
  const body = (await res.json()) as { messages: { subpath: string | null }[] };
  return body.messages.map((m) => m.subpath);
}

const hook = (inbox: Inbox, tail: string) => raw("POST", `/inbox/${inbox.id}/hooks/${tail}`, { authorization: `Bearer ${inbox.token}`, "content-type": "application/json" }, '{"message":"x"}');

describe("finding a, over a real socket: raw dot segments in a hook sub-path", () => {
  // The runtime resolves plain (and %2e) dot segments before the Worker sees the URL, as the URL
  // standard says; what reaches the inbox is the resolved path, so a stored sub-path never holds a dot
  // segment and stays below /hooks/. (Encoded slashes, which would survive resolution, are refused.)
  it.each([
    ["a/../b", "b"],
    ["./a", "a"],
    ["a/./b", "a/b"],
    ["a/%2e%2e/b", "b"],
    ["../hooks/a", "a"],
  ])("POST hooks/%s (sent raw) is stored, if at all, as the resolved canonical sub-path %s", async (tail, resolved) => {
    const inbox = await claimInbox();
    const answer = await hook(inbox, tail);
    expect(answer.status, answer.body.slice(0, 200)).toBe(202);
    expect(await storedSubpaths(inbox)).toEqual([resolved]);
  });

  // These climb out of the inbox's own path: any 4xx will do, as long as nothing is stored.
  it.each(["../../v1/chat/completions", ".."])("POST hooks/%s (sent raw) is refused with a JSON 4xx and stores nothing", async (tail) => {
    const inbox = await claimInbox();
    const answer = await hook(inbox, tail);
    expect(answer.status, answer.body.slice(0, 200)).toBeGreaterThanOrEqual(400);
    expect(answer.status, answer.body.slice(0, 200)).toBeLessThan(500);
    expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toMatch(/^[a-z_]+$/);
    expect(await storedSubpaths(inbox)).toEqual([]);
  });
});

describe("finding f: a WebSocket upgrade without Sec-WebSocket-Key", () => {
  it("GET /inbox/{id}/connect with Upgrade: websocket and no key is answered with a JSON error body", async () => {
    const inbox = await claimInbox();
    const answer = await raw("GET", `/inbox/${inbox.id}/connect`, { upgrade: "websocket", connection: "Upgrade", "sec-websocket-version": "13" });
    expect(answer.status).toBeGreaterThanOrEqual(400);
    expect(answer.contentType).toContain("application/json");
    const body = JSON.parse(answer.body) as { error?: { code?: string; message?: string } };
    expect(body.error?.code).toMatch(/^[a-z][a-z0-9]*(?:_[a-z0-9]+)*$/);
    expect(typeof body.error?.message).toBe("string");
  });
});

const SEGMENT = fc.constantFrom("a", "agentgram_inbox", "wake", ".", "..", "%2e", "%2E%2e", ".%2e", "", "%2F", "%5C", "%00", "%ZZ", "%", "a%2", "%C0%AF", "%FF", "~", "a.b", "..a", "%41", "\\", ";x", "a?b=1", "#f");

describe("raw hook paths, generated", () => {
  it("never 5xx, errors in the one JSON shape, and every stored sub-path is canonical", { timeout: 60_000 }, async () => {
    const inbox = await claimInbox();
    let stored = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(SEGMENT, { minLength: 1, maxLength: 5 }), async (segments) => {
        const answer = await hook(inbox, segments.join("/"));
        expect(answer.status === 502 || answer.status === 504 || answer.status < 500, `${answer.status} ${answer.body.slice(0, 200)}`).toBe(true);
        if (answer.status >= 400) expect((JSON.parse(answer.body) as { error: { code: string } }).error.code).toMatch(/^[a-z_]+$/);
        if (answer.status === 202) stored++;
        const subpaths = await storedSubpaths(inbox);
        expect(subpaths).toHaveLength(stored);
        for (const subpath of subpaths) {
          const parts = (subpath ?? "").split("/");
          expect(parts.every((p) => /^[A-Za-z0-9._~-]+$/.test(p) && p !== "." && p !== ".."), `stored sub-path ${subpath} from ${segments.join("/")}`).toBe(true);
        }
      }),
      { seed: SEED, numRuns: RAW_PATH_RUNS },
    );
  });
});

describe("the sender's headers as a forward target gets them (docs/forwarding.md, 'What the app receives')", () => {
  it("are kept sorted by name, lower-cased, a repeated name's values joined with ', ' in the order sent (the runtime's Headers do this before the Worker reads them), then the relay's own", async () => {
    const inbox = await claimInbox();
    const added = await inbox.signed("POST", `/inbox/${inbox.id}/sources`, { name: "app", kind: "token", forward: "http://127.0.0.1:3000" });
    expect(added.status).toBe(201);
    const path = new URL(((await added.json()) as { post_url: string }).post_url).pathname;
    const sent = ["Host", `127.0.0.1:${relay.port}`, "X-Zeta", "1", "Content-Type", "application/json", "X-Multi", "first", "x-alpha", "2", "X-MULTI", "second"];
    const posted = await raw("POST", path, sent, "{}");
    expect(posted.status, posted.body).toBe(200);
    const polled = (await (await inbox.signed("GET", `/inbox/${inbox.id}/messages?ack=false`)).json()) as { messages: { forward?: { headers: [string, string][] } }[] };
    expect(polled.messages[0]!.forward!.headers.filter(([name]) => name !== "host")).toEqual([
      ["content-type", "application/json"],
      ["x-alpha", "2"],
      ["x-multi", "first, second"],
      ["x-zeta", "1"],
      ["x-clawrelay-source", "app"],
    ]);
  });
});

/** The bytes a server answers to `text` sent as is, up to its close. */
function rawExchange(text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(relay.port, "127.0.0.1", () => socket.write(text));
    const chunks: Buffer[] = [];
    socket.on("data", (chunk: Buffer) => chunks.push(chunk));
    socket.on("end", () => resolve(Buffer.concat(chunks).toString()));
    socket.on("error", reject);
  });
}

describe("the probe's finding 12: CONNECT", () => {
  it("never reaches the relay's code: the runtime answers it (docs/protocol.md, Conventions), nothing is stored, and the relay answers the next request", async () => {
    const inbox = await claimInbox();
    for (const path of ["/healthz", `/inbox/${inbox.id}/hooks/agent`, "example.com:443"]) {
      const answer = await rawExchange(`CONNECT ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n`);
      // Miniflare's entry Worker has no connect() handler; the relay's one-shape JSON is never made for it.
      expect(answer, path).toMatch(/^HTTP\/1\.1 500 /);
      expect(answer).not.toContain('"error"');
    }
    relay.takeLogs(/connect\(\) function|connect event/);
    expect(await storedSubpaths(inbox)).toEqual([]);
    expect((await fetch(`${relay.url}/healthz`)).status).toBe(200);
  });
});
