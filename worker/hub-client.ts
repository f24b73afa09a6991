// The two hub endpoints the relay calls (agentline.md): key look-up and receipt posting.
import { RelayError, isKeyId } from "../protocol/index.ts";
import type { KeyRecord, KeyState } from "../protocol/index.ts";

const HUB_TIMEOUT_MS = 10_000;

/** GET {hub}/registry/agents/{agent}/keys/{key}; null on 404, throws key_lookup_failed otherwise. */
export async function fetchHubKey(hubUrl: string, agentId: string, keyId: string): Promise<KeyRecord | null> {
  const url = `${hubUrl}/registry/agents/${encodeURIComponent(agentId)}/keys/${encodeURIComponent(keyId)}`;
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(HUB_TIMEOUT_MS) });
  } catch {
    throw new RelayError(502, "key_lookup_failed", `could not reach the hub at ${hubUrl} to look up key ${keyId}; retry later`);
  }
  if (response.status === 404) {
    await response.body?.cancel();
    return null;
  }
  const data = response.ok ? ((await response.json().catch(() => null)) as Record<string, unknown> | null) : null;
  if (!data || typeof data.pubkey !== "string" || !isKeyId(data.key_id)) {
    await response.body?.cancel();
    throw new RelayError(502, "key_lookup_failed", `the hub at ${hubUrl} answered ${response.status} without a usable key record for ${keyId}; retry later`);
  }
  const state: KeyState = data.state === "active" || data.state === "pending" || data.state === "revoked" ? data.state : "revoked";
  // A hub that names the owner is believed over the path we asked under.
  const owner = typeof data.agent_id === "string" ? data.agent_id : agentId;
  return { key_id: data.key_id, agent_id: owner, pubkey: data.pubkey, state };
}

export type ReceiptPostResult = "accepted" | "gone" | "retry";

/** POST {hub}/hub/receipt; "gone" on 404 (the hub has no such record: retrying cannot help). */
export async function postHubReceipt(hubUrl: string, receiptJson: string): Promise<ReceiptPostResult> {
  try {
    const response = await fetch(`${hubUrl}/hub/receipt`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: receiptJson,
      signal: AbortSignal.timeout(HUB_TIMEOUT_MS),
    });
    await response.body?.cancel();
    if (response.ok) return "accepted";
    return response.status === 404 ? "gone" : "retry";
  } catch {
    return "retry";
  }
}
