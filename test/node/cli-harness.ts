// Runs the real CLI (local-agent/cli.ts) as a child process for the cli-*.e2e tests: one-shot commands
// with their output and exit code, long-running `start` with its output captured, temp homes.
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

export const CLI = join(import.meta.dirname, "../../local-agent/cli.ts");

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Variables a developer's shell might set that would steer the CLI away from the test's files. */
const SCRUBBED = ["CLAWRELAY_HOME", "OPENCLAW_CONFIG_PATH", "OPENCLAW_STATE_DIR", "OPENCLAW_HOME", "OPENCLAW_GATEWAY_PORT", "OPENCLAW_GATEWAY_TOKEN", "OPENCLAW_GATEWAY_PASSWORD", "AGENTLINE_HUB", "BOTCORD_HUB", "BOTCORD_AGENT_ID", "SOCIETY_AI_API_PORT"];

export function childEnv(env: Record<string, string>): Record<string, string | undefined> {
  const base: Record<string, string | undefined> = { ...process.env };
  for (const name of SCRUBBED) delete base[name];
  return { ...base, ...env };
}

/** `input`: what the command reads on stdin (none: stdin is closed). */
export function runCli(args: string[], env: Record<string, string>, timeoutMs = 20_000, input?: string): Promise<CliResult> {
  return runScript(CLI, args, env, timeoutMs, input);
}

/** Runs a .ts entry point with the test's Node to completion; fails the test past `timeoutMs`. */
export function runScript(script: string, args: string[], env: Record<string, string>, timeoutMs = 20_000, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { env: childEnv(env), stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    if (input !== undefined) child.stdin?.end(input);
    let stdout = "";
    let stderr = "";
    child.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`${script} ${args.join(" ")} did not exit within ${timeoutMs} ms; stderr: ${stderr}`));
    }, timeoutMs);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

export interface RunningCli {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** Sends SIGTERM and resolves with the exit code (SIGKILL after 10 s). */
  stop(): Promise<number | null>;
}

export function spawnCli(args: string[], env: Record<string, string>): RunningCli {
  const child = spawn(process.execPath, [CLI, ...args], { env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
  child.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
}

export interface TempHome {
  dir: string;
  env: Record<string, string>;
  cleanup(): Promise<void>;
}

/** A fresh HOME with CLAWRELAY_HOME inside it (nothing there yet). */
export async function tempHome(): Promise<TempHome> {
  const dir = await mkdtemp(join(tmpdir(), "clawrelay-cli-"));
  return { dir, env: { HOME: dir, CLAWRELAY_HOME: join(dir, "clawrelay") }, cleanup: () => rm(dir, { recursive: true, force: true }) };
}

/** A loopback port that nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const address = server.address();
  const port = address && typeof address !== "string" ? address.port : 0;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
