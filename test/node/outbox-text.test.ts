// What `clawrelay messages --outbox` says of a record (local-agent/cli/outbox-text.ts). A record is made
// before its post and settled right after; an agent or a `clawrelay send` that dies in between (killed,
// the laptop shut) leaves it at `sending` for the 7 days it is kept, and the listing said nothing more
// than "sending", as if the post were still under way. Past the post's time-out it now says the sender
// stopped and that whether the message arrived is unknown.
import { describe, expect, it } from "vitest";
import { SENDING_STALE_MS, outboxTable } from "../../local-agent/cli/outbox-text.ts";
import type { OutboxRecord } from "../../protocol/index.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");

function record(over: Partial<OutboxRecord>): OutboxRecord {
  return { msg_id: "m-1", to: "ag_0123456789ab", type: "message", reply_to: null, topic: null, created_at: NOW - 1000, state: "sending", receipt_type: null, receipt_msg_id: null, receipt_at: null, error_code: null, error_message: null, ...over };
}

describe("an outbox record left at sending", () => {
  it("while its post may still be under way it says nothing more; past the post's time-out it says the sender stopped", () => {
    const [, fresh] = outboxTable([record({ created_at: NOW - 5000 })], NOW).split("\n");
    expect(fresh).toMatch(/sending\s+5s$/);
    const [, stale] = outboxTable([record({ created_at: NOW - SENDING_STALE_MS - 1000 })], NOW).split("\n");
    expect(stale).toContain("no outcome: its sender stopped before the post was answered; whether it arrived is unknown (send it again if it matters)");
    // An answered record is unchanged by its age.
    const [, acked] = outboxTable([record({ created_at: NOW - 3_600_000, state: "acknowledged", receipt_type: "ack", receipt_at: NOW - 3_500_000 })], NOW).split("\n");
    expect(acked).toMatch(/acknowledged\s+60m\s+ack 58m ago$/);
  });
});
