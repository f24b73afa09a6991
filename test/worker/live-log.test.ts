// The live log: one entry per live request (method, the path without its query, the app's status, the
// outcome and why), newest first through the owner's GET /inbox/{id}/live, never a body; its limit; the
// queue summary's `live` (in flight, answered, the newest's time); only the owner reads it.
import { afterEach, describe, expect, it } from "vitest";
import { claimInbox, listQueue, newAgent, signedFetch } from "../support/workerd/agents.ts";
import { answer, liveAgent, liveLog, liveSource, nextRequest, sendTo } from "../support/workerd/live.ts";
import { closeAllSockets } from "../support/workerd/socket-client.ts";

afterEach(closeAllSockets);

describe("the live log", () => {
  it("keeps method, the path without its query, status and outcome of each live request, newest first; never the query or a body", async () => {
    const inbox = await claimInbox();
    const path = await liveSource(inbox, { name: "oauth" });
    const before = Date.now();
    await sendTo(`${path}/offline?code=secret-one-time`);
    const agent = await liveAgent(inbox);
    const pending = sendTo(`${path}/callback?code=secret-one-time&state=xyz`, { redirect: "manual" });
    answer(agent, (await nextRequest(agent)).rid, 302, [["location", "http://localhost/done"]], "");
    expect((await pending).status).toBe(302);
    const view = await liveLog(inbox);
    expect(view.in_flight).toBe(0);
    expect(view.requests).toMatchObject([
      { source: "oauth", method: "GET", path: "/callback", status: 302, outcome: "answered", code: null },
      { source: "oauth", method: "GET", path: "/offline", status: null, outcome: "failed", code: "offline" },
    ]);
    expect(view.requests[0]!.at_ms).toBeGreaterThanOrEqual(before);
    expect(JSON.stringify(view)).not.toContain("secret-one-time");
    expect((await liveLog(inbox, 1)).requests).toHaveLength(1);
    const summary = (await listQueue(inbox.agent)).summary;
    expect(summary.live).toEqual({ in_flight: 0, answered: 1, last_at: view.requests[0]!.at_ms });
  });

  it("is the owner's only: an unsigned or foreign request is refused", async () => {
    const inbox = await claimInbox();
    expect((await sendTo(`/inbox/${inbox.agent.id}/live`)).status).toBe(401);
    expect((await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/live`, undefined, newAgent())).status).toBe(403);
    expect((await signedFetch(inbox.agent, "GET", `/inbox/${inbox.agent.id}/live?limit=0`)).status).toBe(400);
  });
});
