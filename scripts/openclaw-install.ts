// Installs the real OpenClaw gateway, pinned, for the interop tests: Node 24 (openclaw refuses the
// project's Node 22) and openclaw itself, both from npm, into a cache folder outside the source tree so
// the ~770 MB install is shared by every checkout and survives `git clean`. A stamp file, written only
// after both installs succeeded, marks the folder as reusable; without it the folder is redone.
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

export const NODE_VERSION = "24.21.0";
export const OPENCLAW_VERSION = "2026.9.6";

export interface OpenClawInstall {
  dir: string;
  /** `<dir>/node_modules/.bin`: put it first on PATH so openclaw's `#!/usr/bin/env node` finds Node 24. */
  binDir: string;
  openclawBin: string;
  nodeBin: string;
  /** False when the stamp said the folder was already complete. */
  installedNow: boolean;
  seconds: number;
}

interface Stamp {
  node: string;
  openclaw: string;
  installedAt: string;
}

const STAMP_FILE = ".clawrelay-openclaw-stamp.json";
const STDERR_TAIL_BYTES = 2048;
/** Another process's install lock older than this is taken to be left by a crash. */
const STALE_LOCK_MS = 15 * 60_000;
/** Environment passed to npm: what it needs to find its config, cache and registry, nothing else. */
const NPM_ENV_KEYS = [
  "HOME", "USER", "LANG", "LC_ALL", "TMPDIR", "TERM",
  "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy",
  "NODE_EXTRA_CA_CERTS", "SSL_CERT_FILE", "SSL_CERT_DIR",
  "npm_config_registry", "npm_config_cache", "npm_config_userconfig",
];

export function openClawCacheDir(): string {
  const explicit = process.env.CLAWRELAY_OPENCLAW_CACHE;
  if (explicit) return explicit;
  const cacheHome = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cacheHome, "clawrelay", `openclaw-${OPENCLAW_VERSION}-node-${NODE_VERSION}`);
}

export async function ensureOpenClaw(log: (line: string) => void = () => {}): Promise<OpenClawInstall> {
  const started = Date.now();
  const dir = openClawCacheDir();
  const binDir = join(dir, "node_modules", ".bin");
  const result = (installedNow: boolean): OpenClawInstall => ({
    dir,
    binDir,
    openclawBin: join(binDir, "openclaw"),
    nodeBin: join(binDir, "node"),
    installedNow,
    seconds: (Date.now() - started) / 1000,
  });
  if (isComplete(dir, binDir)) return result(false);

  mkdirSync(dir, { recursive: true });
  // Test files may run in parallel workers: one installs, the others wait and then reuse.
  const release = await lock(`${dir}.lock`, log);
  try {
    if (isComplete(dir, binDir)) return result(false);
    log(`installing node@${NODE_VERSION} and openclaw@${OPENCLAW_VERSION} into ${dir}`);
    // No stamp: whatever is there is a half install; start clean rather than trust it.
    for (const name of ["node_modules", "package.json", "package-lock.json", STAMP_FILE]) {
      rmSync(join(dir, name), { recursive: true, force: true });
    }
    // What `npm init -y` would write, but with a fixed name: npm refuses to install "openclaw" into a
    // package of that same name, which `npm init -y` would produce for a folder called "openclaw".
    writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: "clawrelay-openclaw-cache", version: "0.0.0", private: true }, null, 2)}\n`);
    const npmArgs = ["install", "--save-exact", "--no-audit", "--no-fund"];
    await run("npm", [...npmArgs, `node@${NODE_VERSION}`], dir, process.env.PATH ?? "", log);
    // openclaw's preinstall checks `node --version`, so Node 24 must come first on PATH for it.
    await run("npm", [...npmArgs, `openclaw@${OPENCLAW_VERSION}`], dir, `${binDir}:${process.env.PATH ?? ""}`, log);
    const stamp: Stamp = { node: NODE_VERSION, openclaw: OPENCLAW_VERSION, installedAt: new Date().toISOString() };
    writeFileSync(join(dir, STAMP_FILE), `${JSON.stringify(stamp, null, 2)}\n`);
    const done = result(true);
    log(`installed in ${done.seconds.toFixed(1)} s`);
    return done;
  } finally {
    release();
  }
}

function isComplete(dir: string, binDir: string): boolean {
  try {
    const stamp = JSON.parse(readFileSync(join(dir, STAMP_FILE), "utf8")) as Partial<Stamp>;
    return stamp.node === NODE_VERSION && stamp.openclaw === OPENCLAW_VERSION
      && existsSync(join(binDir, "node")) && existsSync(join(binDir, "openclaw"));
  } catch {
    return false;
  }
}

// mkdir is atomic, so the lock is a folder; a crashed holder's lock goes stale after STALE_LOCK_MS.
async function lock(path: string, log: (line: string) => void): Promise<() => void> {
  let told = false;
  for (;;) {
    try {
      mkdirSync(path);
      return () => rmSync(path, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    }
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_LOCK_MS) {
        rmSync(path, { recursive: true, force: true });
        continue;
      }
    } catch {
      continue; // released between mkdir and stat
    }
    if (!told) log(`waiting for another install (${path})`);
    told = true;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

function run(command: string, args: string[], cwd: string, path: string, log: (line: string) => void): Promise<void> {
  const env: Record<string, string> = { PATH: path };
  for (const key of NPM_ENV_KEYS) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  const shown = `${command} ${args.join(" ")}`;
  log(`$ ${shown}`);
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = Buffer.alloc(0);
    child.stdout.on("data", () => {}); // drained so npm never blocks on a full pipe
    child.stderr.on("data", (chunk: Buffer) => {
      stderr = Buffer.concat([stderr, chunk]);
      if (stderr.length > 4 * STDERR_TAIL_BYTES) stderr = stderr.subarray(stderr.length - STDERR_TAIL_BYTES);
    });
    child.on("error", (error) => reject(new Error(`${shown}: ${error.message}`)));
    child.on("close", (code, signal) => {
      if (code === 0) return resolve();
      const tail = stderr.subarray(Math.max(0, stderr.length - STDERR_TAIL_BYTES)).toString("utf8");
      reject(new Error(`${shown} failed (${signal ?? `exit ${code}`}) in ${cwd}:\n${tail}`));
    });
  });
}
