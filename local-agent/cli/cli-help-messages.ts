// The help entry of `clawrelay messages`: today's queue, the inbox's history (kept messages, searched and
// filtered), one message's show, replay and drop, a bulk replay, the live log and the outbox. Pure data;
// covered by test/node/cli-usage.e2e.test.ts.
import { json } from "./cli-spec.ts";
import type { CommandSpec } from "./cli-spec.ts";

const TIME = "an ISO 8601 time such as 2026-12-07T05:00:00Z, or a duration back from now: 90m, 2h, 7d";

export const MESSAGES_COMMAND: CommandSpec = {
  kind: "command",
  name: "messages",
  summary: "what the inbox holds and kept, searched; why a message is dead; show, replay or drop one or many; what this agent sent",
  usage: [
    "messages [--state queued|sent|dead] [--json]   list the inbox",
    "messages [--state delivered|all|…] [--since T] [--until T] [--source S] [--from AGENT_ID] [--conversation LANE] [--search TEXT] [--limit N] [--json]   the history: kept after delivery, searched",
    "messages --live [--json]                       the live requests the relay answered lately",
    "messages --outbox [--acks MODE] [--json]       what this agent sent, and the receipts that answered it",
    "messages show ID [--json]                      one message: its metadata and body",
    "messages replay ID [--json]                    a dead (or kept) message back into the queue (new id)",
    "messages replay --since T [--until T] [--source S] [--state delivered|dead|all] [--dry-run] [--json]   every match again at once, in order, each once",
    "messages drop ID [--json]                      delete one message, in any state (a kept one too)",
  ],
  flags: [
    { name: "state", value: "STATE", about: "list only queued, sent, dead, delivered (kept after delivery) or all; with replay --since: delivered (default), dead or all" },
    { name: "since", value: "TIME", about: `only messages received at or after it: ${TIME}` },
    { name: "until", value: "TIME", about: `only messages received at or before it: ${TIME}` },
    { name: "source", value: "NAME", about: "only the events of this webhook source (clawrelay sources list names them)" },
    { name: "from", value: "AGENT_ID", about: "only envelopes this agent sent (ag_ + 12 hex)" },
    { name: "conversation", value: "LANE", about: 'only this conversation (a lane, as the LANE column shows it: "source:stripe", a session key)' },
    { name: "search", value: "TEXT", about: "only messages whose body, headers or sub-path hold TEXT (ASCII letters in any case); each shows the matching excerpt" },
    { name: "limit", value: "N", about: "list at most N messages (default 200, at most 10000)" },
    { name: "dry-run", about: "with replay --since: only count what would be replayed" },
    { name: "live", about: "list the live requests the relay answered (method, path without its query, status, time); never stored, never replayed" },
    { name: "outbox", about: "list what this agent sent (newest first): each message's state (sending, queued, refused, acknowledged, answered, failed) and its receipt" },
    { name: "acks", value: "MODE", about: "with --outbox: record (acks answering a sent message only change its record: no agent run) or deliver (they reach the gateway too)" },
    json("print JSON"),
  ],
  positionals: 2,
  examples: [
    "clawrelay messages --state dead",
    "clawrelay messages --state delivered --search invoice --since 2d",
    "clawrelay messages --source stripe --since 2026-12-07T05:00:00Z --until 2026-12-07T06:00:00Z",
    "clawrelay messages show 42",
    "clawrelay messages replay 42",
    "clawrelay messages replay --since 90m --state delivered --dry-run",
    "clawrelay messages --live",
    "clawrelay messages --outbox",
    "clawrelay messages --outbox --acks deliver",
  ],
};
