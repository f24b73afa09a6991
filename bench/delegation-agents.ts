// The two local agents of bench/directory-bench.ts part 2 (delegation-bench.ts): their homes, the
// target's card, a logger that times their events, and startAgent in this process (as
// test/support/node/stack.ts does).
import { writeFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { startAgent } from "../local-agent/agent.ts";
import type { AgentHandle } from "../local-agent/agent.ts";
import { cardPath } from "../local-agent/society/card-file.ts";
import type { CardFile } from "../local-agent/society/card-file.ts";
import { identityFromPrivateKey } from "../local-agent/identity.ts";
import type { Logger, LogFields } from "../local-agent/logger.ts";
import { relayErrorText, signedRelayCall } from "../local-agent/relay/relay-api.ts";
import { journalPath, loadSettings, settingsPath } from "../local-agent/settings.ts";
import type { AgentSettings } from "../local-agent/settings.ts";
import type { StandinGateway } from "../scripts/standin-gateway.ts";
import { makeBenchHome } from "./agent-home.ts";
import type { BenchRun } from "./bench-run.ts";
import { LOOPBACK_HUB_URL } from "./relay-agents.ts";

export const SKILL = "forecast";
export const TARGET_CARD: CardFile = {
  name: "bench-weather-target",
  description: "Real-time weather forecasts and severe-weather alerts for any city",
  skills: [
    { id: SKILL, name: "Weather Forecast", description: "Current conditions and a 7-day forecast for a city", tags: ["weather", "forecast"], examples: ["Will it rain in Paris tomorrow?"] },
  ],
};
/** What a delegation waits for the target's result here (the agent's default is 180 s). */
export const DELEGATE_TIMEOUT_MS = 20_000;
/** Both agents' inboxes are re-claimed with this (the ceiling): see makeDelegationHome. */
export const RATE_PER_MINUTE = 10_000;

/** A logger that keeps when each event happened (performance.now()), and counts warnings and errors. */
export class TimedLog implements Logger {
  readonly at = new Map<string, number>();
  readonly problems: string[] = [];
  private readonly key: string;
  private readonly event: string;

  /** Remembers `event`'s time by its `key` field (task_id). */
  constructor(event: string, key: string) {
    this.event = event;
    this.key = key;
  }

  info(event: string, fields: LogFields = {}): void {
    if (event === this.event) this.at.set(String(fields[this.key]), performance.now());
  }

  warn(event: string): void {
    this.problems.push(`warn ${event}`);
  }

  error(event: string, fields: LogFields = {}): void {
    this.problems.push(`error ${event} ${fields.error ?? ""}`);
  }
}

export interface DelegationHome {
  settings: AgentSettings;
  env: Record<string, string>;
}

/**
 * A home claimed with `runInit` (makeBenchHome, as `clawrelay init` does), then re-claimed with
 * rate_per_minute at its ceiling: with the default 20 a minute per sender, the target's inbox would
 * refuse the requester's 21st task in a minute, and the requester's inbox the target's 21st result.
 */
export async function makeDelegationHome(dir: string, relayUrl: string, gateway: StandinGateway, name: string, card?: CardFile): Promise<DelegationHome> {
  const { env } = await makeBenchHome(dir, relayUrl, LOOPBACK_HUB_URL, gateway, name);
  if (card) await writeFile(cardPath(env.CLAWRELAY_HOME!), JSON.stringify(card));
  const settings = loadSettings(settingsPath(env));
  const identity = identityFromPrivateKey(settings.key.private_key, settings.key.key_id);
  const raised = await signedRelayCall(relayUrl, identity, "PUT", `/inbox/${settings.agent_id}`, { rate_per_minute: RATE_PER_MINUTE });
  if (raised.status !== 200) throw new Error(`raising the rate of ${settings.agent_id}: ${relayErrorText(raised)}`);
  return { settings: { ...settings, delegate_timeout_ms: DELEGATE_TIMEOUT_MS }, env };
}

/** The agent started in this process (local API on an ephemeral port), once its relay socket is up. */
export async function runAgent(run: BenchRun, home: DelegationHome, logger: Logger): Promise<AgentHandle> {
  const agent = await startAgent({
    settings: home.settings,
    env: home.env,
    logger,
    apiPort: 0,
    cardFile: cardPath(home.env.CLAWRELAY_HOME!),
    journalFile: journalPath(home.env.CLAWRELAY_HOME!),
  });
  run.own(() => agent.close());
  const deadline = Date.now() + 15_000;
  while (agent.status().relay.state !== "connected") {
    if (Date.now() > deadline) throw new Error(`agent ${home.settings.agent_id} did not connect to the relay within 15 s`);
    await sleep(25);
  }
  return agent;
}

/** Hooks the gateway received since `since`, and how many of them were the relay's acks of a task. */
export function hookCounts(gateway: StandinGateway, since: number): { total: number; acks: number } {
  const hooks = gateway.received.slice(since);
  return { total: hooks.length, acks: hooks.filter((h) => h.body.toString("utf8").includes("received your message")).length };
}
