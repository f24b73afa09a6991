// The agent's side of the one hub client (protocol/hub-api-core.ts and the endpoints beside it): the
// deadline its hub commands give a call, and how a hub instant reads in their lines. Everything else —
// the calls, the errors (HubCallError, which the CLI prints as any RelayError), the token and its
// readers — is the protocol's. Used by the hub commands in this folder; covered by
// test/node/hub-link.test.ts.
import { hubClient } from "../../protocol/index.ts";
import type { HubClient } from "../../protocol/index.ts";

/** Longer than the relay's 10 s: registering an endpoint waits for the hub's two probes of the relay. */
export const AGENT_HUB_DEADLINE_MS = 15_000;

export function agentHubClient(hubUrl: string): HubClient {
  return hubClient(hubUrl, { deadlineMs: AGENT_HUB_DEADLINE_MS });
}

/** An instant for a status line: ISO, or "unknown". */
export const when = (ms: number | null): string => (ms === null ? "unknown" : new Date(ms).toISOString());
