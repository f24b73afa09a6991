// Finding the agent that runs for a settings directory, standalone or in the gateway's plugin: both
// write run.json (pid, API port) into it, and its status must name the same agent id (another home's
// agent may have taken the port of a crashed one). Used through doctor/agent-presence.ts, which also
// looks in the plugin's home, by `status`, `doctor`, `retry` and `listen`; covered by
// test/node/cli-start-status.e2e.test.ts, forward-cli.e2e.test.ts and config-file-bounds.test.ts (run.json
// read only as a small regular file).
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { AgentStatusAnswer } from "../agent-status.ts";
import { readConfigText } from "../gateway/config-file.ts";

/** run.json holds a pid and a port: anything larger is not one. */
const RUN_FILE_MAX_BYTES = 64 * 1024;

export type RunningAgent = { running: true; pid: number; apiPort: number; status: AgentStatusAnswer } | { running: false; why: string };

/** `agentId` is asked only once a run.json was found (a home with no agent need not have settings). */
export async function findRunningAgent(home: string, agentId: () => string): Promise<RunningAgent> {
  let run: { api_port?: unknown; pid?: unknown };
  const path = join(home, "run.json");
  if (!existsSync(path)) return { running: false, why: "no running agent found" };
  try {
    // A regular file within the bound only: a FIFO or device planted there must not hang `status`.
    run = JSON.parse(readConfigText(path, RUN_FILE_MAX_BYTES)) as typeof run;
  } catch (err) {
    return { running: false, why: `no running agent found (${path} is unreadable: ${(err as Error).message})` };
  }
  if (typeof run.api_port !== "number" || typeof run.pid !== "number") return { running: false, why: "no running agent found (run.json is unreadable)" };
  const res = await fetch(`http://127.0.0.1:${run.api_port}/clawrelay/status`).catch(() => null);
  if (!res?.ok) return { running: false, why: `the agent (pid ${run.pid}) does not answer on 127.0.0.1:${run.api_port}; it may have crashed` };
  const status = (await res.json()) as AgentStatusAnswer;
  if (status.agent_id !== agentId()) {
    return { running: false, why: `no agent of this settings directory is running (run.json is stale: pid ${run.pid} is gone and 127.0.0.1:${run.api_port} is another agent's)` };
  }
  return { running: true, pid: run.pid, apiPort: run.api_port, status };
}
