// GET /inbox/{id}/messages: the queue for clients that cannot hold a socket.
import { describe, expect, it } from "vitest";
import { claimInbox, errorCode, newAgent, poll, postHook, relayFetch, signedFetch } from "../support/workerd/agents.ts";

describe("polling", () => {
  it("pages in order with limit/has_more, and ack=false only peeks", async () => {
    const inbox = await claimInbox();
    for (let i = 0; i < 5; i++) await postHook(inbox, "a", `{"n":${i}}`);
    const page = await poll(inbox.agent, "limit=2&ack=false");
    expect(page.messages.map((m) => m.body)).toEqual(['{"n":0}', '{"n":1}']);
    expect(page.backlog).toBe(5);
    expect(page.has_more).toBe(true);
    const next = await poll(inbox.agent, `after=${page.next_after}&limit=10&ack=false`);
    expect(next.messages.map((m) => m.body)).toEqual(['{"n":2}', '{"n":3}', '{"n":4}']);
    expect(next.has_more).toBe(false);
    expect((await poll(inbox.agent, "limit=10&ack=false")).count).toBe(5);
  });

  it("ack=true commits the cursor: messages up to `after` are deleted, later ones stay", async () => {
    const inbox = await claimInbox();
    for (let i = 0; i < 3; i++) await postHook(inbox, "a", `{"n":${i}}`);
    const first = await poll(inbox.agent, "limit=1");
    const rest = await poll(inbox.agent, `after=${first.next_after}&ack=true`);
    expect(rest.count).toBe(2);
    const all = await poll(inbox.agent, "ack=false");
    expect(all.messages.map((m) => m.body)).toEqual(['{"n":1}', '{"n":2}']);
  });

  it("long-polls: a waiting request returns as soon as a message arrives", async () => {
    const inbox = await claimInbox();
    const waiting = poll(inbox.agent, "timeout=30&ack=false");
    await new Promise((r) => setTimeout(r, 100));
    await postHook(inbox, "agentgram_inbox/agent", '{"message":"wake up"}');
    // Without the wake-up this would wait 30 s and the test would time out (5 s).
    const result = await waiting;
    expect(result.messages.map((m) => m.body)).toEqual(['{"message":"wake up"}']);
  });

  it("an empty long-poll ends after its timeout with no messages", async () => {
    const inbox = await claimInbox();
    const result = await poll(inbox.agent, "timeout=1");
    expect(result).toEqual({ messages: [], count: 0, has_more: false, next_after: 0, backlog: 0, dead: 0 });
  });

  it("requires a signature by a key of the inbox", async () => {
    const inbox = await claimInbox();
    const unsigned = await relayFetch(`/inbox/${inbox.agent.id}/messages`);
    expect(unsigned.status).toBe(401);
    expect(await errorCode(unsigned)).toBe("missing_request_signature");
    const other = newAgent();
    const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/messages`, undefined, other);
    expect(res.status).toBe(403);
    expect(await errorCode(res)).toBe("key_not_authorised");
  });

  it("explains bad query parameters", async () => {
    const inbox = await claimInbox();
    for (const query of ["timeout=31", "limit=0", "after=-1", "ack=maybe"]) {
      const res = await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/messages?${query}`);
      expect(res.status).toBe(400);
      expect(await errorCode(res)).toBe("invalid_query");
    }
  });
});
