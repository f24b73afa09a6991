// run.json, one of the agent's parts (agent.ts): where `clawrelay status`, `retry` and `doctor` find the
// running agent (cli/running-agent.ts reads it): its pid, API port and start time, mode 600. Removed at
// the stop only while it is still ours: a replaced agent must not delete the run.json of the one that
// replaced it. Covered by test/node/run-file.e2e.test.ts.
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export interface RunFile {
  /** Removes run.json if it is still ours. Idempotent. */
  close(): void;
}

/** Writes `runDir`/run.json; with no runDir (tests) there is none to write or remove. */
export function writeRunFile(runDir: string | undefined, run: { apiPort: number; startedAt: number }): RunFile {
  if (!runDir) return { close: () => {} };
  const path = join(runDir, "run.json");
  const record = JSON.stringify({ pid: process.pid, api_port: run.apiPort, started_at: run.startedAt });
  writeFileSync(path, record + "\n", { mode: 0o600 });
  return {
    close: () => {
      try {
        if (readFileSync(path, "utf8").trim() === record) rmSync(path, { force: true });
      } catch (err) {
        // Already gone (removed by hand, or the folder with it) is what closing wants; anything else is not.
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
    },
  };
}
