// The bound on live requests in flight per inbox: beyond LIVE.inFlightMax, a request (a POST too) is
// refused 429 too_many_live_requests with Retry-After: 1 and nothing is stored or sent down the socket;
// once one finishes, the next goes through.
import { afterEach, describe, expect, it } from "vitest";
import { LIVE } from "../../protocol/index.ts";
import { claimInbox } from "../support/workerd/agents.ts";
import { answer, liveAgent, liveLog, liveSource, nextRequest, passDeadline, refusedWith, sendTo, storedCount } from "../support/workerd/live.ts";
import { closeAllSockets } from "../support/workerd/socket-client.ts";

afterEach(closeAllSockets);

describe("in flight", () => {
  it(`past ${LIVE.inFlightMax} waiting, a request is 429 with Retry-After: 1, neither stored nor sent; a finished one makes room`, async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox);
    const agent = await liveAgent(inbox);
    const waiting: Promise<Response>[] = [];
    const rids: string[] = [];
    for (let i = 0; i < LIVE.inFlightMax; i++) {
      waiting.push(sendTo(`${path}/w${i}`));
      rids.push((await nextRequest(agent)).rid);
    }
    expect((await liveLog(inbox)).in_flight).toBe(LIVE.inFlightMax);
    expect(await refusedWith(await sendTo(`${path}/over`, { method: "POST", body: "{}" }), 429, "too_many_live_requests")).toBe("1");
    await agent.expectQuiet();
    expect(await storedCount(inbox)).toBe(0);
    answer(agent, rids[0]!, 200, [], "first");
    expect(await (await waiting[0]!).text()).toBe("first");
    const next = sendTo(`${path}/now`);
    answer(agent, (await nextRequest(agent)).rid, 200, [], "room");
    expect(await (await next).text()).toBe("room");
    for (const rid of rids.slice(1)) await passDeadline(inbox, rid);
    for (const res of waiting.slice(1)) expect((await res).status).toBe(504);
    expect((await liveLog(inbox)).in_flight).toBe(0);
  });
});
