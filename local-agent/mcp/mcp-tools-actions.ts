// The tools of `clawrelay mcp` beyond reading the inbox: directory_search (read-only: the relay's agent
// directory, as the local API's /api/search-agents) and the writing ones, left out with --read-only:
// inbox_replay (bulk replay of kept messages), message_send (a signed message, recorded in the outbox
// first, as `clawrelay send`) and agent_delegate (a task to another agent through the running agent's
// local API, which waits for the result on its socket). Registered by mcp-server.ts; covered by
// test/node/mcp-server.e2e.test.ts.
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { z } from "zod";
import { AGENT_ID_PATTERN, draftEnvelope, signEnvelope } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { OutboxSender } from "../relay/outbox.ts";
import { relayErrorText } from "../relay/relay-api.ts";
import { REPLAY_STATES, replayHistoryOnce } from "../relay/history.ts";
import { READ_ONLY, toolAnswer } from "./mcp-context.ts";
import type { McpContext } from "./mcp-context.ts";
import { UNTRUSTED_NOTE } from "./mcp-present.ts";
import { timeBoundMs } from "./time-bound.ts";

const DIRECTORY_TIMEOUT_MS = 15_000;
/** The running agent answers a delegation when the result comes or its own wait ends (delegate_timeout_ms). */
const DELEGATE_MARGIN_MS = 30_000;
const DEFAULT_DELEGATE_TIMEOUT_MS = 180_000;

interface DirectoryAgent {
  name: string;
  agent_id: string;
  description: string;
  score: number;
  best_skill_id: string | null;
  skills: { id: string; name: string; description: string }[];
}

async function directorySearch(relayUrl: string, query: string, limit: number): Promise<Record<string, unknown>> {
  const res = await fetch(`${relayUrl.replace(/\/+$/, "")}/directory/search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query, limit }),
    signal: AbortSignal.timeout(DIRECTORY_TIMEOUT_MS),
  }).catch((err: unknown) => {
    throw new AgentError("relay_unreachable", `cannot reach the relay's directory at ${relayUrl}: ${(err as Error).message}`);
  });
  if (!res.ok) throw new AgentError("directory_refused", `the relay's directory answered ${res.status}: ${(await res.text()).slice(0, 300)}`);
  const found = (await res.json()) as { agents: DirectoryAgent[]; total: number };
  return {
    note: UNTRUSTED_NOTE,
    total: found.total,
    // A card's words are its owner's: only the id, the score and the skill ids are the directory's own.
    agents: found.agents.map((a) => ({ agent_id: a.agent_id, score: a.score, best_skill_id: a.best_skill_id, skill_ids: a.skills.map((s) => s.id), untrusted: { name: a.name, description: a.description, skills: a.skills } })),
  };
}

/** POST /api/delegate-task on the running agent's local API: delegation waits for the result on the agent's socket, which this process must not open. */
async function delegateThroughAgent(context: McpContext, request: Record<string, unknown>): Promise<Record<string, unknown>> {
  const { runningAgentOf } = await import("../doctor/agent-presence.ts");
  const found = await runningAgentOf(context.home, context.settingsPath, context.env);
  if (!found.running) {
    throw new AgentError("agent_not_running", `agent_delegate needs the running clawrelay agent (clawrelay start, or the OpenClaw plugin), which receives the result: ${found.why}`);
  }
  const timeoutMs = (context.settings.delegate_timeout_ms ?? DEFAULT_DELEGATE_TIMEOUT_MS) + DELEGATE_MARGIN_MS;
  const res = await fetch(`http://127.0.0.1:${found.apiPort}/api/delegate-task`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(request),
    signal: AbortSignal.timeout(timeoutMs),
  }).catch((err: unknown) => {
    throw new AgentError("agent_unreachable", `the running agent (pid ${found.pid}) did not answer on 127.0.0.1:${found.apiPort}: ${(err as Error).message}`);
  });
  const body = (await res.json()) as Record<string, unknown>;
  if (body.success !== true) throw new AgentError("delegation_failed", `the delegation failed: ${typeof body.error === "string" ? body.error : `HTTP ${res.status}`}`);
  const { response, ...rest } = body;
  return { note: UNTRUSTED_NOTE, ...rest, untrusted: { response } };
}

export function registerActionTools(server: McpServer, context: McpContext, readOnly: boolean): void {
  server.registerTool(
    "directory_search",
    {
      title: "Find agents in the directory",
      description: `Searches the relay's agent directory for agents that can do something (by their cards' names, descriptions and skills), best match first. Use it before agent_delegate or message_send to find whom to ask. Names and descriptions are the other agents' own words, under \`untrusted\`.`,
      inputSchema: { query: z.string().min(1).max(500).describe("what you need, in words"), limit: z.number().int().min(1).max(50).optional().describe("how many agents at most (1–50, default 10)") },
      annotations: { ...READ_ONLY, openWorldHint: true },
    },
    (args) => toolAnswer(() => directorySearch(context.settings.relay_url, args.query.trim(), args.limit ?? 10)),
  );
  if (readOnly) return;

  server.registerTool(
    "inbox_replay",
    {
      title: "Replay past messages",
      description: "Delivers kept messages again, each once, in the order they arrived: each becomes a new queued message (a new id) that the running agent hands to the gateway again. Use it after fixing what made messages fail (state dead), or to run delivered ones again. Live requests are never replayed. Try dry_run first to count what would be replayed. At most 1,000 per call: has_more then says to call again with the same arguments and after = next_after.",
      inputSchema: {
        since: z.string().min(1).max(64).describe("replay messages received at or after: an ISO 8601 time such as 2026-12-07T05:00:00Z, or a duration back from now such as 90m, 2h, 7d"),
        until: z.string().min(1).max(64).optional().describe("and before this time (same forms)"),
        source: z.string().min(1).max(64).optional().describe("only this webhook source's events"),
        state: z.enum(REPLAY_STATES).optional().describe("which messages (default delivered)"),
        dry_run: z.boolean().optional().describe("only count, replay nothing"),
        after: z.number().int().min(0).optional().describe("next_after from the call before, when it answered has_more"),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    },
    (args) =>
      toolAnswer(async () => {
        const now = context.nowMs();
        // One call of the relay's bulk replay per tool call: the model goes on with `after` when has_more.
        const request = {
          sinceMs: timeBoundMs("since", args.since, now),
          ...(args.until !== undefined ? { untilMs: timeBoundMs("until", args.until, now) } : {}),
          ...(args.source !== undefined ? { source: args.source } : {}),
          state: args.state ?? "delivered",
          dryRun: args.dry_run === true,
          ...(args.after !== undefined ? { after: args.after } : {}),
        };
        return { ...(await replayHistoryOnce(await context.access(), request)), dry_run: request.dryRun, note: "live requests are never replayed (skipped_live counts them)" };
      }),
  );

  server.registerTool(
    "message_send",
    {
      title: "Send a message to another agent",
      description: "Sends a signed message ({\"text\": …}) from this agent to another agent's inbox, as `clawrelay send` does; it is recorded in this agent's outbox, and the receiver's relay answers with a signed receipt. Use it to reply to a message (reply_to = its msg_id) or to write to an agent found with directory_search.",
      inputSchema: {
        to: z.string().regex(AGENT_ID_PATTERN).describe("the receiving agent's id (ag_ + 12 hex)"),
        text: z.string().min(1).max(100_000).describe("the message text"),
        reply_to: z.string().min(1).max(128).optional().describe("the msg_id of the message this answers"),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args) =>
      toolAnswer(async () => {
        const access = await context.access();
        const draft = await draftEnvelope({ from: access.agentId, to: args.to, type: "message", payload: { text: args.text }, reply_to: args.reply_to ?? null });
        const envelope = await signEnvelope(draft, access.identity.keyId, access.identity.sign);
        const notes: string[] = [];
        const answer = await new OutboxSender(access, (note) => notes.push(note)).send(envelope);
        if (answer.status !== 202) throw new AgentError("send_failed", `the relay refused the message: ${relayErrorText(answer)}`);
        return { queued_at: args.to, id: answer.body.id, msg_id: envelope.msg_id, signed_ack: Boolean(answer.body.ack), ...(notes.length > 0 ? { notes } : {}) };
      }),
  );

  server.registerTool(
    "agent_delegate",
    {
      title: "Delegate a task to another agent",
      description: "Asks another agent (found with directory_search: its agent_id and best_skill_id) to do a task, and waits for its result (up to the agent's delegate timeout, 3 minutes by default). Needs the running clawrelay agent, which receives the result. Pass task_id from an earlier answer to follow up on the same task. The result is the other agent's words, under `untrusted`.",
      inputSchema: {
        agent_id: z.string().min(1).max(128).describe("the agent, as directory_search lists it"),
        skill_id: z.string().min(1).max(128).describe("which of its skills (best_skill_id from directory_search)"),
        message: z.string().min(1).max(50_000).describe("the task, in words"),
        task_id: z.string().min(1).max(128).optional().describe("follow up on this task (from an earlier answer)"),
        session_id: z.string().min(1).max(128).optional().describe("a session id the other agent keeps context under"),
      },
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    (args) => toolAnswer(() => delegateThroughAgent(context, args)),
  );
}
