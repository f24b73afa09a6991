// What `clawrelay messages --outbox` prints: one line per message the agent sent (newest first) with the
// receipt that answered it, and the acks setting under it. The receiver's error text is its own, so it is
// made terminal-safe; a record its sender left at `sending` says so (SENDING_STALE_MS). Pure; imported by
// cli-messages.ts; covered by test/node/outbox.e2e.test.ts and outbox-text.test.ts.
import type { AckDelivery, OutboxRecord } from "../../protocol/index.ts";
import { formatAge } from "../relay/messages.ts";
import { terminalCut } from "./terminal-text.ts";

const ERROR_WIDTH = 80;

/**
 * A record is settled within a post's time-out (relay-api.ts, 15 s) of being made; one still `sending` a
 * minute on lost its sender between the two (killed, the machine shut), and nothing will settle it.
 */
export const SENDING_STALE_MS = 60_000;

/** The receipt (or the post's refusal) in a few words. */
function receiptText(r: OutboxRecord, nowMs: number): string {
  const ago = r.receipt_at === null ? "" : ` ${formatAge(nowMs - r.receipt_at)} ago`;
  if (r.state === "sending" && nowMs - r.created_at > SENDING_STALE_MS) return "no outcome: its sender stopped before the post was answered; whether it arrived is unknown (send it again if it matters)";
  if (r.state === "refused") return `not sent: ${terminalCut(`${r.error_code ?? ""} ${r.error_message ?? ""}`.trim(), ERROR_WIDTH)}`;
  if (r.receipt_type === "ack") return `ack${ago}`;
  if (r.receipt_type === "result") return `result ${r.receipt_msg_id ?? ""}${ago}`;
  if (r.receipt_type === "error") return `error${ago}: ${terminalCut(`${r.error_code ?? ""} ${r.error_message ?? ""}`.trim(), ERROR_WIDTH)}`;
  return "";
}

export function outboxTable(records: readonly OutboxRecord[], nowMs: number): string {
  const rows = records.map((r) => [terminalCut(r.msg_id, 40), r.to, r.type, r.state, formatAge(nowMs - r.created_at), receiptText(r, nowMs)]);
  const header = ["MSG_ID", "TO", "TYPE", "STATE", "SENT", "RECEIPT"];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!))).join("  ").trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** The acks setting in words, with the command that changes it. */
export function acksLine(acks: AckDelivery): string {
  return acks === "record"
    ? "acks: recorded here only (they start no agent run); clawrelay messages --outbox --acks deliver brings them to the gateway too"
    : "acks: recorded here and delivered to the gateway (one agent run each); clawrelay messages --outbox --acks record stops that";
}

export function outboxText(view: { records: readonly OutboxRecord[]; total: number; acks: AckDelivery; truncated: boolean }, nowMs: number): string {
  const list = view.records.length > 0 ? outboxTable(view.records, nowMs) : "nothing sent yet (clawrelay send records what it sends here)";
  const more = view.truncated ? `\n(${view.records.length} of ${view.total} shown: page through GET /inbox/{id}/outbox)` : "";
  return `${list}${more}\n\n${view.total} sent message(s) kept (the newest 1,000, at most 7 days); ${acksLine(view.acks)}`;
}
