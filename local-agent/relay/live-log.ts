// `clawrelay messages --live`: the live requests the relay answered lately (its live log, GET
// /inbox/{id}/live, signed with the agent's key): method, path without its query, status, outcome, how
// long, when — never a body; they were never stored and are never replayed. Returns values and text;
// cli-messages.ts prints them. Covered by test/node/live-app.e2e.test.ts.
import type { LiveLogView } from "../../protocol/index.ts";
import { textTable } from "../cli/text-table.ts";
import { terminalCut } from "../cli/terminal-text.ts";
import { formatAge, inboxCall } from "./messages.ts";
import type { InboxAccess } from "./messages.ts";

export async function liveLog(access: InboxAccess, limit = 50): Promise<LiveLogView> {
  return (await inboxCall(access, "GET", `/live?limit=${limit}`, "cannot read the live log")).body as unknown as LiveLogView;
}

export function liveLogText(view: LiveLogView, nowMs: number): string {
  const inFlight = `${view.in_flight} in flight now`;
  if (view.requests.length === 0) return `no live requests yet (${inFlight}); make a source live: clawrelay sources set NAME --live`;
  const rows = view.requests.map((r) => [
    `${formatAge(nowMs - r.at_ms)} ago`,
    terminalCut(r.source, 40),
    r.method,
    terminalCut(r.path, 80),
    r.status === null ? "—" : String(r.status),
    r.code ? `${r.outcome} (${r.code})` : r.outcome,
    `${r.duration_ms} ms`,
  ]);
  return `${textTable(["WHEN", "SOURCE", "METHOD", "PATH", "STATUS", "OUTCOME", "TOOK"], rows)}\n\n${view.requests.length} live request(s), newest first; ${inFlight}. Answered ones were never stored: there is nothing to replay.`;
}
