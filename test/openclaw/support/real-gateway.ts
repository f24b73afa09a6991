// Runs the real OpenClaw gateway (installed by scripts/openclaw-install.ts) for interop tests: a throw-
// away HOME with a generated openclaw.json (hooks with the Agentline mappings, the OpenAI-compatible
// chat endpoint, and a fake model provider), `openclaw gateway run` in its own process group, readiness
// by the hooks endpoint, and a stop that leaves no process and no HOME behind.
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import type { OpenClawInstall } from "../../../scripts/openclaw-install.ts";

export interface RealGatewayOptions {
  /** The model provider's OpenAI-compatible base URL, e.g. a fake model's `http://127.0.0.1:<port>/v1`. */
  modelBaseUrl: string;
  /** Edits the generated config before it is written. */
  extraConfig?: (config: Record<string, unknown>) => void;
  /** Added to (and overriding) the gateway's environment. */
  env?: Record<string, string>;
  /** The port and tokens of an earlier gateway, to start "the same" gateway again (default: fresh ones). */
  same?: { port: number; authToken: string; hooksToken: string };
}

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RealGateway {
  port: number;
  /** `http://127.0.0.1:<port>` */
  url: string;
  home: string;
  configPath: string;
  hooksToken: string;
  /** gateway.auth.token, for /v1/* */
  authToken: string;
  pid: number;
  stop(): Promise<void>;
  logTail(lines?: number): string;
  /** `openclaw <args>` against this gateway's HOME; rejects when it outlives timeoutMs (then killed). */
  cli(args: string[], timeoutMs?: number): Promise<CliResult>;
  readConfig(): Record<string, unknown>;
  /** Replaces openclaw.json (atomically); the gateway hot-reloads it. */
  writeConfig(config: Record<string, unknown>): void;
}

const READY_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 8_000;
const LOG_RING_LINES = 2_000;
const CLI_TIMEOUT_MS = 120_000;
/** What OpenClaw advises for a gateway run as a supervised child process, plus no update checks. */
const EMBEDDED_ENV: Record<string, string> = {
  OPENCLAW_DISABLE_BONJOUR: "1", // no LAN multicast from a test
  OPENCLAW_NO_RESPAWN: "1", // restarts stay in-process, so `pid` stays the gateway
  OPENCLAW_EXEC_SHELL_SNAPSHOT: "0",
  OPENCLAW_NO_AUTO_UPDATE: "1", // no telemetry.openclaw.ai call at start
};

export function gatewayConfig(port: number, authToken: string, hooksToken: string, modelBaseUrl: string): Record<string, unknown> {
  return {
    gateway: {
      mode: "local",
      bind: "loopback",
      port,
      auth: { token: authToken },
      http: { endpoints: { chatCompletions: { enabled: true } } },
    },
    hooks: {
      enabled: true,
      token: hooksToken,
      path: "/hooks",
      allowRequestSessionKey: true,
      allowedSessionKeyPrefixes: ["botcord:", "agentline:", "hook:"],
      mappings: [
        {
          match: { path: "agentgram_inbox/agent" },
          action: "agent",
          messageTemplate: "[Agentline] {{message}}",
          sessionKey: "{{sessionKey}}",
          sessionMode: "persistent",
        },
        { match: { path: "agentgram_inbox/wake" }, action: "wake", textTemplate: "[Agentline] {{body}}" },
        // A webhook source (docs/webhook-sources.md, "Recipes"): GitHub's event type comes only as a header.
        {
          match: { path: "sources/github" },
          action: "agent",
          name: "GitHub",
          messageTemplate: "GitHub {{headers.x-github-event}} on {{repository.full_name}}: {{head_commit.message}}",
        },
      ],
    },
    models: {
      mode: "merge",
      providers: {
        fake: {
          baseUrl: modelBaseUrl,
          apiKey: "x",
          api: "openai-completions",
          models: [{
            id: "fake-model",
            name: "Fake",
            reasoning: false,
            input: ["text"],
            cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
            contextWindow: 128000,
            maxTokens: 4096,
          }],
        },
      },
    },
    agents: { defaults: { model: { primary: "fake/fake-model" } } },
  };
}

export async function startRealGateway(install: OpenClawInstall, options: RealGatewayOptions): Promise<RealGateway> {
  const port = options.same?.port ?? (await freePort());
  const authToken = options.same?.authToken ?? randomBytes(32).toString("hex");
  const hooksToken = options.same?.hooksToken ?? randomBytes(32).toString("hex");
  const home = mkdtempSync(join(tmpdir(), "clawrelay-openclaw-"));
  const configPath = join(home, ".openclaw", "openclaw.json");
  const config = gatewayConfig(port, authToken, hooksToken, options.modelBaseUrl);
  // Its log beside its config, removed with them: by default the gateway keeps a day's log in /tmp/openclaw.
  config.logging = { file: join(home, "openclaw.log") };
  options.extraConfig?.(config);
  mkdirSync(dirname(configPath), { recursive: true });
  writeJson(configPath, config);

  // Built from scratch: the parent's OPENCLAW_* (a developer's own gateway token, state dir, profile)
  // must not leak into the test gateway.
  const env: Record<string, string> = {
    PATH: `${install.binDir}:${process.env.PATH ?? ""}`,
    HOME: home,
    ...EMBEDDED_ENV,
    ...options.env,
  };
  const log = new LineRing(LOG_RING_LINES);
  // detached: its own process group, so stop() reaches the helpers it forks too.
  const child = spawn(install.openclawBin, ["gateway", "run"], { cwd: home, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  child.stdout.on("data", (chunk: Buffer) => log.push(chunk));
  child.stderr.on("data", (chunk: Buffer) => log.push(chunk));
  let exited: string | null = null;
  const exit = new Promise<void>((resolve) => {
    child.once("exit", (code, signal) => {
      exited = signal ?? `exit ${code}`;
      resolve();
    });
    child.once("error", (error) => {
      exited = `spawn error: ${error.message}`;
      resolve();
    });
  });
  const pid = child.pid;
  if (pid === undefined) {
    await exit;
    rmSync(home, { recursive: true, force: true });
    throw new Error(`could not start ${install.openclawBin}: ${exited}`);
  }
  // A test process that dies without stop() must not leave a gateway behind.
  const killOnExit = (): void => signalGroup(pid, "SIGKILL");
  process.once("exit", killOnExit);

  let stopping: Promise<void> | null = null;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      process.removeListener("exit", killOnExit);
      await terminate(child, pid, exit, () => exited !== null);
      rmSync(home, { recursive: true, force: true, maxRetries: 3 });
    })();
    return stopping;
  };
  const gateway: RealGateway = {
    port,
    url: `http://127.0.0.1:${port}`,
    home,
    configPath,
    hooksToken,
    authToken,
    pid,
    stop,
    logTail: (lines = 80) => log.tail(lines),
    cli: (args, timeoutMs = CLI_TIMEOUT_MS) => {
      if (stopping) return Promise.reject(new Error("gateway stopped: its HOME is gone"));
      return runCli(install.openclawBin, args, home, env, timeoutMs);
    },
    readConfig: () => JSON.parse(readFileSync(configPath, "utf8")) as Record<string, unknown>,
    writeConfig: (next) => writeJson(configPath, next),
  };

  try {
    await waitReady(gateway, () => exited);
  } catch (error) {
    const tail = log.tail(60);
    await stop();
    throw new Error(`${(error as Error).message}\n--- gateway log tail ---\n${tail}`);
  }
  return gateway;
}

// POST /hooks/wake with `{}` is refused with 400 (no `text`) only once the hooks route is up. The right
// token every time: 20 bad ones a minute lock the client out with 429.
async function waitReady(gateway: RealGateway, exited: () => string | null): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = "no answer yet";
  while (Date.now() < deadline) {
    const why = exited();
    if (why !== null) throw new Error(`openclaw gateway exited before it was ready (${why})`);
    let status = 0;
    try {
      const res = await fetch(`${gateway.url}/hooks/wake`, {
        method: "POST",
        headers: { authorization: `Bearer ${gateway.hooksToken}`, "content-type": "application/json" },
        body: "{}",
        signal: AbortSignal.timeout(5_000),
      });
      await res.arrayBuffer();
      status = res.status;
    } catch (error) {
      last = (error as Error).message; // not listening yet
    }
    if (status === 400) return;
    if (status === 401) throw new Error("gateway refused the hooks token (401)");
    if (status !== 0) last = `HTTP ${status}`;
    await sleep(250);
  }
  throw new Error(`openclaw gateway not ready after ${READY_TIMEOUT_MS / 1000} s (last: ${last})`);
}

// SIGTERM to the group (the gateway shuts down in well under a second when idle), SIGKILL after the
// grace. Some helpers (the spawn broker) put themselves in their own process group, so the gateway's
// descendants are listed first and their groups are swept too.
async function terminate(child: ChildProcess, pid: number, exit: Promise<void>, hasExited: () => boolean): Promise<void> {
  const family = hasExited() ? [] : descendants(pid);
  if (!hasExited()) {
    signalGroup(pid, "SIGTERM");
    await Promise.race([exit, sleep(STOP_GRACE_MS)]);
  }
  const groups = new Set([pid, ...family.map((proc) => proc.pgid)]);
  for (const group of groups) signalGroup(group, "SIGKILL");
  for (const proc of family) signalPid(proc.pid, "SIGKILL");
  await exit;
  child.stdout?.destroy();
  child.stderr?.destroy();
  const deadline = Date.now() + 3_000;
  while ([...groups].some(alive) && Date.now() < deadline) await sleep(50);
}

interface Proc {
  pid: number;
  ppid: number;
  pgid: number;
}

function descendants(root: number): Proc[] {
  let table: Proc[];
  try {
    table = execFileSync("ps", ["-A", "-o", "pid=,ppid=,pgid="], { encoding: "utf8" })
      .trim().split("\n")
      .map((line) => line.trim().split(/\s+/).map(Number))
      .map(([pid = 0, ppid = 0, pgid = 0]) => ({ pid, ppid, pgid }));
  } catch {
    return []; // no ps: the group kill alone has to do
  }
  const found: Proc[] = [];
  const parents = new Set([root]);
  for (let grew = true; grew;) {
    grew = false;
    for (const proc of table) {
      if (parents.has(proc.ppid) && !parents.has(proc.pid)) {
        parents.add(proc.pid);
        found.push(proc);
        grew = true;
      }
    }
  }
  return found;
}

function signalGroup(pgid: number, signal: NodeJS.Signals): void {
  signalPid(-pgid, signal);
}

function signalPid(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    // ESRCH: already gone
  }
}

function alive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

function runCli(bin: string, args: string[], cwd: string, env: Record<string, string>, timeoutMs: number): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(bin, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`openclaw ${args.join(" ")} timed out after ${timeoutMs} ms\nstdout: ${stdout.slice(-2048)}\nstderr: ${stderr.slice(-2048)}`));
    }, timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
  });
}

// Write-then-rename, so the gateway's config watcher never reads a half-written file.
function writeJson(path: string, value: unknown): void {
  const temp = `${path}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, path);
}

// Listen on 0, read the port, close: racy in theory, fine for loopback tests.
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The last `size` lines of the gateway's stdout and stderr, interleaved as they came. */
class LineRing {
  private lines: string[] = [];
  private partial = "";
  private readonly size: number;

  constructor(size: number) {
    this.size = size;
  }

  push(chunk: Buffer): void {
    const parts = (this.partial + chunk.toString("utf8")).split("\n");
    this.partial = parts.pop() ?? "";
    this.lines.push(...parts);
    if (this.lines.length > this.size) this.lines.splice(0, this.lines.length - this.size);
  }

  tail(count: number): string {
    const all = this.partial ? [...this.lines, this.partial] : this.lines;
    return all.slice(-count).join("\n");
  }
}
