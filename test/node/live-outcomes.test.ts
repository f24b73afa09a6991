// What the agent remembers of its live requests (local-agent/live/live-outcomes.ts) and what a held copy
// of one becomes: 2xx → acknowledged, a 4xx but 408/429 → the dead shelf with the target's status and
// words, 408/429/5xx, no answer or an unknown request → posted as usual; a request still under way is
// waited for; only the last ones are kept (the oldest forgotten first).
import { describe, expect, it } from "vitest";
import { LiveOutcomes, heldVerdict } from "../../local-agent/live/live-outcomes.ts";

const answered = (status: number, detail = "") => ({ status, detail, failure: null });

describe("live outcomes", () => {
  it("settles a held copy by the target's answer", () => {
    expect(heldVerdict(answered(200), 7)).toEqual({ action: "ack", status: 200 });
    expect(heldVerdict(answered(204), 7)).toEqual({ action: "ack", status: 204 });
    const refused = heldVerdict(answered(403, "bad signature"), 7);
    expect(refused).toMatchObject({ action: "reject", status: 403 });
    expect(refused.action === "reject" && refused.reason).toContain("403: bad signature");
    expect(refused.action === "reject" && refused.reason).toContain("clawrelay messages replay 7");
    for (const status of [408, 429, 500, 503, 302]) expect(heldVerdict(answered(status), 7)).toEqual({ action: "post" });
    expect(heldVerdict({ status: null, detail: "connection refused", failure: "unreachable" }, 7)).toEqual({ action: "post" });
    // Too large to return, but the app took it.
    expect(heldVerdict({ status: 200, detail: "too large", failure: "answer_too_large" }, 7)).toEqual({ action: "ack", status: 200 });
  });

  it("posts a copy of a request it does not know (another process's, or a restart)", async () => {
    expect(await new LiveOutcomes().verdict("rid_unknown1", 1)).toEqual({ action: "post" });
  });

  it("waits for a request still under way, then settles by its answer", async () => {
    const outcomes = new LiveOutcomes();
    outcomes.begin("rid_00000001");
    expect(outcomes.inFlight).toBe(1);
    let verdict: unknown = null;
    const waiting = outcomes.verdict("rid_00000001", 3).then((v) => (verdict = v));
    await Promise.resolve();
    expect(verdict).toBeNull();
    outcomes.settle("rid_00000001", answered(200));
    await waiting;
    expect(verdict).toEqual({ action: "ack", status: 200 });
    expect(outcomes.inFlight).toBe(0);
    // The first outcome stands.
    outcomes.settle("rid_00000001", answered(500));
    expect(await outcomes.verdict("rid_00000001", 3)).toEqual({ action: "ack", status: 200 });
  });

  it("keeps the last ones only, forgetting the oldest first", async () => {
    const outcomes = new LiveOutcomes(3);
    for (const n of [1, 2, 3, 4]) {
      outcomes.begin(`rid_0000000${n}`);
      outcomes.settle(`rid_0000000${n}`, answered(200));
    }
    expect(outcomes.size).toBe(3);
    expect(outcomes.outcome("rid_00000001")).toBeNull();
    expect(await outcomes.verdict("rid_00000004", 1)).toEqual({ action: "ack", status: 200 });
  });

  it("keeps 1,024 by default", () => {
    const outcomes = new LiveOutcomes();
    for (let n = 0; n < 1100; n++) outcomes.begin(`rid_${String(n).padStart(8, "0")}`);
    expect(outcomes.size).toBe(1024);
  });
});
