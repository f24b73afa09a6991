// What `npm start` (start.ts) prints to try the stack: one-liners that make a message appear in the
// gateway. Their bodies are shaped as a hub sends them (a `sessionKey` with the `agentline:` prefix
// included), so they are delivered by the per-sender mapping docs/openclaw-setup.md recommends, which
// refuses a body without one ("sessionKey template rendered empty").
// And what the stand-in gateway prints of a hook it took, escaped (a sender wrote its body). Covered by
// test/node/start-lines.test.ts, terminal-output.test.ts and test/openclaw/mapping-fix.interop.test.ts.
import { terminalOutput } from "../local-agent/cli/terminal-text.ts";
import type { ReceivedHook } from "./standin-gateway.ts";

export interface StartLineFacts {
  home: string;
  agentId: string;
  hooksUrl: string;
  webhookToken: string | null;
  apiPort: number;
}

/** The body of the printed curl webhook: a hub's agent body. */
export const DEMO_WEBHOOK_BODY = { message: "hello as a webhook", name: "curl", sessionKey: "agentline:curl" };
export const DEMO_SEND_TEXT = "hello through clawrelay";

export function startLines(facts: StartLineFacts): string[] {
  const { home, agentId, hooksUrl, webhookToken, apiPort } = facts;
  return [
    "Make a message appear in the gateway:",
    `  npx clawrelay --home ${home} send --to ${agentId} --text "${DEMO_SEND_TEXT}"`,
    `  curl -s -X POST ${hooksUrl}/agentgram_inbox/agent -H 'Authorization: Bearer ${webhookToken}' -H 'Content-Type: application/json' -d '${JSON.stringify(DEMO_WEBHOOK_BODY)}'`,
    "Send webhooks to an app of yours on port 3000 instead (prints the URL; this agent forwards):",
    `  npx clawrelay --home ${home} listen 3000`,
    "Search and delegate through the local API (the dev agent publishes examples/card.json):",
    `  curl -s -X POST http://127.0.0.1:${apiPort}/api/search-agents -H 'Content-Type: application/json' -d '{"query":"weather forecast"}'`,
    `  curl -s -X POST http://127.0.0.1:${apiPort}/api/delegate-task -H 'Content-Type: application/json' -d '{"agent_id":"weather-bot","skill_id":"forecast","message":"Weather in Paris?"}'`,
  ];
}

/** The stand-in's lines for a hook it took: the body is a sender's, so nothing in it may act on the terminal. */
export function standinReceivedText(hooksPath: string, hook: Pick<ReceivedHook, "subpath" | "idempotencyKey" | "body">): string {
  return terminalOutput(`\n[stand-in gateway] POST ${hooksPath}/${hook.subpath}  Idempotency-Key: ${hook.idempotencyKey}\n  ${hook.body.toString("utf8")}\n`);
}
