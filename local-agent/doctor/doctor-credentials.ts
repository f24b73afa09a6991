// What doctor and status say of how the relay keeps senders' credential headers (Authorization, Cookie,
// API keys: protocol/credential-headers.ts) for sources with a forward target: sealed under the relay
// operator's RECEIPT_KEY_SECRET, or in clear without it (the queue summary's `credentials`; an older relay
// says nothing, and neither do these). Imported by doctor.ts and status-advice.ts; covered by
// test/node/doctor-credentials.test.ts.
import type { QueueSummary } from "../../protocol/index.ts";
import type { AgentStatusAnswer } from "../agent-status.ts";
import type { AddCheck } from "./doctor-gateway.ts";

const FIX = "the relay's operator sets RECEIPT_KEY_SECRET (npx wrangler secret put RECEIPT_KEY_SECRET, at least 16 characters; docs/security.md): events stored after that keep them sealed";

/** doctor's check; `forwarding`: the inbox's sources with a forward target (the only ones whose events keep credentials). */
export function credentialKeepingCheck(summary: QueueSummary | null, forwarding: readonly string[], add: AddCheck): void {
  if (!summary?.credentials) return;
  if (summary.credentials === "sealed") {
    return add("OK", "senders' credential headers kept for forward targets are sealed at the relay (RECEIPT_KEY_SECRET is set)");
  }
  if (forwarding.length === 0) {
    return add("OK", "no source forwards to an app, so the relay keeps no sender credentials (it has no RECEIPT_KEY_SECRET: if one did, they would be kept in clear)");
  }
  add("WARN", `the relay keeps senders' credential headers (Authorization, Cookie, API keys) for ${forwarding.join(", ")} in clear in its storage: it has no RECEIPT_KEY_SECRET`, FIX);
}

/** status's warning line, or null: credentials kept in clear while events go to apps. */
export function credentialKeepingWarning(status: Pick<AgentStatusAnswer, "relay_queue" | "delivery">): string | null {
  const keeping = "credentials" in status.relay_queue ? status.relay_queue.credentials : undefined;
  if (keeping !== "clear" || status.delivery.forwards.length === 0) return null;
  return `WARNING   the relay keeps senders' credential headers for forward targets in clear (no RECEIPT_KEY_SECRET on the relay): ${FIX}`;
}
