// Bundles a Worker the way `wrangler deploy` does, offline (--dry-run --outdir, ~2 s), and runs the
// bundle in programmatic Miniflare 5 on a loopback port, the relay with the local embedding model as its
// Workers AI (scripts/local-ai/). Used by the benchmark, the end-to-end tests, the search evaluator and
// `npm start`.
import { execFile } from "node:child_process";
import { readFile, readdir } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Miniflare } from "miniflare";
import { localAiForMiniflare } from "./local-ai/local-ai.ts";
import { runLocalModel } from "./local-ai/local-model.ts";
import type { NodeEmbeddingsRun } from "./local-ai/local-model.ts";

export type { NodeEmbeddingsRun } from "./local-ai/local-model.ts";

export const REPO_ROOT = fileURLToPath(new URL("..", import.meta.url));
const WRANGLER_BIN = path.join(REPO_ROOT, "node_modules/wrangler/bin/wrangler.js");

/** Tools started here must not phone home (no telemetry, no Request.cf download); a hidden banner also skips the update check. */
export const QUIET_TOOL_ENV = {
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  WRANGLER_HIDE_BANNER: "true",
} as const;

export interface WorkerBundle {
  mainModule: string;
  contents: string;
  compatibilityDate: string;
  compatibilityFlags: string[];
}

function tomlValue(toml: string, key: string): string | null {
  return new RegExp(`^${key}\\s*=\\s*(.+)$`, "m").exec(toml)?.[1]?.trim() ?? null;
}

/** Runs `wrangler deploy --dry-run` for `configPath` (relative to the repo) into `outdir`. */
export async function bundleWorker(configPath: string, outdir: string): Promise<WorkerBundle> {
  await promisify(execFile)(process.execPath, [WRANGLER_BIN, "deploy", "--dry-run", "--config", configPath, "--outdir", outdir], {
    cwd: REPO_ROOT,
    env: { ...process.env, ...QUIET_TOOL_ENV, WRANGLER_LOG_PATH: path.join(outdir, "logs") },
  });
  const toml = await readFile(path.join(REPO_ROOT, configPath), "utf8");
  const date = tomlValue(toml, "compatibility_date");
  if (!date) throw new Error(`${configPath} has no compatibility_date`);
  const flags = tomlValue(toml, "compatibility_flags");
  // The bundle is named after `main` (index.js, verify-worker.js), next to its .map and a README.
  const scripts = (await readdir(outdir)).filter((file) => file.endsWith(".js"));
  if (scripts.length !== 1) throw new Error(`expected one .js bundle in ${outdir}, found ${scripts.join(", ") || "none"}`);
  const mainModule = scripts[0]!;
  return {
    mainModule,
    contents: await readFile(path.join(outdir, mainModule), "utf8"),
    compatibilityDate: JSON.parse(date) as string,
    compatibilityFlags: flags ? (JSON.parse(flags) as string[]) : [],
  };
}

export type WorkerBindings = NonNullable<ConstructorParameters<typeof Miniflare>[0]["workers"][number]["config"]["env"]>;
export type WorkerExports = NonNullable<ConstructorParameters<typeof Miniflare>[0]["workers"][number]["config"]["exports"]>;
type MiniflareWorker = ConstructorParameters<typeof Miniflare>[0]["workers"][number];

export interface MiniflareOptions {
  /** Keep Durable Object storage here across restarts (default: in memory, gone on dispose). */
  persistDir?: string;
  port?: number;
  /** Extra text bindings (vars and secrets), e.g. CLAWRELAY_ADMISSION. */
  vars?: Record<string, string>;
  /** Each line the Worker and workerd log (default: Miniflare prints them); the tests keep them to assert. */
  onLog?: (log: { level: string; message: string }) => void;
  /** Workers beside this one (the relay's local Workers AI). */
  siblings?: MiniflareWorker[];
}

export interface RelayMiniflareOptions extends MiniflareOptions {
  /**
   * The relay's `AI` binding: "local" (default) the local English model in this process, with
   * EMBEDDING_MODEL set to it; "off" none (the directory ranks lexically); or a function that embeds
   * (the search evaluator's Workers AI REST client; name its model with `vars.EMBEDDING_MODEL`).
   */
  embeddings?: "local" | "off" | NodeEmbeddingsRun;
}

/** A Miniflare 5 instance running `bundle` as worker `name`; its URL from `await mf.ready`. */
export function startMiniflare(name: string, bundle: WorkerBundle, env: WorkerBindings = {}, exports?: WorkerExports, options: MiniflareOptions = {}): Miniflare {
  return new Miniflare({
    host: "127.0.0.1",
    port: options.port ?? 0,
    ...(options.persistDir ? { resourcePersistencePath: options.persistDir } : {}),
    cf: false,
    enableDevRegistry: false,
    telemetry: { enabled: false },
    ...(options.onLog ? { handleStructuredLogs: options.onLog } : {}),
    workers: [
      {
        config: {
          name,
          compatibilityDate: bundle.compatibilityDate,
          compatibilityFlags: bundle.compatibilityFlags,
          manifest: { mainModule: bundle.mainModule, modules: { [bundle.mainModule]: { type: "esm", contents: bundle.contents } } },
          env,
          ...(exports ? { exports } : {}),
        },
      },
      ...(options.siblings ?? []),
    ],
  });
}

/**
 * The relay Worker (wrangler.toml's bindings) in Miniflare: INBOX and DIRECTORY as SQLite Durable
 * Objects, and AI as options.embeddings says. `vars` come last, so they may name another EMBEDDING_MODEL
 * or set EMBEDDING_FLOOR.
 */
export function startRelayMiniflare(bundle: WorkerBundle, defaultHubUrl: string, options: RelayMiniflareOptions = {}): Miniflare {
  const embeddings = options.embeddings ?? "local";
  const ai = embeddings === "off" ? null : localAiForMiniflare(embeddings === "local" ? runLocalModel : embeddings);
  return startMiniflare(
    "clawrelay",
    bundle,
    {
      INBOX: { type: "durable-object", worker: "clawrelay", exportName: "Inbox" },
      DIRECTORY: { type: "durable-object", worker: "clawrelay", exportName: "Directory" },
      DEFAULT_HUB_URL: { type: "text", value: defaultHubUrl },
      ...ai?.relayBindings,
      ...Object.fromEntries(Object.entries(options.vars ?? {}).map(([name, value]) => [name, { type: "text" as const, value }])),
    },
    { Inbox: { type: "durable-object", storage: "sqlite" }, Directory: { type: "durable-object", storage: "sqlite" } },
    { ...options, siblings: [...(options.siblings ?? []), ...(ai ? [ai.worker] : [])] },
  );
}
