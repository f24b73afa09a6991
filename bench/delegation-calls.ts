// The two timed calls of bench/directory-bench.ts part 2 (delegation-bench.ts): a delegation through
// the requester's local API, and the target's chat completion posted straight to its gateway.
import type { TimedLog } from "./delegation-agents.ts";
import { SKILL, TARGET_CARD } from "./delegation-agents.ts";
import type { HttpClient, LoadResult } from "./http-client.ts";

export interface DelegationRow {
  /** POST /api/delegate-task -> 200 {success: true}, ms. */
  delegate: LoadResult;
  /** POST /v1/chat/completions straight to the target's gateway -> 200, ms. */
  chat: LoadResult;
  /** Per measured delegation: API request -> requester logged "task sent" (card look-up, signing, POST -> 202). */
  sentMs: number[];
  /** "task sent" -> the API's answer read by the bench: the task to the target and its result back. */
  restMs: number[];
  /** "task sent" -> target logged "task answered" (relay -> target socket, gateway chat, signing, result POST -> 202). */
  answeredMs: number[];
  tasks: { taskId: string; start: number; end: number }[];
  failures: string[];
}

export interface DelegationSetup {
  api: HttpClient;
  gatewayClient: HttpClient;
  gatewayToken: string;
  requesterLog: TimedLog;
  targetLog: TimedLog;
}

/** Every message (and baseline `user`) in the run is distinct, across rows too. */
let messageSeq = 0;

export function delegationOps(setup: DelegationSetup, row: DelegationRow, tolerateFailures: boolean) {
  const message = (kind: string) => `Will it rain in Paris tomorrow morning? (${kind} ${++messageSeq})`;
  const failed = (what: string): number => {
    if (!tolerateFailures) throw new Error(what);
    row.failures.push(what);
    return Number.NaN;
  };
  const delegate = async (record: boolean): Promise<number> => {
    const text = message("task");
    const body = JSON.stringify({ agent_id: TARGET_CARD.name, skill_id: SKILL, message: text });
    const start = performance.now();
    const answer = await setup.api.request("POST", "/api/delegate-task", { "content-type": "application/json" }, body);
    const end = performance.now();
    const parsed = JSON.parse(answer.body) as { success?: boolean; response?: string; task_id?: string; error?: string };
    if (answer.status !== 200 || parsed.success !== true || parsed.response !== `Reply 1: I have heard "${text}"`) {
      return failed(`delegate-task -> ${answer.status}: ${answer.body.slice(0, 300)}`);
    }
    // The target may log "task answered" after the requester already answered: segments are read at the end.
    if (record) row.tasks.push({ taskId: parsed.task_id!, start, end });
    return end - start;
  };
  // The request the target agent's task runner makes (local-agent/gateway/chat-completions.ts runChat), sent
  // straight: a fresh `user` each time, as every delegation here is a fresh task.
  const chat = async (): Promise<number> => {
    const text = message("direct");
    const body = JSON.stringify({ model: "openclaw", user: `clawrelay-bench:direct:${messageSeq}`, messages: [{ role: "user", content: text }] });
    const start = performance.now();
    const answer = await setup.gatewayClient.request("POST", "/v1/chat/completions", { "content-type": "application/json", authorization: `Bearer ${setup.gatewayToken}` }, body);
    const elapsed = performance.now() - start;
    const content = answer.status === 200 ? (JSON.parse(answer.body) as { choices: { message: { content: string } }[] }).choices[0]?.message.content : null;
    if (content !== `Reply 1: I have heard "${text}"`) return failed(`chat completions -> ${answer.status}: ${answer.body.slice(0, 300)}`);
    return elapsed;
  };
  return { delegate, chat };
}
