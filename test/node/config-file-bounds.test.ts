// Settings files pointed at something that is not a settings file (local-agent/gateway/config-file.ts):
// agent.json, openclaw.json and run.json as a FIFO (a read would wait for a writer for good), a link to
// /dev/zero (a read would grow without end), a directory, or past the 1 MiB bound are refused with an
// error naming the file — through the real CLI in a child process, so a hang fails the test by its
// time-out rather than freezing the runner — while a link to a real file is still followed.
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { CONFIG_FILE_MAX_BYTES, readConfigText } from "../../local-agent/gateway/config-file.ts";
import { readOpenClawConfig } from "../../local-agent/gateway/openclaw-config.ts";
import { loadSettings } from "../../local-agent/settings.ts";
import { runCli } from "./cli-harness.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempHome(): string {
  const dir = mkdtempSync(join(tmpdir(), "clawrelay-bounds-"));
  dirs.push(dir);
  return dir;
}

const mkfifo = (path: string) => execFileSync("mkfifo", [path]);

/** A home whose openclaw.json is looked for in the home itself (absent unless a test puts one there). */
const cliEnv = (home: string) => ({ CLAWRELAY_HOME: home, OPENCLAW_CONFIG_PATH: join(home, "openclaw.json"), HOME: home });

describe("settings files that are not regular files, or too large", () => {
  it("agent.json as a FIFO: doctor names it as a FIFO and exits 1 instead of hanging", async () => {
    const home = tempHome();
    mkfifo(join(home, "agent.json"));
    const doctor = await runCli(["doctor"], cliEnv(home), 20_000);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`[FAIL] ${join(home, "agent.json")} is a FIFO (named pipe), not a settings file`);
    expect(doctor.stdout).toContain(`put your agent.json back at ${join(home, "agent.json")}`);
  });

  it("openclaw.json as a FIFO: doctor names it and points at the real one, instead of hanging", async () => {
    const home = tempHome();
    mkfifo(join(home, "openclaw.json"));
    const doctor = await runCli(["doctor"], cliEnv(home), 20_000);
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toContain(`[FAIL] ${join(home, "openclaw.json")} is a FIFO (named pipe), not a settings file`);
    expect(doctor.stdout).toContain("point OPENCLAW_CONFIG_PATH (or agent.json gateway.config_path) at the gateway's real openclaw.json");
  });

  it("agent.json linked to /dev/zero: `clawrelay messages` refuses it as a device, naming the file", async () => {
    const home = tempHome();
    symlinkSync("/dev/zero", join(home, "agent.json"));
    const messages = await runCli(["messages"], cliEnv(home), 20_000);
    expect(messages.code).not.toBe(0);
    expect(messages.stderr).toContain(`${join(home, "agent.json")} is a device, not a settings file`);
  });

  it("run.json as a FIFO: status says no agent runs and why, instead of hanging", async () => {
    const home = tempHome();
    mkfifo(join(home, "run.json"));
    const status = await runCli(["status"], cliEnv(home), 20_000);
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(`${join(home, "run.json")} is unreadable: ${join(home, "run.json")} is a FIFO (named pipe)`);
  });

  it("openclaw.json a directory, or agent.json past the bound: refused naming the file; a link to a real agent.json is followed", () => {
    const home = tempHome();
    mkdirSync(join(home, "openclaw.json"));
    expect(() => readOpenClawConfig({ OPENCLAW_CONFIG_PATH: join(home, "openclaw.json") })).toThrow(`${join(home, "openclaw.json")} is a directory, not a settings file`);

    const big = join(home, "big.json");
    writeFileSync(big, `{}${" ".repeat(CONFIG_FILE_MAX_BYTES)}`);
    expect(() => loadSettings(big)).toThrow(`${big} holds more than ${CONFIG_FILE_MAX_BYTES} bytes`);

    const real = join(home, "real.json");
    const settings = { relay_url: "http://127.0.0.1:1", agent_id: "ag_0123456789ab", hub_url: "http://127.0.0.1:1", key: { key_id: "k", private_key: "p", public_key: "q" }, receipt_key: { key_id: "k", private_key: "p", public_key: "q" } };
    writeFileSync(real, JSON.stringify(settings));
    symlinkSync(real, join(home, "agent.json"));
    expect(loadSettings(join(home, "agent.json")).agent_id).toBe("ag_0123456789ab");
    expect(readConfigText(real)).toBe(JSON.stringify(settings));
  });

  // A regular file's size is only what stat said when it was asked: a file that grows meanwhile (a config
  // being written) or one whose size reads 0 (procfs) was cut at that size plus one byte, so its text
  // came back truncated and failed as "not valid JSON" (and agent.json's advice is init --force).
  it.runIf(process.platform === "linux")("a regular file longer than its stat size is read to its end (up to the bound)", () => {
    const text = readConfigText("/proc/self/status");
    expect(text).toMatch(/^Name:\t/);
    expect(text).toContain("\nPid:\t");
  });
});
