// What every tool of `clawrelay mcp` is handed (the inbox's access, the settings, where the running agent
// may be found, the clock) and the one way a tool's outcome becomes an MCP result: a value as JSON text
// and structured content; an AgentError (a refusal, an unreachable relay, a bad argument) as a result
// with isError, so the model reads why and can act on it. Used by mcp-server.ts and the tool files;
// covered by test/node/mcp-server.e2e.test.ts.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { AgentError } from "../errors.ts";
import type { InboxAccess } from "../relay/messages.ts";
import type { AgentSettings } from "../settings.ts";

export interface McpContext {
  settings: AgentSettings;
  settingsPath: string;
  /** The settings directory: where a running agent's run.json is looked for (agent_delegate). */
  home: string;
  env: Record<string, string | undefined>;
  access(): Promise<InboxAccess>;
  nowMs(): number;
}

export const READ_ONLY = { readOnlyHint: true, destructiveHint: false, idempotentHint: true } as const;

export async function toolAnswer(work: () => Promise<Record<string, unknown>>): Promise<CallToolResult> {
  let value: Record<string, unknown>;
  try {
    value = await work();
  } catch (err) {
    // A failure the tool can explain goes back to the model as a tool error; anything else is a bug the SDK reports.
    if (!(err instanceof AgentError)) throw err;
    return { isError: true, content: [{ type: "text", text: err.message }] };
  }
  return { content: [{ type: "text", text: JSON.stringify(value, null, 2) }], structuredContent: value };
}
