// The Society side, one of the agent's parts (agent.ts): the card listed in the relay's directory
// (card-file.ts), delegations this agent sends and the results it waits for (delegation.ts), and the
// tasks others send it, run on its own gateway (task-runner.ts). The delivery part hands it every
// envelope first (intercept); the local API's Society routes read it (apiDeps). Covered by
// test/node/delegation.e2e.test.ts and society-api.e2e.test.ts.
import type { Envelope } from "../../protocol/index.ts";
import type { AgentStatus } from "../agent-status.ts";
import { portIsListening } from "../gateway/agent-gateway.ts";
import type { GatewaySettings } from "../gateway/openclaw-config.ts";
import type { Identity } from "../identity.ts";
import type { Logger } from "../logger.ts";
import type { AgentSettings } from "../settings.ts";
import { OutboxSender } from "../relay/outbox.ts";
import { publishCard, readCardFile } from "./card-file.ts";
import { Delegator } from "./delegation.ts";
import type { SocietyApiDeps } from "./society-api.ts";
import { TaskRunner } from "./task-runner.ts";

export const DEFAULT_DELEGATE_TIMEOUT_MS = 180_000;
/** How long a stop waits for the tasks running here to send their results. */
export const TASKS_GRACE_MS = 2000;

export interface AgentSocietyOptions {
  settings: AgentSettings;
  identity: Identity;
  logger: Logger;
  /** card.json to publish to the directory (see examples/card.json); none = not listed. */
  cardFile?: string;
  /** The gateway's settings now (tasks run on its chat completions). */
  gateway(): GatewaySettings;
  tasksGraceMs?: number;
}

export interface AgentSociety {
  /** Results of our own delegations go to their waiting callers; tasks for us go to the task runner. */
  intercept(envelope: Envelope): boolean;
  /** What the Society routes read (the API's port is the local API's own). */
  apiDeps(relayConnected: () => boolean, startedAt: number): Omit<SocietyApiDeps, "apiPort">;
  /** Lists the card in the directory (once the agent runs); says so when there is none. */
  publish(): Promise<void>;
  status(): AgentStatus["delegation"];
  /** Gives running tasks tasksGraceMs (default TASKS_GRACE_MS) to finish. Idempotent. */
  close(): Promise<void>;
}

export function startSociety(options: AgentSocietyOptions): AgentSociety {
  const { settings, identity, logger } = options;
  const card = options.cardFile ? readCardFile(options.cardFile) : null;
  const timeoutMs = settings.delegate_timeout_ms ?? DEFAULT_DELEGATE_TIMEOUT_MS;
  // One sender for delegations and results: a relay without an outbox is noted once.
  const outbox = new OutboxSender({ relayUrl: settings.relay_url, agentId: identity.agentId, identity }, (note) => logger.warn("outbox", { note }));
  const send = (envelope: Envelope) => outbox.send(envelope);
  const delegator = new Delegator({ relayUrl: settings.relay_url, send, identity, timeoutMs, logger });
  const tasks = new TaskRunner({
    send,
    identity,
    card: () => card,
    chat: () => {
      const now = options.gateway();
      return { port: now.port, authToken: now.authToken, authProblem: now.auth.problem, model: settings.openclaw_agent ?? "openclaw", enabled: now.chatCompletionsEnabled };
    },
    timeoutMs,
    logger,
    reachable: (port) => portIsListening(port),
  });
  let listed = false;
  let closing: Promise<void> | null = null;
  return {
    intercept: (envelope) => delegator.intercept(envelope) || tasks.intercept(envelope),
    apiDeps: (relayConnected, startedAt) => ({
      relayUrl: settings.relay_url,
      agentName: () => card?.name ?? settings.display_name ?? settings.agent_id,
      relayConnected,
      listed: () => listed,
      gatewayReachable: () => portIsListening(options.gateway().port),
      startedAt,
      delegator,
    }),
    publish: async () => {
      if (!card) return logger.info("no card.json: this agent is not listed in the directory", { path: options.cardFile ?? null });
      await publishCard(settings.relay_url, identity, card, logger);
      listed = true;
    },
    status: () => ({ waiting: delegator.waiting, late_results_dropped: delegator.lateResultsDropped }),
    close: () => (closing ??= Promise.race([tasks.idle(), new Promise<void>((resolve) => setTimeout(resolve, options.tasksGraceMs ?? TASKS_GRACE_MS).unref())])),
  };
}
