// The inspector's JSON API refuses what a page asks wrongly with a 4xx saying what to fix, never a 502 that
// blames the relay (local-agent/inspector/inspector-routes.ts), and its routes match the path, not what
// follows a "?". Regression tests for the outside probe of issue 22: `?state=bogus` and `/messages/0`
// answered 502, and `POST …/6/replay?x=1` failed on a valid dead message. History's query is checked the same way.
import { request } from "node:http";
import { describe, expect, it } from "vitest";
import type { AgentHandle } from "../../local-agent/agent.ts";
import { TOKEN_HEADER } from "../../local-agent/inspector/inspector-routes.ts";
import { postHook, queueItems, relayFixture, waitUntil } from "../support/node/stack.ts";

const fixture = relayFixture();

/** A request to the agent's API port with the page's token and its own Host (fetch cannot set Host). */
function call(agent: AgentHandle, token: string, method: string, path: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const headers = { host: `127.0.0.1:${agent.apiPort}`, [TOKEN_HEADER]: token };
    const req = request({ host: "127.0.0.1", port: agent.apiPort, method, path, headers }, (res) => {
      let text = "";
      res.on("data", (chunk: Buffer) => (text += chunk.toString("utf8")));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Record<string, unknown> }));
    });
    req.on("error", reject);
    req.end();
  });
}

async function pageToken(agent: AgentHandle): Promise<string> {
  const page = await fetch(`http://127.0.0.1:${agent.apiPort}/`);
  return /name="clawrelay-token" content="([^"]+)"/.exec(await page.text())![1]!;
}

describe("inspector API refusals", () => {
  it("regression: a state that is not one, and ids that are not positive integers, are a 400 naming the fix (were 502)", async () => {
    const { home } = await fixture.setUp();
    const agent = await fixture.run(home);
    const token = await pageToken(agent);
    const bogus = await call(agent, token, "GET", "/inspector/api/queue?state=bogus");
    expect(bogus).toEqual({ status: 400, body: { error: { code: "bad_request", message: "state must be all, queued, sent, dead" } } });
    for (const path of ["/inspector/api/messages/0", "/inspector/api/messages/00", "/inspector/api/messages/99999999999999999999"]) {
      expect(await call(agent, token, "GET", path)).toEqual({ status: 400, body: { error: { code: "bad_request", message: "a message id is a positive integer (1, 2, …)" } } });
    }
    for (const action of ["replay", "drop"]) expect((await call(agent, token, "POST", `/inspector/api/messages/0/${action}`)).status).toBe(400);
    // The relay's refusal of what was asked passes through as it is.
    expect(await call(agent, token, "GET", "/inspector/api/messages/424242")).toMatchObject({ status: 404, body: { error: { code: "relay_refused", message: expect.stringContaining("424242") } } });
    expect((await call(agent, token, "GET", "/inspector/api/queue?state=dead&x=%ED%A0%80")).status).toBe(200);
    // History's: a state that is not one, a search past the relay's bound, asked of the inspector, not the relay.
    expect(await call(agent, token, "GET", "/inspector/api/history?state=kept")).toEqual({ status: 400, body: { error: { code: "bad_request", message: "state must be one of queued, sent, dead, delivered, all" } } });
    expect(await call(agent, token, "GET", `/inspector/api/history?search=${"x".repeat(201)}`)).toEqual({ status: 400, body: { error: { code: "bad_request", message: "search is at most 200 characters" } } });
  });

  it("regression: POST …/replay?x=1 replays a dead message (the id was read from the path and query together)", async () => {
    const { gateway, home } = await fixture.setUp();
    gateway.refuse = () => 400;
    const agent = await fixture.run(home);
    const token = await pageToken(agent);
    const dead = await postHook(fixture.relay().url, home, "agentgram_inbox/agent", '{"message":"refused once"}');
    await waitUntil("the message dead", async () => (await queueItems(fixture.relay().url, home, "dead")).length === 1);
    gateway.refuse = undefined;
    const replayed = await call(agent, token, "POST", `/inspector/api/messages/${String(dead.body.id)}/replay?x=1`);
    expect(replayed).toMatchObject({ status: 200, body: { replayed: dead.body.id, id: expect.any(Number) } });
    await waitUntil("the replay at the gateway", () => gateway.received.length === 1);
    expect(gateway.received[0]!.body.toString()).toBe('{"message":"refused once"}');
    const shown = await call(agent, token, "GET", `/inspector/api/messages/${String(replayed.body.id)}?view=full`);
    expect(shown.status).toBe(200);
    await waitUntil("the replay acknowledged", async () => (await queueItems(fixture.relay().url, home)).length === 0);
    // Acknowledged, it is kept in the history (retention): dropped once, then no more.
    expect(await call(agent, token, "POST", `/inspector/api/messages/${String(replayed.body.id)}/drop?again=1`)).toMatchObject({ status: 200, body: { dropped: replayed.body.id, was: "delivered" } });
    expect((await call(agent, token, "POST", `/inspector/api/messages/${String(replayed.body.id)}/drop?again=2`)).status).toBe(404);
  });
});
