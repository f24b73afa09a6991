// Stripe webhooks: Stripe-Signature is "t=<unix>,v1=<hex>[,v1=…][,v0=…]"; each v1 is HMAC-SHA256 of
// "<t>.<raw body>" under the endpoint's signing secret (the whole "whsec_…" string is the key). While
// a secret is being rolled Stripe sends one v1 per live secret: any may match. The timestamp must be
// within 300 s; the event's `id` is the dedup key (Stripe retries for days with the same id).
// Refusals are 400, as Stripe's guide answers them.
import { anySignatureMatches, fromHex, signedContent } from "./hmac.ts";
import { checkTimestamp, jsonObject, refusal, stringField } from "./source-kinds.ts";
import type { SourceRequest, Verdict } from "./source-kinds.ts";
import type { HmacKey } from "./hmac.ts";

const STATUS = 400;
/** More v1 entries than any rollover produces are not tried: each costs a verification. */
const MAX_SIGNATURES = 8;

export async function verifyStripe(request: SourceRequest, keys: readonly HmacKey[]): Promise<Verdict> {
  const header = request.headers.get("stripe-signature");
  if (header === null) throw refusal(STATUS, "missing_signature", "no Stripe-Signature header: this URL takes events from a Stripe webhook endpoint");
  let timestamp: string | null = null;
  const signatures: Uint8Array[] = [];
  for (const part of header.split(",")) {
    const eq = part.indexOf("=");
    const [name, value] = [part.slice(0, eq).trim(), part.slice(eq + 1).trim()];
    if (name === "t") timestamp = value;
    if (name === "v1" && signatures.length < MAX_SIGNATURES) {
      const bytes = fromHex(value);
      if (bytes) signatures.push(bytes);
    }
  }
  if (timestamp === null || signatures.length === 0) {
    throw refusal(STATUS, "invalid_signature_header", 'Stripe-Signature must hold "t=<unix seconds>" and at least one "v1=<64 hex digits>"');
  }
  checkTimestamp(timestamp, request.nowSec, STATUS, "the Stripe-Signature timestamp");
  if (!(await anySignatureMatches(keys, signedContent(`${timestamp}.`, request.body), signatures))) {
    throw refusal(STATUS, "invalid_signature", "no v1 signature in Stripe-Signature matches under this source's secret: is it the endpoint's signing secret (whsec_…) from the Stripe dashboard?");
  }
  const event = jsonObject(request.body);
  return { event: { deliveryId: stringField(event, "id"), eventType: stringField(event, "type"), headers: {} } };
}
