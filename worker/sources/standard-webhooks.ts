// Standard Webhooks (Svix, and the services that send through it: Resend, Clerk and others):
// webhook-id, webhook-timestamp and webhook-signature (Svix's own names svix-id, svix-timestamp,
// svix-signature are read the same way). The signature header is a space-separated list of
// "v1,<base64 HMAC-SHA256>" over "<id>.<timestamp>.<raw body>"; the key is the base64 after "whsec_".
// Several signatures are allowed (a secret being rotated); other versions (v1a, asymmetric) are
// skipped. The timestamp must be within 300 s; webhook-id is the dedup key. Refusals are 400.
import { fromBase64 } from "../../protocol/index.ts";
import { anySignatureMatches, signedContent } from "./hmac.ts";
import { checkTimestamp, jsonObject, refusal, stringField } from "./source-kinds.ts";
import type { SourceRequest, Verdict } from "./source-kinds.ts";
import type { HmacKey } from "./hmac.ts";

const STATUS = 400;
const MAX_SIGNATURES = 8;

function header(headers: Headers, name: "id" | "timestamp" | "signature"): string | null {
  return headers.get(`webhook-${name}`) ?? headers.get(`svix-${name}`);
}

/** The HMAC key of a "whsec_…" secret: its base64 part, 24 to 64 bytes; null when it is not one. */
export function standardWebhooksKey(secret: string): Uint8Array | null {
  const key = fromBase64(secret.startsWith("whsec_") ? secret.slice(6) : secret);
  return key && key.length >= 24 && key.length <= 64 ? key : null;
}

export async function verifyStandardWebhooks(request: SourceRequest, keys: readonly HmacKey[]): Promise<Verdict> {
  const id = header(request.headers, "id");
  const timestamp = header(request.headers, "timestamp");
  const list = header(request.headers, "signature");
  if (id === null || timestamp === null || list === null) {
    throw refusal(STATUS, "missing_signature", "webhook-id, webhook-timestamp and webhook-signature (or svix-id, svix-timestamp, svix-signature) are all required");
  }
  if (!/^[\x21-\x7e]{1,256}$/.test(id)) throw refusal(STATUS, "invalid_signature_header", "webhook-id must be 1 to 256 printable characters");
  const signatures: Uint8Array[] = [];
  for (const entry of list.split(" ")) {
    if (!entry.startsWith("v1,") || signatures.length >= MAX_SIGNATURES) continue;
    const bytes = fromBase64(entry.slice(3));
    if (bytes) signatures.push(bytes);
  }
  if (signatures.length === 0) throw refusal(STATUS, "invalid_signature_header", 'webhook-signature holds no "v1,<base64>" signature (only v1, HMAC-SHA256, is verified)');
  checkTimestamp(timestamp, request.nowSec, STATUS, "webhook-timestamp");
  if (!(await anySignatureMatches(keys, signedContent(`${id}.${timestamp}.`, request.body), signatures))) {
    throw refusal(STATUS, "invalid_signature", "no v1 signature in webhook-signature matches under this source's secret: is it the endpoint's signing secret (whsec_…)?");
  }
  const headers = { "webhook-id": id, "webhook-timestamp": timestamp };
  return { event: { deliveryId: id, eventType: stringField(jsonObject(request.body), "type"), headers } };
}
