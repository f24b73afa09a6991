// What users install: `npm pack`, then `npm install -g` of the tarball into a temporary prefix, run by
// the machine's own Node (20 here; Node does not strip types under node_modules, so this only works
// with the built JS in dist/). The installed `clawrelay` answers --version and --help, and a real
// `init` + `send` work against a local relay. The tarball ships only what runs.
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import packageJson from "../../package.json" with { type: "json" };
import { REPO_ROOT } from "../../scripts/local-workerd.ts";
import { NO_HUB, relayFixture } from "../support/node/stack.ts";

const run = promisify(execFile);
const fixture = relayFixture();
let dir: string;
let tarball: string;
let bin: string;
let tarballFiles: string[];

/** The machine's Node (not the project's node_modules/.bin Node 22), as a user's shell would find it. */
const SYSTEM_PATH = (process.env.PATH ?? "").split(delimiter).filter((p) => !p.includes("node_modules")).join(delimiter);

function cli(args: string[], env: Record<string, string> = {}) {
  return run(bin, args, { env: { PATH: SYSTEM_PATH, HOME: dir, ...env }, timeout: 30_000 }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: { code?: number; stdout?: string; stderr?: string }) => ({ code: err.code ?? 1, stdout: err.stdout ?? "", stderr: err.stderr ?? "" }),
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "clawrelay-pack-"));
  const packed = await run("npm", ["pack", "--json", "--pack-destination", dir], { cwd: REPO_ROOT, timeout: 120_000 });
  const info = JSON.parse(packed.stdout.slice(packed.stdout.indexOf("["))) as { filename: string; files: { path: string }[] }[];
  tarball = join(dir, info[0]!.filename);
  tarballFiles = info[0]!.files.map((f) => f.path);
  await run("npm", ["install", "-g", "--prefix", join(dir, "prefix"), "--no-audit", "--no-fund", tarball], {
    env: { ...process.env, PATH: SYSTEM_PATH },
    timeout: 180_000,
  });
  bin = join(dir, "prefix", "bin", "clawrelay");
}, 240_000);

afterAll(() => rm(dir, { recursive: true, force: true }));

describe("the packed CLI, installed globally", () => {
  it("ships only what runs: the built JS, the plugin manifest, the README and the licence — no sources, tests, benches or CI", () => {
    expect(tarballFiles).toEqual(
      expect.arrayContaining(["LICENSE", "README.md", "package.json", "openclaw.plugin.json", "dist/local-agent/cli.js", "dist/protocol/index.js", "dist/openclaw-plugin/clawrelay-plugin.js", "dist/local-agent/inspector/index.html", "dist/local-agent/inspector/inspector.js"]),
    );
    expect(tarballFiles.filter((f) => !f.startsWith("dist/") && !["LICENSE", "README.md", "package.json", "openclaw.plugin.json"].includes(f))).toEqual([]);
    expect(tarballFiles.some((f) => f.endsWith(".ts"))).toBe(false);
  });

  it("runs on the machine's Node, not the project's", async () => {
    const { stdout } = await run("node", ["--version"], { env: { PATH: SYSTEM_PATH } });
    expect(stdout.trim()).toMatch(/^v\d+\./);
    expect((await cli(["--version"])).stdout).toContain(packageJson.version);
  });

  it("--help and init --help answer without a relay", async () => {
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("clawrelay");
    const initHelp = await cli(["init", "--help"]);
    expect(initHelp.code).toBe(0);
    expect(initHelp.stdout).toContain("--relay");
  });

  it("a real init and send against a local relay", async () => {
    const env = { CLAWRELAY_HOME: join(dir, "home") };
    const init = await cli(["init", "--relay", fixture.relay().url, "--hub", NO_HUB], env);
    expect(init.code, init.stderr).toBe(0);
    expect(init.stdout).toMatch(/Claimed inbox (ag_[0-9a-f]{12})/);
    const agentId = /Claimed inbox (ag_[0-9a-f]{12})/.exec(init.stdout)![1]!;
    const send = await cli(["send", "--to", agentId, "--text", "hello from the installed CLI"], env);
    expect(send.code, send.stderr).toBe(0);
    expect(send.stdout).toMatch(new RegExp(`queued at ${agentId} as id \\d+`));
  });
});
