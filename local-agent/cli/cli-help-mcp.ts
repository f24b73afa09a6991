// The help entry of `clawrelay mcp`: the inbox as an MCP server over stdio (docs/mcp.md). Pure data;
// imported by cli-help.ts; covered by test/node/cli-usage.e2e.test.ts and mcp-server.e2e.test.ts.
import type { CommandSpec } from "./cli-spec.ts";

export const MCP_COMMANDS: CommandSpec[] = [
  {
    kind: "command",
    name: "mcp",
    summary: "serve the inbox to an agent over MCP (stdio): read history, wait for mail, search, replay, send, delegate",
    usage: ["mcp [--read-only]"],
    flags: [{ name: "read-only", about: "leave out the tools that write (inbox_replay, message_send, agent_delegate)" }],
    positionals: 0,
    examples: ["clawrelay mcp", "openclaw mcp add clawrelay --command clawrelay --arg mcp", "claude mcp add clawrelay -- clawrelay mcp --read-only"],
  },
];
