// Live requests that are not answered: held (stored, answered as today plus x-clawrelay-held) when they carry
// an event — no agent, an agent that does not speak live, earlier events still queued, the app unreachable, the
// deadline passed or the socket gone (then the delivery frame carries the live request's rid) — and refused at
// once with nothing stored when they are a GET or HEAD (503, 504, 502, with Retry-After). Deadlines are passed
// as the timer would (passDeadline): no test waits for one.
import { afterEach, describe, expect, it } from "vitest";
import { HELD_HEADER } from "../../protocol/index.ts";
import { claimInbox } from "../support/workerd/agents.ts";
import { answer, liveAgent, liveLog, liveSource, nextRequest, passDeadline, refusedWith, sendTo, storedCount } from "../support/workerd/live.ts";
import { closeAllSockets, connect } from "../support/workerd/socket-client.ts";

afterEach(closeAllSockets);

async function held(res: Response, reason: string): Promise<number> {
  const body = (await res.json()) as { queued: boolean; id: number };
  expect(res.status, JSON.stringify(body)).toBe(200);
  expect(res.headers.get(HELD_HEADER)).toBe(reason);
  expect(body.queued).toBe(true);
  return body.id;
}

describe("no agent that answers", () => {
  it("offline: a POST is held (and delivered when the agent comes), a GET is 503 agent_offline with Retry-After: 30 and nothing stored", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const id = await held(await sendTo(`${path}/hook`, { method: "POST", body: '{"n":1}' }), "offline");
    expect(await refusedWith(await sendTo(`${path}/page?x=1`), 503, "agent_offline")).toBe("30");
    const head = await sendTo(`${path}/page`, { method: "HEAD" });
    expect([head.status, head.headers.get("retry-after")]).toEqual([503, "30"]);
    expect(await storedCount(inbox)).toBe(1);
    const agent = await liveAgent(inbox);
    const [frame] = await agent.messages(1);
    expect(frame).toMatchObject({ id, body: '{"n":1}', forward: { method: "POST", tail: "/hook" } });
    expect(frame!.live_rid).toBeUndefined();
  });

  it("an agent that does not name live: a POST is held agent_too_old and never sent as a request, a GET is 503 agent_too_old", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const older = await connect(inbox.agent.id);
    await older.auth(inbox.agent, { features: ["lanes"] });
    const id = await held(await sendTo(`${path}/x`, { method: "PUT", body: "{}" }), "agent_too_old");
    expect(await refusedWith(await sendTo(`${path}/x`), 503, "agent_too_old")).toBe("30");
    const [frame] = await older.messages(1);
    expect(frame!.id).toBe(id);
    await older.expectQuiet();
  });
});

describe("order kept", () => {
  it("queued_ahead: while a held event of the source waits, a later POST is held behind it; a GET is answered live anyway", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const first = await held(await sendTo(`${path}/a`, { method: "POST", body: "1" }), "offline");
    const agent = await liveAgent(inbox);
    const [delivered] = await agent.messages(1);
    expect(delivered!.id).toBe(first);
    const second = await held(await sendTo(`${path}/b`, { method: "POST", body: "2" }), "queued_ahead");
    expect(second).toBeGreaterThan(first);
    expect((await agent.next("message")).id).toBe(second);
    const get = sendTo(`${path}/status`);
    const request = await nextRequest(agent);
    expect(request.method).toBe("GET");
    answer(agent, request.rid, 200, [], "up");
    expect(await (await get).text()).toBe("up");
    // Once the lane is empty, POSTs are live again.
    agent.ack(first);
    agent.ack(second);
    await agent.sync();
    const post = sendTo(`${path}/c`, { method: "POST", body: "3" });
    const live = await nextRequest(agent);
    answer(agent, live.rid, 202, [], "");
    expect((await post).status).toBe(202);
  });
});

describe("no answer in time", () => {
  it("deadline: a POST is held with the rid, its delivery frame carries live_rid, and an answer that comes late is logged late", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/slow`, { method: "POST", body: '{"slow":true}' });
    const request = await nextRequest(agent);
    await passDeadline(inbox, request.rid);
    const id = await held(await pending, "deadline");
    const frame = await agent.next("message");
    expect(frame).toMatchObject({ id, live_rid: request.rid, body: '{"slow":true}' });
    answer(agent, request.rid, 200, [], "finally");
    await agent.sync();
    const [entry] = (await liveLog(inbox)).requests;
    expect(entry).toMatchObject({ method: "POST", path: "/slow", outcome: "late", status: 200, code: "deadline" });
  });

  it("deadline: a GET is 504 deadline_passed with Retry-After: 5, nothing stored", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/slow`);
    const request = await nextRequest(agent);
    await passDeadline(inbox, request.rid);
    expect(await refusedWith(await pending, 504, "deadline_passed")).toBe("5");
    expect(await storedCount(inbox)).toBe(0);
  });

  it("the socket closing while a request waits counts as the deadline: the POST is held with its rid", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/x`, { method: "POST", body: "{}" });
    const request = await nextRequest(agent);
    agent.close();
    const id = await held(await pending, "deadline");
    const again = await liveAgent(inbox);
    expect(await again.next("message")).toMatchObject({ id, live_rid: request.rid });
  });

  it("a newer connection replacing the socket ends its waiting requests the same way", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/x`, { method: "POST", body: "{}" });
    await nextRequest(agent);
    const newer = await liveAgent(inbox);
    await held(await pending, "deadline");
    expect((await newer.next("message")).live_rid).toBeDefined();
  });
});

describe("the app unreachable", () => {
  it("not sent (connection refused): a POST is held unreachable, a GET is 502 app_unreachable; a failure after sending is 502 with its code, never held", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const failed = (rid: string, notSent: boolean, code = "unreachable") => agent.send({ type: "answer", rid, failed: { code, message: "connect ECONNREFUSED 127.0.0.1:3000", not_sent: notSent } });
    const post = sendTo(`${path}/x`, { method: "POST", body: "{}" });
    failed((await nextRequest(agent)).rid, true);
    const id = await held(await post, "unreachable");
    expect((await agent.next("message")).id).toBe(id);
    agent.ack(id);
    await agent.sync();
    const get = sendTo(`${path}/x`);
    failed((await nextRequest(agent)).rid, true);
    expect(await refusedWith(await get, 502, "app_unreachable")).toBe("5");
    const sent = sendTo(`${path}/y`, { method: "POST", body: "{}" });
    failed((await nextRequest(agent)).rid, false, "target_refused");
    await refusedWith(await sent, 502, "target_refused");
    expect(await storedCount(inbox)).toBe(0);
  });
});
