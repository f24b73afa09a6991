// The agent's outbox at its relay (docs/protocol.md, "The outbox and receipt filing"): every envelope it
// sends (`clawrelay send`, delegations, a task's result) is recorded in its own inbox BEFORE it is posted
// — an ack from an inbox on the same relay is handed over before the 202, and must find the record —
// and the post's outcome is said when no receipt will (refused, unreachable, or taken with no ack to
// come). A relay from before the outbox (its route answers 404 not_found) is noted once, and sending goes
// on as before: receipts then reach the agent as they always did. Also `messages --outbox`'s listing and
// the acks setting. Used by cli/cli-messages.ts and society/; covered by test/node/outbox.e2e.test.ts.
import type { AckDelivery, Envelope, OutboxOutcome, OutboxPage, OutboxRecord, OutboxRecordRequest } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import type { InboxAccess } from "./messages.ts";
import { postEnvelope, relayErrorText, signedRelayCall } from "./relay-api.ts";
import type { RelayAnswer } from "./relay-api.ts";

/** What a relay from before the outbox answers for its routes (worker/http-errors.ts answerNotFound's code). */
function isOlderRelay(answer: RelayAnswer): boolean {
  const error = answer.body.error as { code?: unknown } | undefined;
  return answer.status === 404 && error?.code === "not_found";
}

export const NO_OUTBOX_NOTE = "the relay keeps no outbox (it is older than this agent): sent messages are not recorded there, and their receipts reach the agent as before";

/** One sender per process (or command): it stops asking a relay that has no outbox, and says so once. */
export class OutboxSender {
  private readonly access: InboxAccess;
  private readonly note: (text: string) => void;
  private relayHasOutbox = true;

  constructor(access: InboxAccess, note: (text: string) => void) {
    this.access = access;
    this.note = note;
  }

  private path(suffix = ""): string {
    return `/inbox/${this.access.agentId}/outbox${suffix}`;
  }

  /** Records, posts, and says the outcome when no receipt will; the relay's answer to the post, as postEnvelope's. */
  async send(envelope: Envelope): Promise<RelayAnswer> {
    const recorded = await this.record(envelope);
    let answer: RelayAnswer;
    try {
      answer = await postEnvelope(this.access.relayUrl, envelope);
    } catch (err) {
      const code = err instanceof AgentError ? err.code : "post_failed";
      if (recorded) await this.settle(envelope.msg_id, { outcome: "refused", error: { code, message: (err as Error).message.slice(0, 500) } });
      throw err;
    }
    if (!recorded) return answer;
    if (answer.status !== 202) {
      const error = answer.body.error as { code?: unknown } | undefined;
      const code = typeof error?.code === "string" && error.code !== "" ? error.code.slice(0, 64) : `http_${answer.status}`;
      await this.settle(envelope.msg_id, { outcome: "refused", error: { code, message: relayErrorText(answer).slice(0, 500) } });
    } else if (!answer.body.ack || envelope.to === this.access.agentId) {
      // No ack will come to the inbox (a result or an error is never acked; an ack to oneself is not sent): taken is all it will say.
      await this.settle(envelope.msg_id, { outcome: "queued" });
    }
    return answer;
  }

  /** Whether the record was made; a failure to record never stops the message (its receipts then come as before). */
  private async record(envelope: Envelope): Promise<boolean> {
    if (!this.relayHasOutbox) return false;
    const body: OutboxRecordRequest = { msg_id: envelope.msg_id, to: envelope.to, type: envelope.type, reply_to: envelope.reply_to, topic: envelope.topic ?? null };
    let answer: RelayAnswer;
    try {
      answer = await signedRelayCall(this.access.relayUrl, this.access.identity, "POST", this.path(), body);
    } catch (err) {
      this.note(`not recorded in the outbox (${(err as Error).message}); sending anyway`);
      return false;
    }
    if (isOlderRelay(answer)) {
      this.relayHasOutbox = false;
      this.note(NO_OUTBOX_NOTE);
      return false;
    }
    if (answer.status !== 201 && answer.status !== 200) {
      this.note(`not recorded in the outbox (${relayErrorText(answer)}); sending anyway`);
      return false;
    }
    return true;
  }

  private async settle(msgId: string, outcome: OutboxOutcome): Promise<void> {
    const answer = await signedRelayCall(this.access.relayUrl, this.access.identity, "POST", this.path(`/${encodeURIComponent(msgId)}/outcome`), outcome).catch((err: Error) => ({ status: 0, body: { error: { code: "unreachable", message: err.message } } }));
    if (answer.status !== 200) this.note(`the outbox record of ${msgId} still says "sending": the relay did not take its outcome (${relayErrorText(answer)})`);
  }
}

/** Listing more than this is for the HTTP API's pages (the relay keeps 1,000). */
const LIST_CAP = 1000;

/** The outbox, newest first, `cap` records at most (pages of 200), with the acks setting. */
export async function listOutbox(access: InboxAccess, cap = LIST_CAP): Promise<{ records: OutboxRecord[]; total: number; acks: AckDelivery; truncated: boolean }> {
  const records: OutboxRecord[] = [];
  let before = 0;
  for (;;) {
    const page = (await outboxCall(access, "GET", `?limit=${Math.min(200, cap)}&before=${before}`, "cannot list the outbox")).body as unknown as OutboxPage;
    records.push(...page.records);
    if (!page.has_more || page.next_before === null || records.length >= cap) return { records, total: page.total, acks: page.acks, truncated: page.has_more };
    before = page.next_before;
  }
}

export async function setAckDelivery(access: InboxAccess, acks: AckDelivery): Promise<AckDelivery> {
  return ((await outboxCall(access, "PUT", "/settings", "cannot change the acks setting", { acks })).body as { acks: AckDelivery }).acks;
}

async function outboxCall(access: InboxAccess, method: string, suffix: string, what: string, body?: unknown): Promise<RelayAnswer> {
  const answer = await signedRelayCall(access.relayUrl, access.identity, method, `/inbox/${access.agentId}/outbox${suffix}`, body);
  if (isOlderRelay(answer)) throw new AgentError("relay_has_no_outbox", `${what}: ${NO_OUTBOX_NOTE}; update the relay (npm run deploy) to keep one`, 404);
  if (answer.status < 200 || answer.status > 299) throw new AgentError("relay_refused", `${what}: the relay answered ${relayErrorText(answer)}`, answer.status);
  return answer;
}
