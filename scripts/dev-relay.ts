// `npm run dev:relay`: only the relay, under `wrangler dev` on loopback with live reload. The port is
// the caller's (`npm run dev:relay -- --port 9999`, or PORT=9999), default 8787; any other argument goes
// to wrangler as it is. wrangler refuses a second --port, so the port is not fixed in package.json.
// Workers AI has no local mode, so wrangler runs a copy of wrangler.toml whose AI is the local model
// (LocalAi beside the relay, the model in this process: scripts/local-ai/). Covered by
// test/node/start-dev-relay.test.ts.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { LOCAL_EMBEDDING_MODEL } from "../worker/directory/embeddings/embedding-models.ts";
import { serveModelOverHttp, wranglerDevConfigs } from "./local-ai/local-ai.ts";

export const DEFAULT_DEV_PORT = 8787;
/** The configs wrangler dev runs, written at each start (state folder, not committed). */
const RELAY_CONFIG = ".clawrelay-dev/wrangler.dev.toml";
const LOCAL_AI_CONFIG = ".clawrelay-dev/local-ai.wrangler.toml";

export class DevRelayUsage extends Error {}

/** wrangler's arguments for this command line and environment. */
export function devRelayArgs(argv: string[], env: Record<string, string | undefined>): string[] {
  const { values, tokens } = parseArgs({ args: argv, options: { port: { type: "string", short: "p" } }, strict: false, tokens: true });
  const raw = typeof values.port === "string" ? values.port : (env.PORT ?? String(DEFAULT_DEV_PORT));
  const port = Number(raw);
  if (!/^\d+$/.test(raw) || port < 1 || port > 65535) throw new DevRelayUsage(`--port (or PORT) must be a port number from 1 to 65535, not "${raw}"`);
  const rest = tokens.flatMap((token) => {
    if (token.kind === "option" && token.name === "port") return [];
    if (token.kind === "option") return token.inlineValue ? [`${token.rawName}=${token.value}`] : token.value === undefined ? [token.rawName] : [token.rawName, token.value];
    return token.kind === "positional" ? [token.value] : ["--"];
  });
  return [
    "dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", ".clawrelay-dev/wrangler-state",
    "-c", RELAY_CONFIG, "-c", LOCAL_AI_CONFIG, "--var", `EMBEDDING_MODEL:${LOCAL_EMBEDDING_MODEL}`,
    ...rest,
  ];
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  let args: string[];
  try {
    args = devRelayArgs(process.argv.slice(2), process.env);
  } catch (error) {
    if (!(error instanceof DevRelayUsage)) throw error;
    process.stderr.write(`dev:relay: ${error.message}\n`);
    process.exit(2);
  }
  const root = join(import.meta.dirname, "..");
  const model = await serveModelOverHttp();
  mkdirSync(join(root, ".clawrelay-dev"), { recursive: true });
  const configs = wranglerDevConfigs(readFileSync(join(root, "wrangler.toml"), "utf8"), model.url);
  writeFileSync(join(root, RELAY_CONFIG), configs.relay);
  writeFileSync(join(root, LOCAL_AI_CONFIG), configs.localAi);
  // wrangler reads `.dev.vars` (local secrets) beside the config it runs, which is this copy's folder.
  const devVars = join(root, ".dev.vars");
  if (existsSync(devVars)) copyFileSync(devVars, join(root, ".clawrelay-dev", ".dev.vars"));
  else rmSync(join(root, ".clawrelay-dev", ".dev.vars"), { force: true });
  const wrangler = spawn(join(root, "node_modules", ".bin", "wrangler"), args, {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" },
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.on(signal, () => wrangler.kill(signal));
  wrangler.on("exit", (code, signal) => process.exit(code ?? (signal ? 130 : 1)));
}
