// For senders that can sign nothing and set no header: a long random secret as the URL's last path
// segment, compared by its sha256 in constant time (only the hash is stored), never logged (http-errors.ts
// cuts it from logged paths). An Idempotency-Key header, when the sender sets one, is the dedup key.
import { constantTimeEqual, utf8 } from "../../protocol/index.ts";
import { refusal } from "./source-kinds.ts";
import type { SourceRequest, Verdict } from "./source-kinds.ts";
import { hashTokenSecret } from "./source-secrets.ts";

const STATUS = 401;

export async function verifyToken(request: SourceRequest, hashes: readonly string[]): Promise<Verdict> {
  if (request.pathSecret === null) {
    throw refusal(STATUS, "missing_source_secret", "this source takes events at …/sources/{name}/{secret}: post to the URL shown when the source was added");
  }
  const presented = utf8(await hashTokenSecret(request.pathSecret));
  let ok = false;
  // Every stored hash is compared, so the time does not say which (current or previous) matched.
  for (const hash of hashes) ok = constantTimeEqual(presented, utf8(hash)) || ok;
  if (!ok) throw refusal(STATUS, "invalid_source_secret", "the secret in the URL is not this source's: use the URL shown when the source was added or last rotated");
  const key = request.headers.get("idempotency-key");
  const deliveryId = key !== null && /^[\x21-\x7e]{1,256}$/.test(key) ? key : null;
  return { event: { deliveryId, eventType: null, headers: {} } };
}
