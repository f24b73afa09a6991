// `clawrelay init` names the OpenClaw side as its next step too (issue 24): the mappings it prints are
// those of docs/openclaw-setup.md, "The mappings", so pasting them from either place gives the same config.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import JSON5 from "json5";
import { describe, expect, it } from "vitest";
import { initReport } from "../../local-agent/cli/init.ts";
import type { InitResult } from "../../local-agent/cli/init.ts";

const result = {
  created: true,
  hooksUrl: "https://relay.example/inbox/ag_0123456789ab/hooks",
  webhookToken: "crw_x",
  settings: { agent_id: "ag_0123456789ab", relay_url: "https://relay.example", hub_url: "https://agentgram.chat" },
} as unknown as InitResult;

function docsMappings(): unknown[] {
  const doc = readFileSync(join(import.meta.dirname, "../../docs/openclaw-setup.md"), "utf8");
  const block = /```json5\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf("## The mappings")))?.[1] ?? "{}";
  return (JSON5.parse(block) as { hooks: { mappings: unknown[] } }).hooks.mappings;
}

describe("initReport: the OpenClaw side", () => {
  const report = initReport(result, "/home/u/.clawrelay/agent.json");

  it("prints the agentgram pair of mappings exactly as docs/openclaw-setup.md has them", () => {
    const printed = report.split("\n").filter((line) => line.trim().startsWith("{ match:")).map((line) => JSON5.parse(line.trim().replace(/,$/, "")) as unknown);
    expect(printed).toHaveLength(2);
    expect(docsMappings().slice(0, 2)).toEqual(printed);
  });

  it("names both ways to run the agent and the check", () => {
    expect(report).toContain("openclaw plugins install clawrelay");
    expect(report).toContain("clawrelay start");
    expect(report).toContain("clawrelay doctor checks both sides");
  });
});
