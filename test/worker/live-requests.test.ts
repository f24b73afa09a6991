// Live requests answered: the live feature negotiated on the socket, a request to a live source sent down
// as a `request` frame (the sender's headers filtered; its credentials kept for an app, left out for the
// gateway) and the app's answer returned to the sender (status, headers without hop-by-hop ones and
// cookies, the sandboxing CSP, the body; in chunks too), never stored; an answer past the cap is 502 and
// the socket stays open; GET with a query and HEAD; live_sec on a source.
import { afterEach, describe, expect, it } from "vitest";
import { ANSWER_CSP, CLOSE_CODES, LIVE } from "../../protocol/index.ts";
import type { SourceView } from "../../protocol/index.ts";
import { claimInbox, signedFetch } from "../support/workerd/agents.ts";
import { APP, answer, liveAgent, liveSource, nextRequest, refusedWith, sendTo, storedCount } from "../support/workerd/live.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";

afterEach(closeAllSockets);

const CREDENTIALS = { authorization: "Bearer sk_live_live0123456789", cookie: "session=live-c0ffee", "x-api-key": "key-live-9876" };

describe("negotiation", () => {
  it("an agent naming live is told live back (with lanes when it names both); one naming neither is told neither", async () => {
    const inbox = await claimInbox();
    const both = await liveAgent(inbox, ["lanes", "live", "future-thing"]);
    both.close();
    const older = await connect(inbox.agent.id);
    const ready = await older.auth(inbox.agent);
    expect(ready.features).toBeUndefined();
  });

  it("an answer frame from a socket that did not name live is a bad frame: the socket is closed, as before live existed", async () => {
    const inbox = await claimInbox();
    const older = await connect(inbox.agent.id);
    await older.auth(inbox.agent, { features: ["lanes"] });
    older.send({ type: "answer", rid: "abcdefgh1234", status: 200, headers: [], body: "x", encoding: "utf8" });
    expect(await older.next("error")).toMatchObject({ code: "bad_frame" });
    expect((await older.closeEvent()).code).toBe(CLOSE_CODES.badFrame);
  });
});

describe("answered", () => {
  it("a POST goes down with its tail, filtered headers and body; the app's status, headers (no cookies, no hop-by-hop) and body come back with the CSP; nothing is stored", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/slash?team=T1`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", "x-forwarded-for": "10.0.0.1", "x-custom": "kept", connection: "x-dropme", "x-dropme": "1", ...CREDENTIALS },
      body: "command=%2Fweather",
    });
    const request = await nextRequest(agent);
    expect(request).toMatchObject({ to: "app", method: "POST", tail: "/slash?team=T1", body: "command=%2Fweather", encoding: "utf8", deadline_ms: 10_000, source: "app", target: APP, allow_public: false });
    const names = request.headers.map(([name]) => name);
    expect(names).toContain("x-custom");
    expect(names).not.toContain("x-forwarded-for");
    expect(names).not.toContain("x-dropme");
    // An app gets the sender's credentials unchanged.
    for (const [name, value] of Object.entries(CREDENTIALS)) expect(request.headers, name).toContainEqual([name, value]);
    answer(agent, request.rid, 201, [["content-type", "application/json"], ["set-cookie", "session=1"], ["x-app", "yes"], ["connection", "x-hop"], ["x-hop", "no"], ["transfer-encoding", "chunked"]], '{"text":"sunny"}');
    const res = await pending;
    expect(res.status).toBe(201);
    expect(await res.text()).toBe('{"text":"sunny"}');
    expect(res.headers.get("content-type")).toBe("application/json");
    expect(res.headers.get("x-app")).toBe("yes");
    expect(res.headers.get("set-cookie")).toBeNull();
    expect(res.headers.get("x-hop")).toBeNull();
    expect(res.headers.get("x-clawrelay-held")).toBeNull();
    expect(res.headers.get("content-security-policy")).toBe(ANSWER_CSP);
    expect(await storedCount(inbox)).toBe(0);
  });

  it("an answer in chunks (utf8 and base64) reaches the sender whole", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/page`);
    const { rid } = await nextRequest(agent);
    answer(agent, rid, 200, [["content-type", "text/html"]], "<p>one ", { more: true });
    agent.send({ type: "answer", rid, body: btoa("two "), encoding: "base64", more: true });
    agent.send({ type: "answer", rid, body: "three</p>", encoding: "utf8" });
    const res = await pending;
    expect(res.status).toBe(200);
    expect(await res.text()).toBe("<p>one two three</p>");
  });

  it("an answer past the cap is 502 answer_too_large, and the socket stays open for the next request", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/big`, { method: "POST", body: "{}" });
    const { rid } = await nextRequest(agent);
    const chunk = "x".repeat(LIVE.answerChunkBytes);
    const chunks = LIVE.answerBodyMaxBytes / LIVE.answerChunkBytes;
    answer(agent, rid, 200, [], chunk, { more: true });
    for (let i = 1; i <= chunks; i++) agent.send({ type: "answer", rid, body: chunk, encoding: "utf8", more: true });
    await refusedWith(await pending, 502, "answer_too_large");
    // Frames of the abandoned answer still coming are let go; the socket is open and answers the next one.
    agent.send({ type: "answer", rid, body: "tail", encoding: "utf8" });
    await agent.sync();
    expect(agent.closed).toBeNull();
    const next = sendTo(`${path}/small`);
    const second = await nextRequest(agent);
    answer(agent, second.rid, 200, [], "ok");
    expect(await (await next).text()).toBe("ok");
    expect(await storedCount(inbox)).toBe(0);
  });

  it("a GET callback with a query is answered with the app's body; HEAD goes down as HEAD and comes back without one", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox, { liveSec: 3 });
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/oauth/callback?code=one-time&state=s`);
    const get = await nextRequest(agent);
    expect(get).toMatchObject({ method: "GET", tail: "/oauth/callback?code=one-time&state=s", body: "", deadline_ms: 3000 });
    answer(agent, get.rid, 200, [["content-type", "text/plain"]], "signed in");
    expect(await (await pending).text()).toBe("signed in");
    const head = sendTo(`${path}/health`, { method: "HEAD" });
    const headRequest = await nextRequest(agent);
    expect(headRequest.method).toBe("HEAD");
    answer(agent, headRequest.rid, 200, [["x-up", "1"]], "");
    const headRes = await head;
    expect(headRes.status).toBe(200);
    expect(headRes.headers.get("x-up")).toBe("1");
    expect(await headRes.text()).toBe("");
  });

  it("a live source without a forward target sends a POST to the gateway with its hook fields and none of the sender's credentials; GET to it stays 405 naming --live", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox, { forward: null, name: "slack-cmds" });
    const agent = await liveAgent(inbox);
    const pending = sendTo(path, { method: "POST", headers: { "content-type": "application/json", "x-custom": "kept", ...CREDENTIALS }, body: '{"a":1}' });
    const request = await nextRequest(agent);
    expect(request).toMatchObject({ to: "gateway", method: "POST", subpath: "sources/slack-cmds", content_type: "application/json", hook_headers: { "x-clawrelay-source": "slack-cmds" } });
    expect(request.target).toBeUndefined();
    // The gateway never gets them (kept-credentials.ts): not in the frame at all, not even redacted.
    expect(request.headers.map(([name]) => name)).toContain("x-custom");
    for (const name of Object.keys(CREDENTIALS)) expect(request.headers.map(([n]) => n), name).not.toContain(name);
    for (const value of Object.values(CREDENTIALS)) expect(JSON.stringify(request), value).not.toContain(value);
    answer(agent, request.rid, 200, [], "done");
    expect(await (await pending).text()).toBe("done");
    const get = await sendTo(`${path}/x`);
    expect(get.status).toBe(405);
    expect(((await get.json()) as { error: { message: string } }).error.message).toContain("--live --forward URL");
  });
});

describe("live_sec on a source", () => {
  it("is kept on add, changed and cleared by PATCH, shown in the view, and checked (1..300)", async () => {
    const inbox = await claimInbox();
    await liveSource(inbox, { liveSec: 7 });
    const list = async () => ((await (await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/sources`)).json()) as { sources: SourceView[] }).sources[0]!;
    expect((await list()).live_sec).toBe(7);
    const patch = (body: unknown) => signedFetch(inbox.agent, "PATCH", `/inbox/${inbox.agent.id}/sources/app`, body);
    expect((await patch({ live_sec: null })).status).toBe(200);
    expect((await list()).live_sec).toBeNull();
    expect((await patch({ live_sec: 300 })).status).toBe(200);
    expect((await list()).live_sec).toBe(300);
    expect((await patch({ live_sec: 301 })).status).toBe(400);
    expect((await patch({ live_sec: 0 })).status).toBe(400);
    expect((await list()).live_sec).toBe(300);
  });
});
