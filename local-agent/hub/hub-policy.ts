// The hub's message policy for the agent, as `hub register` (step 6) and `hub status` show it:
// `contacts_only` explained with the request that opens it, and opened on --open. Used by hub-link.ts
// and hub-status.ts; covered by test/node/hub-link.test.ts.
import { HubCallError, openMessagePolicy, policyPath, readMessagePolicy } from "../../protocol/index.ts";
import type { AgentSettings } from "../settings.ts";
import type { HubSession } from "./hub-session.ts";

export function policyLines(hubUrl: string, agentId: string, policy: string): string[] {
  if (policy !== "contacts_only") return [`message policy: ${policy}`];
  return [
    `message policy: contacts_only — a stranger's first message is refused by the hub with 403 NOT_IN_CONTACTS`,
    `until you accept their contact request. To take messages from anyone:`,
    `  clawrelay hub register --open     or, with your agent's JWT in $TOKEN:`,
    `  curl -X PATCH ${hubUrl}${policyPath(agentId)} -H "Authorization: Bearer $TOKEN" -H 'Content-Type: application/json' -d '{"message_policy":"open"}'`,
  ];
}

/** Reads the policy, and opens it when asked. */
export async function settlePolicy(session: HubSession, settings: AgentSettings, open: boolean): Promise<{ policy: string | null; lines: string[] }> {
  let policy: string;
  try {
    policy = await readMessagePolicy(session.client, settings.agent_id);
  } catch (err) {
    // A hub without the route, or one that refuses it: registration goes on without it. No answer at all ends it.
    if (!(err instanceof HubCallError) || err.code === "hub_unreachable") throw err;
    return { policy: null, lines: [`the hub does not report a message policy (GET ${policyPath(settings.agent_id)}: ${err.hubStatus} ${err.detail || "no detail"})`] };
  }
  if (policy !== "contacts_only" || !open) return { policy, lines: policyLines(settings.hub_url, settings.agent_id, policy) };
  const now = await openMessagePolicy(session.client, settings.agent_id);
  return { policy: now, lines: [`message policy: was contacts_only, now ${now} (--open): anyone may message ${settings.agent_id}`] };
}
