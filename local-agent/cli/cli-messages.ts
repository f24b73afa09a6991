// The `clawrelay messages` and `clawrelay send` commands: flags to a signed call of the relay
// (relay/messages.ts, relay/relay-api.ts), its answer to text or JSON. cli.ts loads this when one of
// them runs and prints what it returns (`messages --live`: relay/live-log.ts; `messages --outbox` and
// what `send` records: relay/outbox.ts). Covered by test/node/dead-letters.e2e.test.ts,
// cli-send-doctor.e2e.test.ts, live-app.e2e.test.ts, outbox.e2e.test.ts and history-cli.e2e.test.ts. The
// listing's history flags and the bulk replay (messages replay --since) are in cli-history.ts.
import { ACK_DELIVERIES, ENVELOPE_TYPES, MESSAGE_STATES, draftEnvelope, isAgentId, signEnvelope } from "../../protocol/index.ts";
import type { AckDelivery, EnvelopeType, MessageState } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { settingsIdentity } from "../identity.ts";
import { dropMessage, inboxAccess, listMessages, messageDetail, messagesJson, messagesTable, replayMessage, showMessage, shownRedacted, summaryLine } from "../relay/messages.ts";
import { HISTORY_STATES } from "../relay/history.ts";
import { OutboxSender } from "../relay/outbox.ts";
import { relayErrorText } from "../relay/relay-api.ts";
import { loadSettings } from "../settings.ts";
import { UsageError } from "./cli-args.ts";
import type { Values } from "./cli-args.ts";
import { choiceFlag, stringFlag, switchFlag } from "./cli-flags.ts";

const MESSAGE_ACTIONS = ["show", "replay", "drop"];
/** The flags of a listing or a bulk replay, which `show`, `drop` and `replay ID` refuse (cli-history.ts reads them). */
const HISTORY_LIST_FLAGS = ["since", "until", "source", "from", "conversation", "search", "limit", "dry-run"];
const listingFlagOf = (values: Values) => ["state", ...HISTORY_LIST_FLAGS].find((name) => values[name] !== undefined);

function messageId(action: string, idText: string | undefined): number {
  const id = Number(idText);
  if (idText === undefined) throw new UsageError(`messages ${action} needs the message id: clawrelay messages ${action} ID (as \`clawrelay messages\` lists it)`);
  if (!/^\d+$/.test(idText) || !Number.isSafeInteger(id) || id < 1) throw new UsageError(`the message id must be a positive integer, as \`clawrelay messages\` lists it, not "${idText}"`);
  return id;
}

export async function messagesCommand(values: Values, positionals: readonly string[], settingsPath: string): Promise<string> {
  const json = switchFlag(values, "json");
  const [action, idText] = positionals;
  if (switchFlag(values, "live")) {
    if (action !== undefined || listingFlagOf(values) !== undefined) throw new UsageError("--live lists the live requests: give it alone (clawrelay messages --live)");
    const { liveLog, liveLogText } = await import("../relay/live-log.ts");
    const view = await liveLog(await inboxAccess(loadSettings(settingsPath)));
    return json ? JSON.stringify(view, null, 2) : liveLogText(view, Date.now());
  }
  if (switchFlag(values, "outbox")) return outboxCommand(values, action, settingsPath);
  if (stringFlag(values, "acks") !== undefined) throw new UsageError("--acks goes with --outbox: clawrelay messages --outbox --acks record|deliver");
  if (action === undefined) {
    if (switchFlag(values, "dry-run")) throw new UsageError("--dry-run goes with a bulk replay: clawrelay messages replay --since TIME --dry-run");
    const { historyListCommand, wantsHistory } = await import("./cli-history.ts");
    // Checked against every state first, so a mistake names delivered and all too.
    choiceFlag(values, "state", HISTORY_STATES);
    if (wantsHistory(values)) return historyListCommand(() => inboxAccess(loadSettings(settingsPath)), values, Date.now());
    const state = choiceFlag<MessageState>(values, "state", MESSAGE_STATES);
    const { messages: items, summary, truncated } = await listMessages(await inboxAccess(loadSettings(settingsPath)), state);
    const now = Date.now();
    if (json) return messagesJson(items, now);
    const more = truncated ? "\n(more not shown: page through GET /inbox/{id}/queue)" : "";
    return `${items.length > 0 ? messagesTable(items, now) : "no messages"}\n\n${summaryLine(summary, now)}${more}`;
  }
  if (!MESSAGE_ACTIONS.includes(action)) throw new UsageError(`unknown messages action "${action}": use show, replay or drop (or nothing, to list)`);
  if (action === "replay" && idText === undefined) {
    const { bulkReplayCommand, isBulkReplay } = await import("./cli-history.ts");
    if (isBulkReplay(values)) return bulkReplayCommand(() => inboxAccess(loadSettings(settingsPath)), values, Date.now());
  }
  const listingFlag = listingFlagOf(values);
  if (listingFlag !== undefined) throw new UsageError(`--${listingFlag} is for listing (clawrelay messages --${listingFlag} …)${action === "replay" ? " or a bulk replay (clawrelay messages replay --since TIME)" : ""}, not for messages ${action} ID`);
  const id = messageId(action, idText);
  const access = await inboxAccess(loadSettings(settingsPath));
  if (action === "show") {
    const shown = await showMessage(access, id);
    return json ? JSON.stringify(shownRedacted(shown), null, 2) : messageDetail(shown);
  }
  if (action === "replay") {
    const answer = await replayMessage(access, id);
    return json ? JSON.stringify(answer) : `message ${answer.replayed} is queued again as id ${answer.id}`;
  }
  const answer = await dropMessage(access, id);
  return json ? JSON.stringify(answer) : `message ${answer.dropped} (${answer.was}) dropped`;
}

/** `messages --outbox [--acks record|deliver]`: what the agent sent and the receipts that answered it; --acks changes the setting first. */
async function outboxCommand(values: Values, action: string | undefined, settingsPath: string): Promise<string> {
  if (action !== undefined || listingFlagOf(values) !== undefined) throw new UsageError("--outbox lists what this agent sent: give it alone, or with --acks record|deliver");
  const acks = choiceFlag<AckDelivery>(values, "acks", ACK_DELIVERIES);
  const { listOutbox, setAckDelivery } = await import("../relay/outbox.ts");
  const { outboxText } = await import("./outbox-text.ts");
  const access = await inboxAccess(loadSettings(settingsPath));
  if (acks !== undefined) await setAckDelivery(access, acks);
  const view = await listOutbox(access);
  return switchFlag(values, "json") ? JSON.stringify(view, null, 2) : outboxText(view, Date.now());
}

const NO_MESSAGE = "give --text TEXT or --payload JSON";

/** What `send` carries; an empty message is a usage mistake, not something to send. */
function sendPayload(values: Values): Record<string, unknown> {
  const textValue = stringFlag(values, "text");
  const payloadText = stringFlag(values, "payload");
  if (textValue !== undefined && payloadText !== undefined) throw new UsageError("give --text or --payload, not both");
  if (payloadText === undefined) {
    if (textValue === undefined) throw new UsageError(`send needs a message: ${NO_MESSAGE}`);
    if (textValue.trim() === "") throw new UsageError(`--text is empty: ${NO_MESSAGE}`);
    return { text: textValue };
  }
  let payload: unknown;
  try {
    payload = JSON.parse(payloadText);
  } catch (err) {
    throw new AgentError("usage", `--payload must be a JSON object (${(err as Error).message}), e.g. '{"text":"hi"}'`);
  }
  if (typeof payload !== "object" || payload === null || Array.isArray(payload)) throw new AgentError("usage", `--payload must be a JSON object, e.g. '{"text":"hi"}'`);
  if (Object.keys(payload).length === 0) throw new UsageError(`--payload {} has nothing in it: ${NO_MESSAGE} with at least one field`);
  return payload as Record<string, unknown>;
}

export async function sendCommand(values: Values, settingsPath: string): Promise<string> {
  const to = stringFlag(values, "to");
  if (to === undefined) throw new UsageError("send needs the receiver: --to AGENT_ID");
  const payload = sendPayload(values);
  const ttlText = stringFlag(values, "ttl");
  if (ttlText !== undefined && !/^\d+$/.test(ttlText)) throw new UsageError(`--ttl must be a whole number of seconds, not "${ttlText}"`);
  const settings = loadSettings(settingsPath);
  if (!isAgentId(to)) throw new AgentError("usage", "--to must be an agent id (ag_ + 12 hex)");
  const type = (stringFlag(values, "type") ?? "message") as EnvelopeType;
  if (!ENVELOPE_TYPES.includes(type)) throw new AgentError("usage", `--type must be one of ${ENVELOPE_TYPES.join(", ")}`);
  const identity = await settingsIdentity(settings);
  const draft = await draftEnvelope({
    from: settings.agent_id,
    to,
    type,
    payload,
    reply_to: stringFlag(values, "reply-to") ?? null,
    ...(ttlText !== undefined ? { ttl_sec: Number(ttlText) } : {}),
  });
  const envelope = await signEnvelope(draft, identity.keyId, identity.sign);
  const notes: string[] = [];
  // Recorded in the agent's own inbox first, so the receipts that answer it change its record (messages --outbox).
  const answer = await new OutboxSender({ relayUrl: settings.relay_url, agentId: settings.agent_id, identity }, (note) => notes.push(note)).send(envelope);
  if (answer.status !== 202) throw new AgentError("send_failed", `the relay refused the envelope: ${relayErrorText(answer)}`);
  if (switchFlag(values, "json")) return JSON.stringify(notes.length > 0 ? { ...answer.body, notes } : answer.body, null, 2);
  return [`queued at ${to} as id ${String(answer.body.id)} (msg_id ${envelope.msg_id})${answer.body.ack ? "; signed ack received" : ""}`, ...notes.map((n) => `note: ${n}`)].join("\n");
}
