// What other clients of this agent do at the hub, as `hub status` and `doctor` report it:
// - another client took the token: the relay counts the hub's 401s on a token that had not expired
//   (token_lost) — a refresh by the user's BotCord CLI or a skill script ends every older token;
// - another client pulls this inbox: the hub's history (GET /hub/history, newest first) holds records
//   addressed to us that were taken (processing, delivered, acked) but not by the relay. Kept
//   conservative — only records after the link was made and after the oldest pull the relay still
//   remembers, and a lease only once it is older than a pull would hold it — and worded "likely".
// Pure apart from readHistory; used by hub-status.ts and doctor/doctor-hub.ts; covered by
// test/node/hub-others.test.ts.
import { fetchHubHistory, instantMs } from "../../protocol/index.ts";
import type { HubClient } from "../../protocol/index.ts";
import { when } from "./hub-client.ts";
import type { RelayHubView } from "./relay-hub.ts";

export interface HistoryRecord {
  hub_msg_id: string;
  to: string | null;
  from: string | null;
  room_id: string | null;
  state: string;
  /** ms since the epoch. */
  created_at: number | null;
}

export interface OtherPuller {
  count: number;
  /** Records from this instant on were counted. */
  since: number;
  newest_at: number;
  hub_msg_ids: string[];
}

const DAY_MS = 86_400_000;
const TAKEN = new Set(["processing", "delivered", "acked"]);
/** A pull stores and confirms within seconds; a lease older than this is not the relay's pull in progress. */
const LEASE_GRACE_MS = 5 * 60_000;
/** The relay remembers this many of its pulls (worker/hub/hub-pull.ts, RECENT_PULLED). */
const RELAY_REMEMBERS = 50;

/** The agent's newest 100 records at the hub (GET /hub/history), newest first as the hub lists them. */
export async function readHistory(client: HubClient): Promise<HistoryRecord[]> {
  const { messages } = await fetchHubHistory(client, null);
  return messages.reverse().map((m) => {
    const envelope = typeof m.envelope === "object" && m.envelope !== null ? (m.envelope as Record<string, unknown>) : {};
    return {
      hub_msg_id: m.hub_msg_id,
      to: typeof envelope.to === "string" ? envelope.to : null,
      from: typeof envelope.from === "string" ? envelope.from : null,
      room_id: typeof m.room_id === "string" ? m.room_id : null,
      state: typeof m.state === "string" ? m.state : "unknown",
      created_at: instantMs(m.created_at),
    };
  });
}

/**
 * Records likely taken by another client, or null when nothing can be said (the relay remembers too
 * few of its pulls to tell, or no record qualifies).
 */
export function likelyOtherPulls(records: readonly HistoryRecord[], input: { agentId: string; recentPulled: readonly string[]; registeredAt: number | null; now: number }): OtherPuller | null {
  const pulled = new Set(input.recentPulled);
  let since = Math.max(input.now - DAY_MS, input.registeredAt ?? 0);
  if (pulled.size >= RELAY_REMEMBERS) {
    // Its list is full: only what came after the oldest pull it still remembers can be judged.
    const remembered = records.filter((r) => pulled.has(r.hub_msg_id) && r.created_at !== null).map((r) => r.created_at!);
    if (remembered.length === 0) return null;
    since = Math.max(since, Math.min(...remembered));
  }
  const ours = (r: HistoryRecord) => r.to === input.agentId || (r.room_id !== null && r.from !== null && r.from !== input.agentId);
  const taken = records.filter(
    (r) =>
      r.created_at !== null &&
      r.created_at > since &&
      ours(r) &&
      TAKEN.has(r.state) &&
      !pulled.has(r.hub_msg_id) &&
      (r.state !== "processing" || input.now - r.created_at > LEASE_GRACE_MS),
  );
  if (taken.length === 0) return null;
  return { count: taken.length, since, newest_at: Math.max(...taken.map((r) => r.created_at!)), hub_msg_ids: taken.map((r) => r.hub_msg_id) };
}

/** The lines both commands print about other clients; empty when there is nothing to say. */
export function otherClientLines(view: RelayHubView | null, others: OtherPuller | null, credentialsPath: string | null): string[] {
  const lines: string[] = [];
  const lost = view?.token_lost;
  if (lost && lost.count > 0) {
    lines.push(
      `another client took the hub token: the hub refused the relay's token ${lost.count} time(s) before it expired, last at ${when(instantMs(lost.last_at))} — a refresh by any client of this agent (the BotCord CLI, a skill script) ends every older token.`,
      credentialsPath
        ? `  fix: keep the agent running (clawrelay start): it keeps ${credentialsPath} on the relay's token, so that client has no reason to refresh; or stop the other client from refreshing`
        : `  fix: link that client's credentials file (clawrelay init --import-botcord --force, or --import-agentline) and keep the agent running, so both use one token; or stop the other client from refreshing`,
    );
  }
  if (others) {
    lines.push(
      `another client likely pulls this inbox: ${others.count} message(s) addressed to this agent since ${when(others.since)} were taken at the hub but not by the relay (newest ${when(others.newest_at)}; e.g. ${others.hub_msg_ids.slice(0, 3).join(", ")}).`,
      `  fix: stop the other poller of this agent (a BotCord daemon or plugin, a script calling /hub/inbox): what it takes never reaches the relay`,
    );
  }
  return lines;
}
