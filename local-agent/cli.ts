#!/usr/bin/env node
// clawrelay — the local agent's command line. The only module that touches process: argv, output,
// exit codes and signals. Everything else returns values or throws AgentError.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ENVELOPE_TYPES, RelayError, draftEnvelope, isAgentId, signEnvelope } from "../protocol/index.ts";
import type { EnvelopeType } from "../protocol/index.ts";
import { startAgent } from "./agent.ts";
import type { AgentStatusAnswer } from "./agent.ts";
import { cardPath } from "./card-file.ts";
import { doctorReport, runDoctor } from "./doctor.ts";
import { AgentError } from "./errors.ts";
import { settingsIdentity } from "./identity.ts";
import { registerWithHub } from "./hub-link.ts";
import { hubStatus, hubStatusText } from "./hub-status.ts";
import { initReport, runInit } from "./init.ts";
import { createLogger } from "./logger.ts";
import { dropMessage, listMessages, messageDetail, messagesJson, messagesTable, parseMessageId, parseState, replayMessage, showMessage, summaryLine } from "./messages.ts";
import type { InboxAccess } from "./messages.ts";
import { postEnvelope, relayErrorText } from "./relay-api.ts";
import { HUB_MODES, HUB_PREFIXES, journalPath, loadSettings, settingsHome, settingsPath } from "./settings.ts";
import type { AgentSettings, HubMode, HubPrefix } from "./settings.ts";

const USAGE = `clawrelay — a permanent public inbox for your OpenClaw agent

  clawrelay init --relay URL [--name NAME] [--hub URL] [--import-agentline] [--agentline-id ID] [--force] [--rotate-token] [--claim-token TOKEN]
  clawrelay start [--json] [GATEWAY FLAGS]
  clawrelay status [--json]
  clawrelay doctor [GATEWAY FLAGS]
  clawrelay hub register [--mode webhook|pull] [--prefix agentgram|botcord] [--agentline-token JWT] [--open] [--claim-token TOKEN]
                                                           register the inbox with the hub: JWT, receipt key, endpoint, policy
  clawrelay hub status [--json] [--agentline-token JWT]    what the relay and the hub say: receipts, keys, endpoint, policy
  clawrelay send --to AGENT_ID (--text TEXT | --payload JSON) [--type message] [--reply-to MSG_ID] [--ttl SEC] [--json]
  clawrelay messages [--state queued|sent|dead] [--json]   what the inbox holds, and why a message is dead
  clawrelay messages show ID [--json]                      one message: its metadata and body
  clawrelay messages replay ID                             a dead message back into the queue (new id)
  clawrelay messages drop ID                               delete one message, in any state

  --home DIR   settings directory (default $CLAWRELAY_HOME or ~/.clawrelay)
  GATEWAY FLAGS override openclaw.json and the settings for this run:
  --gateway-port N   --hooks-path PATH   --openclaw-config FILE`;

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    home: { type: "string" },
    relay: { type: "string" },
    hub: { type: "string" },
    name: { type: "string" },
    "import-agentline": { type: "boolean" },
    "agentline-id": { type: "string" },
    force: { type: "boolean" },
    "rotate-token": { type: "boolean" },
    "claim-token": { type: "string" },
    json: { type: "boolean" },
    to: { type: "string" },
    text: { type: "string" },
    payload: { type: "string" },
    type: { type: "string" },
    "reply-to": { type: "string" },
    ttl: { type: "string" },
    "gateway-port": { type: "string" },
    "hooks-path": { type: "string" },
    "openclaw-config": { type: "string" },
    state: { type: "string" },
    mode: { type: "string" },
    prefix: { type: "string" },
    "agentline-token": { type: "string" },
    open: { type: "boolean" },
    help: { type: "boolean", short: "h" },
  },
});

/** Gateway flags win over the settings file, which wins over openclaw.json (the OpenClaw order). */
function gatewayFlags(): AgentSettings["gateway"] {
  const port = values["gateway-port"] === undefined ? undefined : Number(values["gateway-port"]);
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw new AgentError("usage", "--gateway-port must be a TCP port number");
  return {
    ...(port ? { port } : {}),
    ...(values["hooks-path"] ? { hooks_path: values["hooks-path"] } : {}),
    ...(values["openclaw-config"] ? { config_path: values["openclaw-config"] } : {}),
  };
}

function settingsWithFlags(): AgentSettings {
  const settings = loadSettings(path);
  return { ...settings, gateway: { ...settings.gateway, ...gatewayFlags() } };
}

const env = { ...process.env, ...(values.home ? { CLAWRELAY_HOME: values.home } : {}) };
const path = settingsPath(env);

function print(text: string): void {
  process.stdout.write(text + "\n");
}

async function start(): Promise<void> {
  const logger = createLogger({ json: values.json });
  const home = settingsHome(env);
  const agent = await startAgent({ settings: settingsWithFlags(), env, logger, runDir: home, cardFile: cardPath(home), journalFile: journalPath(home) });
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
  if (values.json) return print(JSON.stringify(s, null, 2));
  const summary = s.relay_queue;
  const now = Date.now();
  const last = s.delivery.last_delivery;
  const d = s.delivery;
  print(
    [
      `agent     ${s.agent_id} (pid ${run.pid}, local API 127.0.0.1:${s.api_port})`,
      `relay     ${s.relay.state} ${s.relay.url} since ${new Date(s.relay.since).toISOString()}${s.relay.error ? ` — ${s.relay.error}` : ""}`,
      `gateway   127.0.0.1:${s.gateway.port}${s.gateway.hooks_path} (${s.gateway.config_path ?? "no config file"})`,
      `inbox     ${"error" in summary ? `unknown (${summary.error})` : summaryLine(summary, now)}`,
      `since start (${new Date(d.counted_since).toISOString()}): delivered ${d.delivered}, rejected to the dead shelf ${d.rejected}; waiting here ${d.queued}; cursor ${d.cursor}`,
      `last      ${last ? `id ${last.id} → ${last.subpath} ${last.status} in ${last.latency_ms} ms at ${new Date(last.at).toISOString()}` : "none yet"}`,
      ...(d.paused ? [`PAUSED    ${d.paused}`] : []),
      ...(d.last_error ? [`last error id ${d.last_error.id} at ${new Date(d.last_error.at).toISOString()}: ${d.last_error.message}`] : []),
      ...(!("error" in summary) && summary.dead > 0 ? [`dead      ${summary.dead} message(s): clawrelay messages --state dead`] : []),
      ...(s.relay_hub ? [hubLine(s.relay_hub)] : []),
    ].join("\n"),
  );
}

function hubLine(hub: NonNullable<AgentStatusAnswer["relay_hub"]>): string {
  const r = hub.last_receipt;
  const receipt = !r ? "no receipt sent yet" : r.ok ? `last receipt accepted at ${new Date(r.at).toISOString()}` : `last receipt REFUSED (${r.status} ${r.detail}) at ${new Date(r.at).toISOString()} — see clawrelay hub status`;
  return `hub       ${hub.mode} (prefix ${hub.prefix}); ${receipt}${hub.receipts_refused > 0 ? `; ${hub.receipts_refused} refused in all` : ""}`;
}

function inboxAccess(settings: AgentSettings): InboxAccess {
  return { relayUrl: settings.relay_url, agentId: settings.agent_id, identity: settingsIdentity(settings) };
}

async function messages(): Promise<void> {
  const access = inboxAccess(loadSettings(path));
  const [, action, idText] = positionals;
  const now = Date.now();
  switch (action) {
    case undefined: {
      const { messages: items, summary, truncated } = await listMessages(access, parseState(values.state));
      if (values.json) return print(messagesJson(items, now));
      const more = truncated ? "\n(more not shown: page through GET /inbox/{id}/queue)" : "";
      return print(`${items.length > 0 ? messagesTable(items, now) : "no messages"}\n\n${summaryLine(summary, now)}${more}`);
    }
    case "show": {
      const shown = await showMessage(access, parseMessageId(idText));
      return print(values.json ? JSON.stringify(shown, null, 2) : messageDetail(shown));
    }
    case "replay": {
      const answer = await replayMessage(access, parseMessageId(idText));
      return print(values.json ? JSON.stringify(answer) : `message ${answer.replayed} is queued again as id ${answer.id}`);
    }
    case "drop": {
      const answer = await dropMessage(access, parseMessageId(idText));
      return print(values.json ? JSON.stringify(answer) : `message ${answer.dropped} (${answer.was}) dropped`);
    }
    default:
      throw new AgentError("usage", `unknown messages action "${action}": use show, replay or drop (or nothing, to list)`);
  }
}

async function send(): Promise<void> {
  const settings = loadSettings(path);
  if (!isAgentId(values.to)) throw new AgentError("usage", "--to must be an agent id (ag_ + 12 hex)");
  const type = (values.type ?? "message") as EnvelopeType;
  if (!ENVELOPE_TYPES.includes(type)) throw new AgentError("usage", `--type must be one of ${ENVELOPE_TYPES.join(", ")}`);
  let payload: Record<string, unknown>;
  try {
    payload = values.payload ? (JSON.parse(values.payload) as Record<string, unknown>) : { text: values.text ?? "" };
  } catch {
    throw new AgentError("usage", "--payload must be a JSON object");
  }
  const identity = settingsIdentity(settings);
  const draft = draftEnvelope({
    from: settings.agent_id,
    to: values.to,
    type,
    payload,
    reply_to: values["reply-to"] ?? null,
    ...(values.ttl ? { ttl_sec: Number(values.ttl) } : {}),
  });
  const envelope = await signEnvelope(draft, identity.keyId, identity.sign);
  const answer = await postEnvelope(settings.relay_url, envelope);
  if (answer.status !== 202) throw new AgentError("send_failed", `the relay refused the envelope: ${relayErrorText(answer)}`);
  if (values.json) return print(JSON.stringify(answer.body, null, 2));
  print(`queued at ${values.to} as id ${String(answer.body.id)} (msg_id ${envelope.msg_id})${answer.body.ack ? "; signed ack received" : ""}`);
}

async function hub(): Promise<void> {
  const action = positionals[1];
  const agentlineToken = values["agentline-token"];
  if (action === "status") {
    const report = await hubStatus({ settingsPath: path, ...(agentlineToken ? { agentlineToken } : {}) });
    print(values.json ? JSON.stringify(report, null, 2) : hubStatusText(report));
    if (!report.verdict.ok) process.exitCode = 1;
    return;
  }
  if (action !== "register") throw new AgentError("usage", `unknown hub action "${action ?? ""}": use register or status`);
  const mode = values.mode as HubMode | undefined;
  if (mode !== undefined && !HUB_MODES.includes(mode)) throw new AgentError("usage", `--mode must be one of ${HUB_MODES.join(", ")}`);
  const prefix = values.prefix as HubPrefix | undefined;
  if (prefix !== undefined && !HUB_PREFIXES.includes(prefix)) throw new AgentError("usage", `--prefix must be one of ${HUB_PREFIXES.join(", ")}`);
  const claimToken = values["claim-token"] ?? process.env.CLAWRELAY_CLAIM_TOKEN;
  const result = await registerWithHub({
    settingsPath: path,
    ...(mode ? { mode } : {}),
    ...(prefix ? { prefix } : {}),
    ...(agentlineToken ? { agentlineToken } : {}),
    ...(claimToken ? { claimToken } : {}),
    open: values.open === true,
    say: values.json ? () => {} : print,
  });
  if (values.json) print(JSON.stringify(result, null, 2));
}

async function main(): Promise<void> {
  const command = positionals[0];
  if (values.help || !command) return print(USAGE);
  switch (command) {
    case "init": {
      const result = await runInit({
        settingsPath: path,
        env,
        relay: values.relay,
        hub: values.hub,
        name: values.name,
        importAgentline: values["import-agentline"],
        agentlineId: values["agentline-id"],
        force: values.force,
        rotateToken: values["rotate-token"],
        claimToken: values["claim-token"] ?? process.env.CLAWRELAY_CLAIM_TOKEN,
      });
      return print(initReport(result, path));
    }
    case "start":
      return start();
    case "status":
      return status();
    case "doctor": {
      const checks = await runDoctor(path, env, gatewayFlags());
      print(doctorReport(checks));
      if (checks.some((c) => c.level === "FAIL")) process.exitCode = 1;
      return;
    }
    case "send":
      return send();
    case "messages":
      return messages();
    case "hub":
      return hub();
    default:
      throw new AgentError("usage", `unknown command "${command}"\n\n${USAGE}`);
  }
}

main().catch((err: unknown) => {
  if (err instanceof AgentError || err instanceof RelayError) process.stderr.write(`clawrelay: ${err.message}\n`);
  else process.stderr.write(`clawrelay: unexpected error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
