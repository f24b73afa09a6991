#!/usr/bin/env -S node --v8-pool-size=0
// clawrelay — the local agent's command line. The only module that touches process: argv, output,
// exit codes and signals. (The shebang asks V8 for no worker-thread pool: the agent is a small,
// mostly idle daemon; its 10 MB heap collects fine on the main thread, and four fewer threads save
// ~4 MiB resident. `env -S` splits the line on Linux, macOS and BSD; npm's Windows shims read it too.) Everything else returns values or throws AgentError; the command table and
// help texts are in cli-help.ts, argv parsing in cli-args.ts, reading flags in cli-flags.ts, errors to
// one line in cli-errors.ts, status text in cli-status.ts, messages and send in cli-messages.ts.
import { HUB_PREFIXES } from "../protocol/index.ts";
import type { HubPrefix } from "../protocol/index.ts";
// Each command's modules load when that command runs: `start` stays as small in memory as it can be.
import { cardPath } from "./society/card-file.ts";
import { UsageError, parseInvocation } from "./cli/cli-args.ts";
import { bindFlags, choiceFlag, gatewayFlags, httpUrlFlag, stringFlag, switchFlag } from "./cli/cli-flags.ts";
import type { Values } from "./cli/cli-args.ts";
import { failureText } from "./cli/cli-errors.ts";
import { helpText } from "./cli/cli-help.ts";
import type { HelpTopic } from "./cli/cli-help.ts";
import { statusExitCode, statusText } from "./cli/cli-status.ts";
import { terminalOutput } from "./cli/terminal-text.ts";
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

/** Every line the CLI writes quotes what senders, apps and relays wrote: nothing in it may act on the terminal. */
function print(line: string): void {
  process.stdout.write(terminalOutput(line) + "\n");
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
  throw new AgentError(
    "replaced",
    "another clawrelay agent connected to this inbox; this one stopped. If the OpenClaw gateway runs the clawrelay plugin, it took the inbox back: run one of the two — openclaw plugins disable clawrelay to keep this standalone agent (docs/openclaw-setup.md)",
  );
}

async function status(): Promise<void> {
  const { agentStatus } = await import("./doctor/status-advice.ts");
  const found = await agentStatus(settingsHome(env), path, env);
  if (!found.running) throw new AgentError("not_running", found.text);
  process.exitCode = statusExitCode(found.agent.status);
  if (flag("json")) return print(JSON.stringify(found.agent.status, null, 2));
  print([statusText(found.agent.status, found.agent.pid, Date.now()), ...found.warnings].join("\n"));
}

async function retry(): Promise<void> {
  const [{ retryCommand }, { runningAgentOf }] = await Promise.all([import("./cli/cli-retry.ts"), import("./doctor/agent-presence.ts")]);
  print(await retryCommand(await runningAgentOf(settingsHome(env), path, env), flag("json")));
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

async function a2a(action: "enable" | "status" | "disable"): Promise<void> {
  const [{ runA2aCommand }, { inboxAccess }, { openClawEnv }] = await Promise.all([import("./a2a/a2a-command.ts"), import("./relay/messages.ts"), import("./gateway/agent-gateway.ts")]);
  const settings = settingsWithFlags();
  print(await runA2aCommand({ action, access: await inboxAccess(settings), env: openClawEnv(settings.gateway, env), json: flag("json") }));
}

async function listenCommand(): Promise<void> {
  const [{ listen, listenTarget, listenText }, { inboxAccess }, { runningAgentOf }] = await Promise.all([import("./cli/cli-listen.ts"), import("./relay/messages.ts"), import("./doctor/agent-presence.ts")]);
  const port = positionals[0];
  if (port === undefined) throw new UsageError("listen needs the app's port: clawrelay listen 3000");
  const input = { port, path: str("path"), host: str("host"), name: str("name"), allowPublic: flag("allow-public-target"), live: !flag("no-live") };
  const target = await listenTarget(input);
  const settings = loadSettings(path);
  const home = settingsHome(env);
  const result = await listen(await inboxAccess(settings), home, input, target);
  if (flag("json")) return print(JSON.stringify(result, null, 2));
  print(listenText(result));
  // Wherever it runs: a second agent started here would take the inbox from the plugin's.
  const found = await runningAgentOf(home, path, env);
  if (found.running) return print(`\nThe running agent (pid ${found.pid}, ${found.status.runs_in}) forwards them; clawrelay status shows the app's last answer.`);
  print("\nNo agent runs for this inbox, so this one runs it (Ctrl-C stops it; requests then wait at the relay).\n");
  await start();
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

/** stdout carries the MCP protocol alone: nothing is printed; a failure to start still goes to stderr. */
async function mcp(): Promise<void> {
  const { serveMcp } = await import("./mcp/mcp-server.ts");
  await serveMcp({ settingsPath: path, home: settingsHome(env), env, readOnly: flag("read-only"), stdin: process.stdin, stdout: process.stdout });
  // A tool call still waiting on the relay (inbox_wait holds up to a minute) has no one left to answer.
  process.exit(0);
}

const RUN: Record<string, () => Promise<void>> = {
  init,
  start,
  status,
  retry,
  doctor,
  send,
  messages,
  "hub register": hubRegister,
  "hub status": hubStatusCommand,
  listen: listenCommand,
  "sources add": () => sources("add"),
  "sources set": () => sources("set"),
  "sources list": () => sources("list"),
  "sources rotate": () => sources("rotate"),
  "sources remove": () => sources("remove"),
  "a2a enable": () => a2a("enable"),
  "a2a status": () => a2a("status"),
  "a2a disable": () => a2a("disable"),
  mcp,
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
  process.stderr.write(terminalOutput(message) + "\n");
  process.exit(exitCode);
}

process.on("uncaughtException", fail);
process.on("unhandledRejection", fail);
main().catch(fail);
