// Webhook tokens: 32 random bytes shown once at claim; only their sha256 is stored, and a presented
// token is compared by hash in constant time. Deliberately unrelated to the gateway's hooks.token.
import { constantTimeEqual, randomBytes, sha256Hex, toBase64Url, utf8 } from "../../protocol/index.ts";

const TOKEN_PREFIX = "crw_";

export function mintWebhookToken(): string {
  return TOKEN_PREFIX + toBase64Url(randomBytes(32));
}

export function hashWebhookToken(token: string): Promise<string> {
  return sha256Hex(token);
}

export async function webhookTokenMatches(presented: string, storedHash: string): Promise<boolean> {
  return constantTimeEqual(utf8(await hashWebhookToken(presented)), utf8(storedHash));
}

/** The token from `Authorization: Bearer …` or `x-openclaw-token` (what OpenClaw-style senders use). */
export function presentedWebhookToken(headers: Headers): string | null {
  const auth = headers.get("authorization");
  if (auth) {
    const match = /^Bearer\s+(.+)$/i.exec(auth.trim());
    return match ? match[1]!.trim() : null;
  }
  return headers.get("x-openclaw-token")?.trim() || null;
}
