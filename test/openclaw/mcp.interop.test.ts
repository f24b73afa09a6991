// `clawrelay mcp` registered with the REAL OpenClaw (2026.9.6, see real-gateway.interop.test.ts for the
// set-up) as its docs/mcp.md says: `openclaw mcp add` saves it, `openclaw mcp probe --json` starts it
// over stdio and lists its eight tools under OpenClaw's names (clawrelay__inbox_poll, …), with no
// approval hint (every tool carries its safety annotations) and no diagnostics; saved again with
// `--read-only` (`openclaw mcp set`), the probe lists the five that do not write.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runInit } from "../../local-agent/cli/init.ts";
import { ensureOpenClaw } from "../../scripts/openclaw-install.ts";
import { CLI } from "../node/cli-harness.ts";
import { NO_HUB, startRelay } from "../support/node/stack.ts";
import type { LocalRelay } from "../support/node/stack.ts";
import { startFakeModel } from "./support/fake-model.ts";
import type { FakeModel } from "./support/fake-model.ts";
import { startRealGateway } from "./support/real-gateway.ts";
import type { RealGateway } from "./support/real-gateway.ts";

const READING = ["directory_search", "inbox_poll", "inbox_search", "inbox_wait", "message_get"];
const WRITING = ["agent_delegate", "inbox_replay", "message_send"];

let model: FakeModel;
let relay: LocalRelay;
let gateway: RealGateway;
let home: string;

interface ProbeJson {
  servers: Record<string, { tools: number; approvalHint?: string }>;
  tools: string[];
  diagnostics: unknown[];
}

beforeAll(async () => {
  const install = await ensureOpenClaw((line) => process.stderr.write(`[openclaw install] ${line}\n`));
  model = await startFakeModel();
  relay = await startRelay();
  gateway = await startRealGateway(install, { modelBaseUrl: model.baseUrl });
  home = await mkdtemp(join(tmpdir(), "clawrelay-interop-mcp-"));
  await runInit({ settingsPath: join(home, "agent.json"), env: { CLAWRELAY_HOME: home, HOME: gateway.home }, relay: relay.url, hub: NO_HUB, name: "Interop MCP" });
});

afterAll(async () => {
  await gateway?.stop();
  await model?.close();
  await relay?.stop();
  if (home) await rm(home, { recursive: true, force: true });
});

async function probe(): Promise<ProbeJson> {
  const probed = await gateway.cli(["mcp", "probe", "clawrelay", "--json"]);
  expect(probed.code, `${probed.stdout}\n${probed.stderr}`).toBe(0);
  return JSON.parse(probed.stdout) as ProbeJson;
}

describe("clawrelay mcp in the real OpenClaw", () => {
  it("openclaw mcp add registers it and openclaw mcp probe --json lists its eight annotated tools", async () => {
    // This test's Node runs the TypeScript CLI directly; an installed clawrelay is `--command clawrelay --arg mcp`.
    const added = await gateway.cli(["mcp", "add", "clawrelay", "--command", process.execPath, "--arg", CLI, "--arg", "mcp", "--env", `CLAWRELAY_HOME=${home}`]);
    expect(added.code, `${added.stdout}\n${added.stderr}`).toBe(0);
    const found = await probe();
    expect(found.diagnostics).toEqual([]);
    expect(found.servers.clawrelay).toMatchObject({ tools: 8 });
    expect(found.servers.clawrelay?.approvalHint).toBeUndefined();
    expect([...found.tools].sort()).toEqual([...READING, ...WRITING].map((t) => `clawrelay__${t}`).sort());
  });

  it("saved with --read-only, the probe lists only the five tools that do not write", async () => {
    const server = { command: process.execPath, args: [CLI, "mcp", "--read-only"], env: { CLAWRELAY_HOME: home } };
    const set = await gateway.cli(["mcp", "set", "clawrelay", JSON.stringify(server)]);
    expect(set.code, `${set.stdout}\n${set.stderr}`).toBe(0);
    const found = await probe();
    expect([...found.tools].sort()).toEqual(READING.map((t) => `clawrelay__${t}`));
  });
});
