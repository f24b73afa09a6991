// What doctor and status say of how the relay keeps senders' credentials (issue 32, item 11): OK when
// sealed, WARN naming the forwarding sources and the operator's fix when kept in clear, nothing from an
// older relay; status's warning only while events go to apps and the relay keeps them in clear.
import { describe, expect, it } from "vitest";
import type { QueueSummary } from "../../protocol/index.ts";
import type { AgentStatusAnswer } from "../../local-agent/agent-status.ts";
import { credentialKeepingCheck, credentialKeepingWarning } from "../../local-agent/doctor/doctor-credentials.ts";
import type { Level } from "../../local-agent/doctor/doctor-gateway.ts";

const summary = (credentials?: "sealed" | "clear"): QueueSummary => ({ queued: 0, sent: 0, dead: 0, oldest_waiting_at: null, ...(credentials ? { credentials } : {}) });

function checks(s: QueueSummary | null, forwarding: string[]): { level: Level; what: string; fix?: string }[] {
  const out: { level: Level; what: string; fix?: string }[] = [];
  credentialKeepingCheck(s, forwarding, (level, what, fix) => out.push(fix ? { level, what, fix } : { level, what }));
  return out;
}

type StatusPart = Pick<AgentStatusAnswer, "relay_queue" | "delivery">;
const status = (credentials: "sealed" | "clear" | undefined, forwards: number): StatusPart =>
  ({ relay_queue: summary(credentials), delivery: { forwards: Array.from({ length: forwards }, (_, i) => ({ source: `s${i}` })) } }) as unknown as StatusPart;

describe("doctor: the relay's credential keeping", () => {
  it("warns when the relay keeps them in clear for forwarding sources, naming them and the operator's fix", () => {
    const [check] = checks(summary("clear"), ["app", "stripe"]);
    expect(check!.level).toBe("WARN");
    expect(check!.what).toContain("app, stripe");
    expect(check!.what).toContain("in clear");
    expect(check!.fix).toContain("RECEIPT_KEY_SECRET");
  });

  it("is OK when sealed, or when nothing forwards; says nothing of an older relay", () => {
    expect(checks(summary("sealed"), ["app"])).toMatchObject([{ level: "OK", what: expect.stringContaining("sealed") }]);
    expect(checks(summary("clear"), [])).toMatchObject([{ level: "OK", what: expect.stringContaining("RECEIPT_KEY_SECRET") }]);
    expect(checks(summary(), ["app"])).toEqual([]);
    expect(checks(null, ["app"])).toEqual([]);
  });
});

describe("status: one warning line", () => {
  it("while events go to apps and the relay keeps credentials in clear", () => {
    expect(credentialKeepingWarning(status("clear", 1))).toMatch(/^WARNING {3}the relay keeps senders' credential headers .* in clear .*RECEIPT_KEY_SECRET/);
    expect(credentialKeepingWarning(status("sealed", 1))).toBeNull();
    expect(credentialKeepingWarning(status("clear", 0))).toBeNull();
    expect(credentialKeepingWarning(status(undefined, 1))).toBeNull();
    expect(credentialKeepingWarning({ relay_queue: { error: "unreachable" }, delivery: { forwards: [{}] } } as unknown as StatusPart)).toBeNull();
  });
});
