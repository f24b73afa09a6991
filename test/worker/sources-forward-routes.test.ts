// A token source's URL with a tail (`…/sources/{name}/{secret}/any/path?and=query`, kept with the event
// as sent) and the methods a source URL takes: POST always, PUT/PATCH/DELETE with a forward target, GET
// and HEAD never (the relay answers at once). Bad tails (400 invalid_path, 414 uri_too_long) and headers
// beyond what a forwarded request keeps (431) store nothing and are noted as the source's last refusal.
import { describe, expect, it } from "vitest";
import { FORWARD_TAIL_MAX_LENGTH } from "../../protocol/index.ts";
import { claimInbox, poll, relayFetch } from "../support/workerd/agents.ts";
import type { ClaimedInbox } from "../support/workerd/agents.ts";
import { addSource, lastRefusal, pathOf, postToSource, refusal, storedRequests } from "../support/workerd/sources.ts";
import { loggablePath } from "../../worker/http-errors.ts";
import { checkTail, requestTail } from "../../worker/sources/source-request.ts";

const TARGET = "http://127.0.0.1:3000";

/** A token source (forwarding to TARGET unless `forward` is null) and the path of its URL, secret included. */
async function tokenSource(inbox: ClaimedInbox, forward: string | null = TARGET, name = "listen-3000"): Promise<string> {
  const added = await addSource(inbox, { name, kind: "token", forward });
  return pathOf(added.post_url);
}

describe("token tails", () => {
  it("keeps the sub-path and query after the secret as sent, and a bare query; the frame's forward carries it", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    for (const tail of ["/stripe/events?x=1", "?x=1", "", "/a%20b/c?q=%2F&r", "/deep/er/still/"]) {
      const res = await postToSource(`${path}${tail}`, `{"tail":${JSON.stringify(tail)}}`, { "content-type": "application/json" });
      expect(res.status, tail).toBe(200);
    }
    expect((await storedRequests(inbox)).map((r) => r.tail)).toEqual(["/stripe/events?x=1", "?x=1", "", "/a%20b/c?q=%2F&r", "/deep/er/still/"]);
    const frames = (await poll(inbox.agent)).messages;
    expect(frames.map((f) => [f.forward?.tail, f.forward?.target])).toEqual([
      ["/stripe/events?x=1", "http://127.0.0.1:3000/"],
      ["?x=1", "http://127.0.0.1:3000/"],
      ["", "http://127.0.0.1:3000/"],
      ["/a%20b/c?q=%2F&r", "http://127.0.0.1:3000/"],
      ["/deep/er/still/", "http://127.0.0.1:3000/"],
    ]);
  });

  it("reads the tail from the raw URL, after the secret's own segment", () => {
    expect(requestTail("https://relay.test/inbox/ag_0123456789ab/sources/hook/s3cr3t/stripe/events?x=1")).toBe("/stripe/events?x=1");
    expect(requestTail("https://relay.test/inbox/ag_0123456789ab/sources/hook/s3cr3t?x=1")).toBe("?x=1");
    expect(requestTail("https://relay.test/inbox/ag_0123456789ab/sources/hook/s3cr3t")).toBe("");
    expect(requestTail("https://relay.test/inbox/ag_0123456789ab/sources/hook/s%2F3/a")).toBe("/a");
  });

  it("refuses a tail that would leave the target's path (400 invalid_path) or is too long (414 uri_too_long), storing nothing", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    for (const tail of ["/a%2Fb", "/a%2f..%2fb", "/x%5Cy"]) {
      const { message } = await refusal(await postToSource(`${path}${tail}`, "{}", {}), 400, "invalid_path");
      expect(message).toMatch(/encoded "\/"/);
    }
    expect(await lastRefusal(inbox, "listen-3000")).toBe("invalid_path");
    const { message } = await refusal(await postToSource(`${path}/${"a".repeat(FORWARD_TAIL_MAX_LENGTH)}`, "{}", {}), 414, "uri_too_long");
    expect(message).toContain(String(FORWARD_TAIL_MAX_LENGTH));
    expect(await storedRequests(inbox)).toEqual([]);
    // Dot segments never reach the relay over HTTP (the URL is resolved first); the check refuses them all the same.
    expect(() => checkTail("/a/../b")).toThrow(expect.objectContaining({ code: "invalid_path", status: 400 }));
    expect(() => checkTail("/a/%2e%2E/b")).toThrow(expect.objectContaining({ code: "invalid_path" }));
    expect(() => checkTail("/a/b?c=../d")).not.toThrow();
  });

  it("a tail on a signing kind is still 404, and the secret and the tail stay out of logged paths", async () => {
    const inbox = await claimInbox();
    const { source } = await addSource(inbox, { name: "gh", kind: "github", forward: TARGET });
    await refusal(await postToSource(`${pathOf(source.url)}/extra/path?x=1`, "{}", {}), 404, "not_found");
    expect(loggablePath("/inbox/ag_0123456789ab/sources/hook/s3cr3t/stripe/events")).toBe("/inbox/ag_0123456789ab/sources/hook/…");
    const path = await tokenSource(inbox);
    const secret = path.split("/")[5]!;
    const { message } = await refusal(await relayFetch(`${path}/stripe/events?x=1`, { method: "GET" }), 405, "method_not_allowed");
    expect(message).not.toContain(secret);
    expect(message).not.toContain("stripe/events");
  });
});

describe("methods", () => {
  it("PUT, PATCH and DELETE reach a source with a target and are kept with their method", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    for (const method of ["PUT", "PATCH", "DELETE", "POST"]) {
      const res = await relayFetch(`${path}/items/7`, { method, headers: { "content-type": "application/json" }, body: `{"m":"${method}"}` });
      expect(res.status, method).toBe(200);
    }
    expect((await storedRequests(inbox)).map((r) => [r.method, r.tail])).toEqual([["PUT", "/items/7"], ["PATCH", "/items/7"], ["DELETE", "/items/7"], ["POST", "/items/7"]]);
    expect((await poll(inbox.agent)).messages.map((f) => f.forward?.method)).toEqual(["PUT", "PATCH", "DELETE", "POST"]);
  });

  it("PUT to a source without a target is 405 with Allow: POST, saying how to set one; nothing stored; a wrong secret is 401 first", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox, null, "plain");
    const { message, allow } = await refusal(await relayFetch(`${path}/x`, { method: "PUT", body: "{}" }), 405, "method_not_allowed");
    expect(allow).toBe("POST");
    expect(message).toMatch(/gateway.*POST.*clawrelay sources set plain --forward URL/);
    expect(await lastRefusal(inbox, "plain")).toBe("method_not_allowed");
    await refusal(await relayFetch(`${path.slice(0, -2)}xx/x`, { method: "PUT", body: "{}" }), 401, "invalid_source_secret");
    expect(await storedRequests(inbox)).toEqual([]);
  });

  it("GET and HEAD on a source URL are 405 with Allow, saying the relay answers at once and forwards only requests with an event", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    const get = await refusal(await relayFetch(`${path}/status?x=1`), 405, "method_not_allowed");
    expect(get.allow).toBe("POST, PUT, PATCH, DELETE");
    expect(get.message).toMatch(/answers a source's sender at once and delivers the event later.*only requests that carry an event/);
    const head = await relayFetch(path, { method: "HEAD" });
    expect(head.status).toBe(405);
    expect(head.headers.get("allow")).toBe("POST, PUT, PATCH, DELETE");
    const signing = await refusal(await relayFetch(`/inbox/${inbox.agent.id}/sources/gh`), 405, "method_not_allowed");
    expect(signing.allow).toBe("POST, PATCH, DELETE");
    expect(signing.message).toMatch(/delivers the event later/);
    // Other 405s say no more than before.
    const other = await refusal(await relayFetch(`/inbox/${inbox.agent.id}/envelopes`, { method: "GET" }), 405, "method_not_allowed");
    expect(other.message).not.toMatch(/delivers the event later/);
    expect(await storedRequests(inbox)).toEqual([]);
  });
});

describe("headers", () => {
  it("more headers than a forwarded request keeps (count or bytes) is 431 headers_too_large; nothing stored, refusal noted", async () => {
    const inbox = await claimInbox();
    const path = await tokenSource(inbox);
    const many = Object.fromEntries(Array.from({ length: 70 }, (_, i) => [`x-h${i}`, "v"]));
    const { message } = await refusal(await postToSource(path, "{}", many), 431, "headers_too_large");
    expect(message).toMatch(/at most 64 headers/);
    const big = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`x-big${i}`, "b".repeat(1000)]));
    await refusal(await postToSource(path, "{}", big), 431, "headers_too_large");
    expect(await lastRefusal(inbox, "listen-3000")).toBe("headers_too_large");
    expect(await storedRequests(inbox)).toEqual([]);
    // Within both limits it is kept, every header as sent.
    const fine = Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`x-ok${i}`, "c".repeat(1000)]));
    expect((await postToSource(path, "{}", fine)).status).toBe(200);
    const [kept] = await storedRequests(inbox);
    expect(kept!.headers.filter(([name]) => name.startsWith("x-ok"))).toHaveLength(10);
  });
});
