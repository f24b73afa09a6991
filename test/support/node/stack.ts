// End-to-end pieces: the real relay (the bundled Worker in Miniflare, optionally persisted), agent
// homes claimed on it with an openclaw.json pointing at a stand-in gateway, and the real local agent.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Miniflare } from "miniflare";
import { afterAll, afterEach, beforeAll, inject } from "vitest";
import type { QueueItem } from "../../../protocol/index.ts";
import { startAgent } from "../../../local-agent/agent.ts";
import type { AgentHandle } from "../../../local-agent/agent.ts";
import { cardPath } from "../../../local-agent/society/card-file.ts";
import type { CardFile } from "../../../local-agent/society/card-file.ts";
import { identityFromPrivateKey } from "../../../local-agent/identity.ts";
import { runInit } from "../../../local-agent/cli/init.ts";
import { silentLogger } from "../../../local-agent/logger.ts";
import type { LogFields, Logger } from "../../../local-agent/logger.ts";
import { signedRelayCall } from "../../../local-agent/relay/relay-api.ts";
import { journalPath, loadSettings, saveSettings } from "../../../local-agent/settings.ts";
import type { AgentSettings } from "../../../local-agent/settings.ts";
import { startRelayMiniflare } from "../../../scripts/local-workerd.ts";
import { openClawConfigFor } from "../../../scripts/standin-gateway.ts";
import { startStandinGateway } from "../../../scripts/standin-gateway.ts";
import type { StandinGateway } from "../../../scripts/standin-gateway.ts";
import { steadyPort } from "./steady-port.ts";

/** Inboxes in tests never reach a real hub: key look-ups go to a closed loopback port. */
export const NO_HUB = "http://127.0.0.1:9";

export interface RelayLogLine {
  level: string;
  message: string;
}

export interface LocalRelay {
  url: string;
  port: number;
  /** Stops workerd and starts it again on the same port and storage (a redeploy/restart), optionally with new vars. */
  restart(vars?: Record<string, string>): Promise<void>;
  /** The lines the relay logged that match `pattern`, taken: a test asserts the errors it provoked, and they are not printed. */
  takeLogs(pattern: RegExp): RelayLogLine[];
  /** Prints the lines no test took (console.warn / console.error / console.log by level), so an unexpected error shows. */
  flushLogs(): void;
  stop(): Promise<void>;
}

/** The real relay in Miniflare. What it logs is kept for takeLogs() and printed by flushLogs() (by relayFixture after each test, and by stop()). */
export async function startRelay(options: { persistDir?: string; vars?: Record<string, string> } = {}): Promise<LocalRelay> {
  const bundle = inject("relayBundle");
  const logs: RelayLogLine[] = [];
  const onLog = ({ level, message }: RelayLogLine) => void logs.push({ level, message });
  // A steady port (steady-port.ts): a restart binds it again, and nothing took it meanwhile.
  const port = await steadyPort();
  let mf: Miniflare = startRelayMiniflare(bundle, NO_HUB, { ...options, onLog, port });
  const url = (await mf.ready).origin;
  const flushLogs = () => {
    for (const { level, message } of logs.splice(0)) {
      const print = level === "error" ? console.error : level === "warn" ? console.warn : console.log;
      print(`relay: ${message}`);
    }
  };
  return {
    url,
    port,
    restart: async (vars?: Record<string, string>) => {
      await mf.dispose();
      if (vars) options = { ...options, vars };
      mf = startRelayMiniflare(bundle, NO_HUB, { ...options, port, onLog });
      await mf.ready;
    },
    takeLogs: (pattern) => {
      const taken = logs.filter((line) => pattern.test(line.message));
      for (const line of taken) logs.splice(logs.indexOf(line), 1);
      return taken;
    },
    flushLogs,
    stop: async () => {
      await mf.dispose();
      flushLogs();
    },
  };
}

export interface AgentHome {
  dir: string;
  env: { CLAWRELAY_HOME: string; OPENCLAW_CONFIG_PATH: string; HOME: string };
  settings: AgentSettings;
  settingsPath: string;
  cleanup(): Promise<void>;
}

/** A fresh agent home: openclaw.json (JSON5, as users write it) for `gateway`, claimed on `relay`. */
export interface HomeOptions {
  /** card.json to write into the agent's home (published by the agent on start). */
  card?: CardFile;
  chatCompletions?: boolean;
  /** The inbox's hub (default NO_HUB: none reachable). */
  hubUrl?: string;
  /** The hub prefix openclaw.json maps (default agentgram). */
  prefix?: string;
}

export async function makeAgentHome(relay: LocalRelay, gateway: StandinGateway, name = "Test Agent", options: HomeOptions = {}): Promise<AgentHome> {
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-home-"));
  const configPath = join(dir, "openclaw", "openclaw.json");
  await writeOpenClawConfig(configPath, gateway, "", options.chatCompletions ?? true, options.prefix);
  const env = { CLAWRELAY_HOME: join(dir, "clawrelay"), OPENCLAW_CONFIG_PATH: configPath, HOME: dir };
  const settingsPath = join(env.CLAWRELAY_HOME, "agent.json");
  await runInit({ settingsPath, env, relay: relay.url, hub: options.hubUrl ?? NO_HUB, name });
  // The local API of an agent `clawrelay start` runs from this home: a steady port of its own, not the
  // shared default 19791 and the 19 after it, which agents of files running beside this one take too (one
  // killed, another could take its port, and `status` would find a stranger there).
  saveSettings(settingsPath, { ...loadSettings(settingsPath), api_port: await steadyPort() });
  if (options.card) await writeFile(cardPath(env.CLAWRELAY_HOME), JSON.stringify(options.card));
  return { dir, env, settings: loadSettings(settingsPath), settingsPath, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

export async function writeOpenClawConfig(path: string, gateway: StandinGateway, extra = "", chatCompletions = true, prefix?: string): Promise<void> {
  await mkdir(join(path, ".."), { recursive: true });
  await writeFile(path, openClawConfigFor(gateway, { chatCompletions, extra, ...(prefix ? { prefix } : {}) }));
}

export function runAgent(home: AgentHome, logger: Logger = silentLogger): Promise<AgentHandle> {
  return startAgent({
    settings: home.settings,
    env: home.env,
    logger,
    apiPort: 0,
    cardFile: cardPath(home.env.CLAWRELAY_HOME),
    journalFile: journalPath(home.env.CLAWRELAY_HOME),
  });
}

export interface LogLine {
  level: "info" | "warn" | "error";
  event: string;
  fields: LogFields;
}

/** A logger that keeps every line, for a test to wait for an event of the agent's and read its fields. */
export function recordingLogger(): Logger & { lines: LogLine[] } {
  const lines: LogLine[] = [];
  const keep = (level: LogLine["level"]) => (event: string, fields: LogFields = {}) => void lines.push({ level, event, fields });
  return { lines, info: keep("info"), warn: keep("warn"), error: keep("error") };
}

/** Polls `check` until it returns true; the error says what was awaited. */
export async function waitUntil(what: string, check: () => boolean | Promise<boolean>, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Polls `check` until it returns true, for as long as `progress` keeps changing: a long drain on a busy
 * machine is waited out, one that stopped moving for `stalledMs` fails, saying what was awaited and
 * where it stood. For "nothing stuck" checks, where any fixed limit would be a limit on the machine's speed.
 */
export async function waitWhileProgressing(what: string, check: () => boolean | Promise<boolean>, progress: () => unknown | Promise<unknown>, stalledMs = 20_000): Promise<void> {
  let seen = JSON.stringify(await progress());
  let movedAt = Date.now();
  while (!(await check())) {
    const now = JSON.stringify(await progress());
    if (now !== seen) {
      seen = now;
      movedAt = Date.now();
    } else if (Date.now() - movedAt > stalledMs) {
      throw new Error(`no progress for ${stalledMs} ms waiting for ${what} (stuck at ${now})`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * One relay for a test file (started before all tests, stopped after) and per-test agent homes with
 * their stand-in gateways, cleaned up after each test, newest first. `vars`: the relay's Worker vars.
 */
export function relayFixture(options: { vars?: Record<string, string> } = {}) {
  let relay: LocalRelay | undefined;
  const cleanups: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    relay = await startRelay(options);
  });
  afterAll(() => relay?.stop());
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    relay?.flushLogs();
  });
  return {
    relay: (): LocalRelay => relay!,
    cleanups,
    async setUp(name = "Bob"): Promise<{ gateway: StandinGateway; home: AgentHome }> {
      // A steady port: a test may take the gateway down and bring it back on the same port.
      const gateway = await startStandinGateway({ port: await steadyPort() });
      const home = await makeAgentHome(relay!, gateway, name);
      cleanups.push(() => gateway.close(), () => home.cleanup());
      return { gateway, home };
    },
    /** The real local agent for `home`, closed after the test (before its gateway and home). */
    async run(home: AgentHome, logger: Logger = silentLogger): Promise<AgentHandle> {
      const agent = await runAgent(home, logger);
      cleanups.push(() => agent.close());
      return agent;
    },
  };
}

export interface RelayAnswerJson {
  status: number;
  body: Record<string, unknown>;
}

/** Posts a webhook to `home`'s inbox at `subpath` with its webhook token, as the hub would. */
export async function postHook(relayUrl: string, home: AgentHome, subpath: string, body: string): Promise<RelayAnswerJson> {
  const res = await fetch(`${relayUrl}/inbox/${home.settings.agent_id}/hooks/${subpath}`, {
    method: "POST",
    headers: { authorization: `Bearer ${home.settings.webhook_token}`, "content-type": "application/json" },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A request on `home`'s inbox signed with the agent's key (polling and the owner's queue API). */
export async function ownerCall(relayUrl: string, home: AgentHome, method: string, path: string): Promise<RelayAnswerJson> {
  const identity = await identityFromPrivateKey(home.settings.key.private_key, home.settings.key.key_id);
  return signedRelayCall(relayUrl, identity, method, `/inbox/${home.settings.agent_id}${path}`);
}

/** Every message the relay holds for `home` in `state` (the owner's queue API, paged). */
export async function queueItems(relayUrl: string, home: AgentHome, state: "queued" | "sent" | "dead" | "all" = "all"): Promise<QueueItem[]> {
  const items: QueueItem[] = [];
  for (let after = 0, page = 0; page < 100; page++) {
    const answer = await ownerCall(relayUrl, home, "GET", `/queue?state=${state}&limit=200&after=${after}`);
    if (answer.status !== 200) throw new Error(`queue listing answered ${answer.status}: ${JSON.stringify(answer.body)}`);
    const body = answer.body as { messages: QueueItem[]; has_more: boolean; next_after: number };
    items.push(...body.messages);
    if (!body.has_more) return items;
    after = body.next_after;
  }
  throw new Error("queue listing did not end within 100 pages");
}
