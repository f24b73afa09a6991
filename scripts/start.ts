// `npm start`: the whole stack on this machine — the relay on local workerd (state kept in
// .clawrelay-dev/relay), a dev identity (.clawrelay-dev/home), the OpenClaw gateway (waited for when
// configured but down; a stand-in when none is configured, until one answers: start-gateway.ts), and
// the local agent connected to it. The relay's directory embeds with the local English model in this
// process, behind the Workers AI interface (scripts/local-ai/). Ctrl-C stops everything. The one-liners it
// prints are start-lines.ts's (test/node/start-lines.test.ts).
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { copyFile, mkdir, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { startAgent } from "../local-agent/agent.ts";
import { portIsListening } from "../local-agent/gateway/agent-gateway.ts";
import { cardPath } from "../local-agent/society/card-file.ts";
import { runInit } from "../local-agent/cli/init.ts";
import { createLogger } from "../local-agent/logger.ts";
import { journalPath, saveSettings } from "../local-agent/settings.ts";
import { REPO_ROOT, bundleWorker, startRelayMiniflare } from "./local-workerd.ts";
import { chooseGateway, dropGatewayOverrides, whenGatewayUp } from "./start-gateway.ts";
import { standinReceivedText, startLines } from "./start-lines.ts";
import { startStandinGateway } from "./standin-gateway.ts";
import type { StandinGateway } from "./standin-gateway.ts";

const DEV_DIR = join(REPO_ROOT, ".clawrelay-dev");
const RELAY_PORT = Number(process.env.CLAWRELAY_DEV_PORT ?? 8787);
const say = (line = "") => process.stdout.write(line + "\n");

// One `npm start` per state folder: a second one would run another relay on the same storage and
// overwrite the dev agent's settings under the first.
const LOCK = join(DEV_DIR, "start.pid");
const holder = lockHolder();
if (holder !== null) {
  say(`npm start is already running (pid ${holder}) on ${relative(process.cwd(), DEV_DIR) || DEV_DIR}. Stop it first (Ctrl-C in its terminal, or kill ${holder}).`);
  process.exit(1);
}
if (await portIsListening(RELAY_PORT)) {
  say(`Port ${RELAY_PORT} is taken by another program (not an npm start of this checkout). Free it, or run CLAWRELAY_DEV_PORT=<free port> npm start.`);
  process.exit(1);
}
await mkdir(DEV_DIR, { recursive: true });
writeFileSync(LOCK, `${process.pid}\n`);
// Whatever ends this process, the lock and the agent's run.json go with it (a crash included).
process.on("exit", () => {
  rmSync(LOCK, { force: true });
  const run = join(DEV_DIR, "home", "run.json");
  try {
    if ((JSON.parse(readFileSync(run, "utf8")) as { pid?: number }).pid === process.pid) rmSync(run, { force: true });
  } catch {
    // No run.json (yet).
  }
});

function lockHolder(): number | null {
  try {
    const pid = Number(readFileSync(LOCK, "utf8").trim());
    if (!Number.isSafeInteger(pid) || pid <= 0) return null;
    process.kill(pid, 0);
    return pid;
  } catch {
    return null;
  }
}

const bundleDir = await mkdtemp(join(tmpdir(), "clawrelay-start-"));
const bundle = await bundleWorker("wrangler.toml", bundleDir);
await rm(bundleDir, { recursive: true, force: true });
await mkdir(join(DEV_DIR, "relay"), { recursive: true });
const relay = startRelayMiniflare(bundle, "https://agentgram.chat", { persistDir: join(DEV_DIR, "relay"), port: RELAY_PORT });
const relayUrl = (await relay.ready).origin;

// The configured gateway (hooks on, a token) is used, running or not: down, messages wait for it at the
// relay. With none configured, a stand-in, until a configured one answers (start-gateway.ts).
const env: Record<string, string | undefined> = { ...process.env, CLAWRELAY_HOME: join(DEV_DIR, "home") };
let standin: StandinGateway | null = null;
const choice = await chooseGateway(process.env);
const real = choice.kind === "standin" ? null : choice.gateway;
if (choice.kind === "standin") {
  standin = await startStandinGateway({ announceAs: "npm start" });
  standin.onReceive = (hook) => say(standinReceivedText(standin!.hooksPath, hook));
}

const settingsPath = join(DEV_DIR, "home", "agent.json");
const init = await runInit({ settingsPath, env, relay: relayUrl, name: "dev-agent" });
const settings = init.settings;
if (standin) {
  settings.gateway = { port: standin.port, hooks_token: standin.token, hooks_path: standin.hooksPath, auth_token: standin.authToken, chat_completions: true };
} else delete settings.gateway;
saveSettings(settingsPath, settings);
// A card, so search and delegation can be tried at once (the dev agent can delegate to itself).
const card = cardPath(join(DEV_DIR, "home"));
if (!existsSync(card)) await copyFile(join(REPO_ROOT, "examples", "card.json"), card);

const agent = await startAgent({ settings, env, logger: createLogger(), runDir: join(DEV_DIR, "home"), cardFile: card, journalFile: journalPath(join(DEV_DIR, "home")) });
const home = relative(process.cwd(), join(DEV_DIR, "home")) || ".";

say("");
say("clawrelay is running locally");
say(`  relay        ${relayUrl}/healthz   (workerd, state in ${relative(process.cwd(), join(DEV_DIR, "relay"))})`);
say(`  agent        ${settings.agent_id}   (local only: no hub is linked; see docs/hub-setup.md)`);
say(`  local API    http://127.0.0.1:${agent.apiPort}/api/status`);
say(`  inspector    http://127.0.0.1:${agent.apiPort}/   (deliveries live, the queue, replay and drop; /metrics)`);
say(`  webhooks     POST ${init.hooksUrl}/<sub-path>   with  Authorization: Bearer ${init.webhookToken}`);
say(`               (a hub is given ${init.hooksUrl} and appends agentgram_inbox/agent or /wake itself)`);
if (standin) {
  say("");
  say("  !!! No OpenClaw gateway with hooks enabled was found (see `npx clawrelay doctor`).");
  say(`  !!! Using a STAND-IN gateway on 127.0.0.1:${standin.port}: it only prints what it receives.`);
} else {
  say(`  gateway      127.0.0.1:${real!.port}${real!.hooksPath} (${real!.configPath})`);
}
if (choice.kind === "wait") {
  say("");
  say(`  !!! The OpenClaw gateway configured in ${choice.gateway.configPath} is not running: nothing listens on 127.0.0.1:${choice.gateway.port}.`);
  say("  !!! Messages wait at the relay until it starts (openclaw gateway); they are delivered then, without restarting npm start.");
}
say("");
for (const line of startLines({ home, agentId: settings.agent_id, hooksUrl: init.hooksUrl, webhookToken: init.webhookToken, apiPort: agent.apiPort })) say(line);
say("Ctrl-C stops everything.");

// The gateway coming up later: the stand-in hands over to it, or the waiting messages go to it.
const watch = choice.kind === "real" ? null : whenGatewayUp(process.env, (gateway) => {
  const where = `127.0.0.1:${gateway.port}${gateway.hooksPath} (${gateway.configPath})`;
  if (!standin) return say(`\n[npm start] the OpenClaw gateway is up on ${where}: waiting messages are delivered to it now.\n`);
  try {
    dropGatewayOverrides(settingsPath);
  } catch (err) {
    // The handover is a convenience: a dev agent.json that cannot be rewritten keeps the stand-in, said once.
    return say(`\n[npm start] an OpenClaw gateway with hooks is up on ${where}, but ${settingsPath} could not be rewritten (${(err as Error).message}): messages still go to the stand-in; restart npm start to use it.\n`);
  }
  say(`\n[npm start] an OpenClaw gateway with hooks is up on ${where}: messages go to it from now on, no longer to the stand-in.\n`);
});

let stopping = false;
async function stop(): Promise<void> {
  if (stopping) return;
  stopping = true;
  // Never hang on the way out: whatever has not closed in 8 s is cut (the exit handler still cleans up).
  setTimeout(() => process.exit(0), 8000).unref();
  watch?.stop();
  await agent.close();
  await standin?.close();
  await relay.dispose();
  process.exit(0);
}
process.once("SIGINT", () => void stop());
process.once("SIGTERM", () => void stop());
