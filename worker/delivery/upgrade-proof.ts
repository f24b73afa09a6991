// Whether a WebSocket upgrade comes from the inbox's owner: the agent signs the upgrade with the
// signed-request headers (protocol/upgrade-proof.ts), checked as the owner's signed calls are — a key of
// the inbox, a timestamp within the window, a nonce used once. A proven upgrade skips the cap on
// unauthenticated sockets (socket-limits.ts), so anonymous peers cannot keep the owner's agent out. A
// request without the headers is an older agent (or anyone): it takes its place under the cap as before.
// Used by inbox-routes.ts (the upgrade); covered by test/worker/websocket-proof.test.ts.
import { REQUEST_HEADERS, RelayError } from "../../protocol/index.ts";
import { requireOwner } from "../access/request-auth.ts";
import type { OwnedInbox } from "../access/request-auth.ts";

/** proven: the owner's upgrade. refused: the headers were there but did not prove it (why, for the 429 it may meet). */
export type UpgradeProof = { proven: true } | { proven: false; refused: string | null };

export async function checkUpgradeProof(inbox: OwnedInbox, request: Request): Promise<UpgradeProof> {
  const present = Object.values(REQUEST_HEADERS).some((name) => request.headers.has(name));
  if (!present) return { proven: false, refused: null };
  try {
    await requireOwner(inbox, request, { spendNonce: true });
    return { proven: true };
  } catch (err) {
    // A proof that fails (a skewed clock, a replay, another inbox's key) is no proof, not a refusal: the
    // socket still gets its challenge, which a real key answers in-band whatever the clock says.
    if (err instanceof RelayError) return { proven: false, refused: `${err.code}: ${err.message}` };
    throw err;
  }
}
