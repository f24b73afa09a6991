// Delegating a task to another agent, two-phase over signed envelopes, as the Society AI plugin's delegate-task does:
// the waiter for the result is registered first, then the task is sent as a signed `message`; the
// relay's signed ack is phase 1, the target's signed `result` (reply_to = the task's msg_id) phase 2.
// The task is recorded in the agent's outbox before it is posted, so the ack only sets its record there
// (no agent run) and the result, which is still delivered, sets it answered.
import { draftEnvelope, signEnvelope } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import type { Identity } from "../identity.ts";
import type { Logger } from "../logger.ts";
import { relayErrorText } from "../relay/relay-api.ts";
import type { RelayAnswer } from "../relay/relay-api.ts";

export interface DelegateRequest {
  agent_id: string;
  skill_id: string;
  message: string;
  task_id?: string;
  session_id?: string;
}

export interface ApiAnswer {
  status: number;
  body: Record<string, unknown>;
}

interface Waiter {
  from: string;
  resolve(result: Envelope): void;
}

const REMEMBERED = 1000;
const TASK_TTL_MARGIN_SEC = 60;
/** How long a task can be followed up after its last exchange (kept in memory: a restart forgets). */
export const TASK_MEMORY_MS = 24 * 3600_000;

/** A task started here: follow-ups must name the same agent and skill. */
interface KnownTask {
  agent: string;
  skill: string;
  lastUsed: number;
}

export interface DelegatorOptions {
  relayUrl: string;
  /** Records the envelope in the agent's outbox, then posts it (relay/outbox.ts OutboxSender.send). */
  send(envelope: Envelope): Promise<RelayAnswer>;
  identity: Identity;
  timeoutMs: number;
  logger: Logger;
}

export class Delegator {
  /** Results that arrived after their caller had timed out, and were dropped. */
  lateResultsDropped = 0;
  private readonly waiters = new Map<string, Waiter>();
  /** Tasks whose caller stopped waiting: a late result is dropped, never handed to anyone else. */
  private readonly expired = new Set<string>();
  /** Tasks sent from here: the relay's ack of each (queued to our inbox too) is phase 1, already seen. */
  private readonly sent = new Set<string>();
  /** task_id → what it was started with, oldest first (a Map keeps insertion order; re-use moves it last). */
  private readonly tasks = new Map<string, KnownTask>();
  private readonly options: DelegatorOptions;

  constructor(options: DelegatorOptions) {
    this.options = options;
  }

  async delegate(request: DelegateRequest): Promise<ApiAnswer> {
    const { relayUrl, identity, timeoutMs, logger } = this.options;
    const agent = request.agent_id;
    const skill = request.skill_id;
    // Always HTTP 200: scripts read `.success` and `.error` after `curl -sf`, which hides error statuses.
    const fail = (error: string, extra: Record<string, unknown> = {}): ApiAnswer => ({
      status: 200,
      body: { success: false, error, agent, skill, ...extra },
    });
    if (request.task_id !== undefined) {
      const known = this.knownTask(request.task_id);
      if (!known) {
        return fail(`task_id "${request.task_id}" is not a task this agent started (or it was forgotten: 24 h after its last message, or at a restart); leave task_id out to start a new task`, { task_id: request.task_id, status: "failed" });
      }
      if (known.agent !== agent) {
        return fail(`task ${request.task_id} is with ${known.agent}, not ${agent}; leave task_id out to start a new task with ${agent}`, { task_id: request.task_id, status: "failed" });
      }
      if (known.skill !== skill) {
        return fail(`task ${request.task_id} uses the skill "${known.skill}"; a follow-up keeps its skill — to use "${skill}", leave task_id out to start a new task`, { task_id: request.task_id, status: "failed" });
      }
    }
    const cardRes = await fetch(`${relayUrl}/directory/agents/${encodeURIComponent(agent)}`).catch(() => null);
    if (!cardRes) return fail(`cannot reach the relay at ${relayUrl}`);
    if (cardRes.status === 404) return fail(`Agent "${agent}" not found in the directory (search first: /api/search-agents)`);
    if (!cardRes.ok) return fail(`the relay's directory answered ${cardRes.status} for ${agent}; try again`);
    const card = (await cardRes.json()) as { agent_id: string; skills: { id: string }[] };
    if (!card.skills.some((s) => s.id === skill)) {
      return fail(`${agent} offers no skill "${skill}"; its skills are: ${card.skills.map((s) => s.id).join(", ") || "none"}`);
    }
    const taskId = request.task_id ?? crypto.randomUUID();
    const payload: Record<string, unknown> = { text: request.message, skill_id: skill, task_id: taskId, ...(request.session_id ? { session_id: request.session_id } : {}) };
    // The task may still reach a target that comes back shortly after we stop waiting; its late
    // result is then dropped here (see intercept), never handed to another caller.
    const ttl_sec = Math.ceil(timeoutMs / 1000) + TASK_TTL_MARGIN_SEC;
    const draft = await draftEnvelope({ from: identity.agentId, to: card.agent_id, type: "message", payload, ttl_sec });
    const envelope = await signEnvelope(draft, identity.keyId, identity.sign);

    // Registered before sending, so a result that comes back faster than the relay's answer is kept.
    let timer: NodeJS.Timeout | undefined;
    const result = new Promise<Envelope | null>((resolve) => {
      this.waiters.set(envelope.msg_id, { from: card.agent_id, resolve });
      timer = setTimeout(() => resolve(null), timeoutMs);
    });
    // The relay queues its ack to our inbox before it answers this POST: know the task first.
    remember(this.sent, envelope.msg_id);
    const sent = await this.options.send(envelope).catch((err: Error) => ({ status: 0, body: { error: { code: "unreachable", message: err.message } } }));
    if (sent.status !== 202) {
      clearTimeout(timer);
      this.waiters.delete(envelope.msg_id);
      return fail(`the relay refused the task for ${agent}: ${relayErrorText(sent)}`);
    }
    this.rememberTask(taskId, { agent, skill, lastUsed: Date.now() });
    logger.info("task sent", { agent, skill, task_id: taskId, msg_id: envelope.msg_id });
    const answer = await result;
    clearTimeout(timer);
    this.waiters.delete(envelope.msg_id);
    if (!answer) {
      remember(this.expired, envelope.msg_id);
      return fail(`Delegation to ${agent} timed out (${timeoutMs}ms)`, { task_id: taskId });
    }
    const p = answer.payload;
    const status = p.status === "input-required" ? "input-required" : p.status === "failed" || answer.type === "error" ? "failed" : "completed";
    if (status === "failed") {
      const error = (p.error as { message?: unknown } | undefined)?.message ?? p.error ?? p.text ?? "the target agent failed the task";
      return fail(String(error), { task_id: taskId, status });
    }
    return { status: 200, body: { success: true, task_id: taskId, status, response: String(p.text ?? ""), agent, skill } };
  }

  /** The task, if it was started here and used within TASK_MEMORY_MS. */
  private knownTask(taskId: string): KnownTask | null {
    const known = this.tasks.get(taskId);
    if (!known) return null;
    if (Date.now() - known.lastUsed > TASK_MEMORY_MS) {
      this.tasks.delete(taskId);
      return null;
    }
    return known;
  }

  private rememberTask(taskId: string, task: KnownTask): void {
    this.tasks.delete(taskId);
    if (this.tasks.size >= REMEMBERED) this.tasks.delete(this.tasks.keys().next().value!);
    this.tasks.set(taskId, task);
  }

  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Takes a receipt that answers a task sent from here; true when it was for us. The relay's ack of a
   * task is consumed silently: passing it to the gateway would start an agent run per delegation.
   */
  intercept(envelope: Envelope): boolean {
    if (!envelope.reply_to) return false;
    if (envelope.type === "ack") return this.sent.has(envelope.reply_to);
    if (envelope.type !== "result" && envelope.type !== "error") return false;
    const waiter = this.waiters.get(envelope.reply_to);
    if (waiter && waiter.from === envelope.from) {
      waiter.resolve(envelope);
      return true;
    }
    if (this.expired.has(envelope.reply_to)) {
      this.lateResultsDropped++;
      this.options.logger.warn("late result dropped", { reply_to: envelope.reply_to, from: envelope.from, note: "its caller had already timed out" });
      return true;
    }
    return false;
  }

}

/** Adds to a bounded set, forgetting the oldest entry first. */
function remember(set: Set<string>, msgId: string): void {
  if (set.size >= REMEMBERED) set.delete(set.values().next().value!);
  set.add(msgId);
}
