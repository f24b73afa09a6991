// The target side of delegation: a `message` envelope carrying task_id and skill_id is a task. It runs
// on this agent's own gateway (chat completions) and a signed `result` goes back to the sender.
// Tasks run beside the ordered hook delivery (a long think must not hold webhooks back).
import { draftEnvelope, signEnvelope } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import type { CardFile } from "./card-file.ts";
import { CHAT_COMPLETIONS_HINT, runChat, taskStatusOf } from "../gateway/chat-completions.ts";
import type { ChatTarget } from "../gateway/chat-completions.ts";
import type { Identity } from "../identity.ts";
import type { Logger } from "../logger.ts";
import { relayErrorText } from "../relay/relay-api.ts";
import type { RelayAnswer } from "../relay/relay-api.ts";

export interface TaskRunnerOptions {
  /** Records the result in the agent's outbox, then posts it (relay/outbox.ts OutboxSender.send). */
  send(envelope: Envelope): Promise<RelayAnswer>;
  identity: Identity;
  card(): CardFile | null;
  /** `authProblem`: why no gateway token could be found (logged here, never sent to the requester). */
  chat(): ChatTarget & { enabled: boolean; authProblem?: string | null };
  timeoutMs: number;
  logger: Logger;
  /** Whether something listens on the gateway's port (agent.ts: portIsListening). */
  reachable(port: number): Promise<boolean>;
}

export const GATEWAY_DOWN = "the target agent's OpenClaw gateway is not running (nothing answers on its port); its owner should start it, then send the task again";

const MAX_CONCURRENT = 4;

export function isTask(envelope: Envelope): boolean {
  return envelope.type === "message" && typeof envelope.payload.task_id === "string" && typeof envelope.payload.skill_id === "string";
}

export class TaskRunner {
  private running = 0;
  private readonly waiting: Envelope[] = [];
  private readonly inFlight = new Set<Promise<void>>();
  private readonly options: TaskRunnerOptions;

  constructor(options: TaskRunnerOptions) {
    this.options = options;
  }

  intercept(envelope: Envelope): boolean {
    if (!isTask(envelope)) return false;
    this.waiting.push(envelope);
    this.drain();
    return true;
  }

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight]);
  }

  private drain(): void {
    while (this.running < MAX_CONCURRENT && this.waiting.length > 0) {
      const task = this.waiting.shift()!;
      this.running++;
      const run = this.run(task)
        .catch((err: unknown) => this.options.logger.error("task failed", { msg_id: task.msg_id, error: String(err) }))
        .finally(() => {
          this.running--;
          this.inFlight.delete(run);
          this.drain();
        });
      this.inFlight.add(run);
    }
  }

  private async run(task: Envelope): Promise<void> {
    const { logger } = this.options;
    const taskId = String(task.payload.task_id);
    const skillId = String(task.payload.skill_id);
    const card = this.options.card();
    const chat = this.options.chat();
    let payload: Record<string, unknown>;
    if (!card?.skills.some((s) => s.id === skillId)) {
      payload = { status: "failed", error: `${card?.name ?? this.options.identity.agentId} does not offer the skill "${skillId}"` };
    } else if (!(await this.options.reachable(chat.port))) {
      // Asked first: a gateway that is not running says nothing about its settings.
      payload = { status: "failed", error: GATEWAY_DOWN };
    } else if (!chat.enabled) {
      payload = { status: "failed", error: CHAT_COMPLETIONS_HINT };
    } else {
      // One gateway session per (requester, task): follow-ups with the same task_id share the history.
      const outcome = await runChat(chat, `clawrelay:${task.from}:${taskId}`, String(task.payload.text ?? ""), this.options.timeoutMs);
      if (!outcome.ok && chat.authProblem) logger.warn("delegated task failed; the gateway token may be why", { task_id: taskId, problem: chat.authProblem });
      payload = outcome.ok ? { ...taskStatusOf(outcome.text) } : { status: "failed", error: outcome.reason };
    }
    const result = await signEnvelope(
      await draftEnvelope({
        from: this.options.identity.agentId,
        to: task.from,
        type: "result",
        reply_to: task.msg_id,
        payload: { ...payload, task_id: taskId, skill_id: skillId },
      }),
      this.options.identity.keyId,
      this.options.identity.sign,
    );
    const sent = await this.options.send(result);
    if (sent.status !== 202) logger.error("result not delivered", { to: task.from, task_id: taskId, error: relayErrorText(sent) });
    else logger.info("task answered", { to: task.from, task_id: taskId, skill: skillId, status: String(payload.status) });
  }
}
