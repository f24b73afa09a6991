// The MCP SDK stays out of the idle agent (issue 33): only local-agent/mcp/ imports
// @modelcontextprotocol/sdk and zod, and the one way into that folder is cli.ts's dynamic import for
// `clawrelay mcp`, so `start`, the plugin and every other command never load them.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { importGraph, sourceFiles } from "../../scripts/import-graph.ts";

const ROOT = join(import.meta.dirname, "../..");
const files = sourceFiles(ROOT);
const inMcp = (file: string) => file.startsWith("local-agent/mcp/");

describe("where the MCP SDK loads", () => {
  it("only local-agent/mcp/ imports @modelcontextprotocol/sdk or zod", () => {
    const importers = files.filter((file) => /from\s*["'](@modelcontextprotocol\/sdk|zod)[/"']/.test(readFileSync(join(ROOT, file), "utf8")));
    expect(importers.length).toBeGreaterThan(0);
    expect(importers.filter((file) => !inMcp(file))).toEqual([]);
  });

  it("only cli.ts reaches local-agent/mcp/, and only by a dynamic import", () => {
    const graph = importGraph(ROOT, files);
    const outside = [...graph].filter(([file, imports]) => !inMcp(file) && imports.some(inMcp)).map(([file]) => file);
    expect(outside).toEqual(["local-agent/cli.ts"]);
    const cli = readFileSync(join(ROOT, "local-agent/cli.ts"), "utf8");
    expect(cli).toMatch(/await import\("\.\/mcp\/mcp-server\.ts"\)/);
    expect(cli).not.toMatch(/^import[^(]*["']\.\/mcp\//m);
  });
});
