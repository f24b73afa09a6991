// Slack requests: X-Slack-Signature is "v0=" + hex HMAC-SHA256 of "v0:<X-Slack-Request-Timestamp>:<raw
// body>" under the app's signing secret; the timestamp must be within 300 s. The url_verification
// challenge Slack sends when the Request URL is set is answered (after the signature check), never
// delivered. Events API retries (X-Slack-Retry-Num, X-Slack-Retry-Reason) carry the first attempt's
// event_id, the dedup key, so a retry of an accepted event is answered as a duplicate.
import { anySignatureMatches, fromHex, signedContent } from "./hmac.ts";
import { checkTimestamp, jsonObject, pickHeaders, refusal, stringField } from "./source-kinds.ts";
import type { SourceRequest, Verdict } from "./source-kinds.ts";
import type { HmacKey } from "./hmac.ts";

const STATUS = 401;
const HEADERS = ["x-slack-request-timestamp", "x-slack-retry-num", "x-slack-retry-reason"];

/** What a slash command or an interaction (form bodies) is: the command, or the payload's type. */
function formEventType(body: Uint8Array): string | null {
  const form = new URLSearchParams(new TextDecoder().decode(body));
  const command = form.get("command");
  if (command) return command;
  const payload = form.get("payload");
  return payload ? stringField(jsonObject(new TextEncoder().encode(payload)), "type") : null;
}

export async function verifySlack(request: SourceRequest, keys: readonly HmacKey[]): Promise<Verdict> {
  const timestamp = request.headers.get("x-slack-request-timestamp");
  const header = request.headers.get("x-slack-signature");
  if (timestamp === null || header === null) {
    throw refusal(STATUS, "missing_signature", "no X-Slack-Signature / X-Slack-Request-Timestamp: this URL takes requests from a Slack app");
  }
  const match = /^v0=([0-9a-fA-F]{64})$/.exec(header.trim());
  const signature = match ? fromHex(match[1]!) : null;
  if (!signature) throw refusal(STATUS, "invalid_signature_header", 'X-Slack-Signature must be "v0=" followed by 64 hex digits');
  checkTimestamp(timestamp, request.nowSec, STATUS, "X-Slack-Request-Timestamp");
  if (!(await anySignatureMatches(keys, signedContent(`v0:${timestamp}:`, request.body), [signature]))) {
    throw refusal(STATUS, "invalid_signature", "X-Slack-Signature does not match under this source's secret: is it the app's Signing Secret (Basic Information → App Credentials)?");
  }
  const body = jsonObject(request.body);
  if (body?.type === "url_verification") return { reply: { challenge: stringField(body, "challenge") ?? "" } };
  const inner = typeof body?.event === "object" && body.event !== null ? (body.event as Record<string, unknown>) : null;
  const eventType = body ? (stringField(inner, "type") ?? stringField(body, "type")) : formEventType(request.body);
  return { event: { deliveryId: stringField(body, "event_id"), eventType, headers: pickHeaders(request.headers, HEADERS) } };
}
