// Discord interactions (slash commands, buttons, modals sent to an app's Interactions Endpoint URL):
// X-Signature-Ed25519 is the hex Ed25519 signature of X-Signature-Timestamp followed by the raw body,
// under the application's public key (the source's "secret"). Discord's guide requires 401 for a bad
// signature and sends one on purpose when the URL is saved, so every refusal here is 401. The type 1
// PING Discord sends to check the URL is answered {"type":1} by the relay itself, never delivered.
// Verified under protocol/ed25519.ts's one rule (WebCrypto, canonical S, no small-order key).
// Covered by test/worker/sources-discord.test.ts.
import { verifyWebCrypto } from "../../protocol/index.ts";
import { fromHex, signedContent } from "./hmac.ts";
import { checkTimestamp, jsonObject, pickHeaders, refusal, stringField } from "./source-kinds.ts";
import type { SourceRequest, Verdict } from "./source-kinds.ts";

const STATUS = 401;
const HEADERS = ["x-signature-timestamp"];
/** Discord's interaction types (its API reference, "Interaction Type"); PING is answered, not delivered. */
const PING = 1;
const APPLICATION_COMMAND = 2;
const TYPE_NAMES: Record<number, string> = { 2: "application_command", 3: "message_component", 4: "application_command_autocomplete", 5: "modal_submit" };

/** A slash command is filed under its name (as a Slack command is); any other interaction as `interaction.<type's name>`. */
function eventType(body: Record<string, unknown>, type: number): string {
  const data = typeof body.data === "object" && body.data !== null ? (body.data as Record<string, unknown>) : null;
  const command = type === APPLICATION_COMMAND ? stringField(data, "name") : null;
  return command ?? `interaction.${TYPE_NAMES[type] ?? String(type)}`;
}

export async function verifyDiscord(request: SourceRequest, publicKeys: readonly Uint8Array[]): Promise<Verdict> {
  const timestamp = request.headers.get("x-signature-timestamp");
  const header = request.headers.get("x-signature-ed25519");
  if (timestamp === null || header === null) {
    throw refusal(STATUS, "missing_signature", "no X-Signature-Ed25519 / X-Signature-Timestamp: this URL takes interactions from a Discord application (its Interactions Endpoint URL)");
  }
  const signature = /^[0-9a-fA-F]{128}$/.test(header.trim()) ? fromHex(header.trim()) : null;
  if (!signature) throw refusal(STATUS, "invalid_signature_header", "X-Signature-Ed25519 must be 128 hex digits");
  checkTimestamp(timestamp, request.nowSec, STATUS, "X-Signature-Timestamp");
  const signed = signedContent(timestamp, request.body);
  let valid = false;
  for (const key of publicKeys) valid = valid || (await verifyWebCrypto(key, signed, signature));
  if (!valid) {
    throw refusal(STATUS, "invalid_signature", "X-Signature-Ed25519 does not match under this source's key: is it the application's Public Key (Developer Portal → General Information)?");
  }
  const body = jsonObject(request.body);
  const type = typeof body?.type === "number" && Number.isSafeInteger(body.type) ? body.type : null;
  if (body === null || type === null) throw refusal(400, "invalid_interaction", "a Discord interaction is a JSON object with a numeric type");
  if (type === PING) return { reply: { type: 1 } };
  return { event: { deliveryId: stringField(body, "id"), eventType: eventType(body, type), headers: pickHeaders(request.headers, HEADERS) } };
}
