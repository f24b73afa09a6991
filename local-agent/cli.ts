#!/usr/bin/env -S node --v8-pool-size=0
// clawrelay — the local agent's command line. The only module that touches process: argv, output,
// exit codes and signals. (The shebang asks V8 for no worker-thread pool: the agent is a small,
// mostly idle daemon; its 10 MB heap collects fine on the main thread, and four fewer threads save
// ~4 MiB resident. `env -S` splits the line on Linux, macOS and BSD; npm's Windows shims read it too.) Everything else returns values or throws AgentError; the command table and
// help texts are in cli-help.ts, argv parsing in cli-args.ts, reading flags in cli-flags.ts, errors to
// one line in cli-errors.ts, status text in cli-status.ts, messages and send in cli-messages.ts.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { HUB_PREFIXES } from "../protocol/index.ts";
import type { HubPrefix } from "../protocol/index.ts";
// Each command's modules load when that command runs: `start` stays as small in memory as it can be.
import type { AgentStatusAnswer } from "./agent-status.ts";
import { cardPath } from "./society/card-file.ts";
import { UsageError, parseInvocation } from "./cli/cli-args.ts";
import { bindFlags, choiceFlag, gatewayFlags, httpUrlFlag, stringFlag, switchFlag } from "./cli/cli-flags.ts";
import type { Values } from "./cli/cli-args.ts";
import { failureText } from "./cli/cli-errors.ts";
import { helpText } from "./cli/cli-help.ts";
import type { HelpTopic } from "./cli/cli-help.ts";
import { statusText } from "./cli/cli-status.ts";
import { AgentError } from "./errors.ts";
import { createLogger } from "./logger.ts";
import { CLAWRELAY_VERSION } from "./package-version.ts";
import type { SourcesAction } from "./cli/cli-sources.ts";
import { HUB_MODES, journalPath, loadSettings, settingsHome, settingsPath } from "./settings.ts";
import type { AgentSettings, HubMode } from "./settings.ts";

const argv = process.argv.slice(2);
const beforeDashes = argv.indexOf("--") === -1 ? argv : argv.slice(0, argv.indexOf("--"));
/** Read before parsing, so that a failure of the parse itself honours it. */
const debug = beforeDashes.includes("--debug");
/** Whose usage a usage mistake prints, and where a relay URL came from; set as the command is known. */
let topic: HelpTopic = "root";
let relayHint = "check the relay URL (clawrelay init --relay URL)";

let values: Values = {};
let positionals: string[] = [];
let env: Record<string, string | undefined> = process.env;
let path = settingsPath(env);

const str = (name: string): string | undefined => stringFlag(values, name);
const flag = (name: string): boolean => switchFlag(values, name);
const oneOf = <T extends string>(name: string, allowed: readonly T[]): T | undefined => choiceFlag(values, name, allowed);

function settingsWithFlags(): AgentSettings {
  const gateway = gatewayFlags(values);
  const settings = loadSettings(path);
  return { ...settings, gateway: { ...settings.gateway, ...gateway } };
}

function print(line: string): void {
  process.stdout.write(line + "\n");
}

async function start(): Promise<void> {
  const settings = settingsWithFlags();
  const logger = createLogger({ json: flag("json") });
  const home = settingsHome(env);
  const { startAgent } = await import("./agent.ts");
  const agent = await startAgent({ settings, env, logger, runDir: home, cardFile: cardPath(home), journalFile: journalPath(home) });
  const stop = (signal: string) => {
    logger.info("stopping", { signal });
    void agent.close().then(() => process.exit(0));
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  await agent.replaced;
  await agent.close();
  throw new AgentError("replaced", "another clawrelay agent connected to this inbox; this one stopped");
}

async function status(): Promise<void> {
  let run: { api_port: number; pid: number };
  try {
    run = JSON.parse(readFileSync(join(settingsHome(env), "run.json"), "utf8")) as typeof run;
    if (typeof run?.api_port !== "number") throw new Error("no api_port");
  } catch {
    throw new AgentError("not_running", "no running agent found (start it with: clawrelay start)");
  }
  const res = await fetch(`http://127.0.0.1:${run.api_port}/clawrelay/status`).catch(() => null);
  if (!res?.ok) throw new AgentError("not_running", `the agent (pid ${run.pid}) does not answer on 127.0.0.1:${run.api_port}; it may have crashed`);
  const s = (await res.json()) as AgentStatusAnswer;
  // Another agent (another CLAWRELAY_HOME) may have taken the port of a crashed one since.
  if (s.agent_id !== loadSettings(path).agent_id) {
    throw new AgentError("not_running", `no agent of ${path} is running (run.json is stale: pid ${run.pid} is gone and 127.0.0.1:${run.api_port} is another agent's)`);
  }
  if (flag("json")) return print(JSON.stringify(s, null, 2));
  print(statusText(s, run.pid, Date.now()));
}

async function messages(): Promise<void> {
  const { messagesCommand } = await import("./cli/cli-messages.ts");
  print(await messagesCommand(values, positionals, path));
}

async function send(): Promise<void> {
  const { sendCommand } = await import("./cli/cli-messages.ts");
  print(await sendCommand(values, path));
}

async function hubStatusCommand(): Promise<void> {
  const agentlineToken = str("agentline-token");
  const { hubStatus, hubStatusText } = await import("./hub/hub-status.ts");
  const report = await hubStatus({ settingsPath: path, ...(agentlineToken ? { agentlineToken } : {}) });
  print(flag("json") ? JSON.stringify(report, null, 2) : hubStatusText(report));
  if (!report.verdict.ok) process.exitCode = 1;
}

async function hubRegister(): Promise<void> {
  const mode = oneOf<HubMode>("mode", HUB_MODES);
  const prefix = oneOf<HubPrefix>("prefix", HUB_PREFIXES);
  const agentlineToken = str("agentline-token");
  const claimToken = str("claim-token") ?? process.env.CLAWRELAY_CLAIM_TOKEN;
  const bind = bindFlags(values);
  const { registerWithHub } = await import("./hub/hub-link.ts");
  const result = await registerWithHub({
    settingsPath: path,
    ...(mode ? { mode } : {}),
    ...(bind ? { bind } : {}),
    ...(prefix ? { prefix } : {}),
    ...(agentlineToken ? { agentlineToken } : {}),
    ...(claimToken ? { claimToken } : {}),
    open: flag("open"),
    say: flag("json") ? () => {} : print,
  });
  if (flag("json")) print(JSON.stringify(result, null, 2));
}

/** --secret, or "-": one line from stdin, so a secret stays out of the shell's history and `ps`. */
async function secretFlag(): Promise<string | undefined> {
  const value = str("secret");
  if (value !== "-") return value;
  // The first line, piped or typed (then Enter ends it, not Ctrl-D).
  if (process.stdin.isTTY) process.stderr.write("secret: ");
  const { createInterface } = await import("node:readline");
  const lines = createInterface({ input: process.stdin, terminal: false });
  const line = await new Promise<string>((resolve) => {
    lines.once("line", (text) => resolve(text));
    lines.once("close", () => resolve(""));
  });
  lines.close();
  if (line === "") throw new UsageError("--secret - read nothing from stdin: pipe the secret in (echo \"$SECRET\" | clawrelay …)");
  return line;
}

async function sources(action: SourcesAction): Promise<void> {
  const [{ runSourcesCommand }, { inboxAccess }] = await Promise.all([import("./cli/cli-sources.ts"), import("./relay/messages.ts")]);
  print(await runSourcesCommand({ action, name: positionals[0], values, access: () => inboxAccess(loadSettings(path)), readSecret: secretFlag }));
}

async function init(): Promise<void> {
  const relay = httpUrlFlag(values, "relay", "https://relay.example.com");
  const hub = httpUrlFlag(values, "hub", "https://agentgram.chat");
  if (relay) relayHint = "check --relay";
  const { initReport, runInit } = await import("./cli/init.ts");
  const result = await runInit({
    settingsPath: path,
    env,
    relay,
    hub,
    name: str("name"),
    importAgentline: flag("import-agentline"),
    agentlineId: str("agentline-id"),
    importBotcord: flag("import-botcord"),
    botcordId: str("botcord-id"),
    force: flag("force"),
    rotateToken: flag("rotate-token"),
    claimToken: str("claim-token") ?? process.env.CLAWRELAY_CLAIM_TOKEN,
  });
  print(initReport(result, path));
}

async function doctor(): Promise<void> {
  const { doctorReport, runDoctor } = await import("./doctor/doctor.ts");
  const checks = await runDoctor(path, env, gatewayFlags(values));
  print(doctorReport(checks));
  if (checks.some((c) => c.level === "FAIL")) process.exitCode = 1;
}

const RUN: Record<string, () => Promise<void>> = {
  init,
  start,
  status,
  doctor,
  send,
  messages,
  "hub register": hubRegister,
  "hub status": hubStatusCommand,
  "sources add": () => sources("add"),
  "sources list": () => sources("list"),
  "sources rotate": () => sources("rotate"),
  "sources remove": () => sources("remove"),
};

async function main(): Promise<void> {
  const invocation = parseInvocation(argv);
  if (invocation.kind === "help") return print(helpText(invocation.topic));
  if (invocation.kind === "version") return print(`clawrelay ${CLAWRELAY_VERSION}`);
  topic = invocation.command;
  ({ values, positionals } = invocation);
  const home = str("home");
  env = { ...process.env, ...(home ? { CLAWRELAY_HOME: home } : {}) };
  path = settingsPath(env);
  relayHint = `check relay_url in ${path}`;
  const run = RUN[invocation.command.name];
  if (!run) throw new AgentError("internal", `no handler for "${invocation.command.name}"`);
  await run();
}

function fail(err: unknown): void {
  const { text: message, exitCode } = failureText(err, { topic, debug, relayHint });
  process.stderr.write(message + "\n");
  process.exit(exitCode);
}

process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);
main().catch(fail);
