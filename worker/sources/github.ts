// GitHub webhooks: X-Hub-Signature-256 is "sha256=" + hex HMAC-SHA256 of the raw body under the secret
// typed into the webhook's settings. GitHub signs neither a timestamp nor X-GitHub-Delivery, so a
// captured delivery re-posted with that header changed or removed still verifies: events are deduplicated
// by the body's digest, which GitHub's own "Redeliver" (same id, same body) repeats too. The ping GitHub
// sends when a webhook is created is answered, never delivered. Refusals are 401, as GitHub's guide
// answers them. Covered by test/worker/sources-github.test.ts.
import { anySignatureMatches, fromHex } from "./hmac.ts";
import { pickHeaders, refusal } from "./source-kinds.ts";
import type { SourceRequest, Verdict } from "./source-kinds.ts";
import type { HmacKey } from "./hmac.ts";

const STATUS = 401;
const HEADERS = ["x-github-event", "x-github-delivery", "x-github-hook-id", "x-github-hook-installation-target-type", "x-github-hook-installation-target-id"];

export async function verifyGithub(request: SourceRequest, keys: readonly HmacKey[]): Promise<Verdict> {
  const header = request.headers.get("x-hub-signature-256");
  if (header === null) {
    throw refusal(STATUS, "missing_signature", "no X-Hub-Signature-256 header: give the GitHub webhook a secret (Settings → Webhooks → Secret), the one this source was added with");
  }
  const match = /^sha256=([0-9a-fA-F]{64})$/.exec(header.trim());
  const signature = match ? fromHex(match[1]!) : null;
  if (!signature) throw refusal(STATUS, "invalid_signature_header", 'X-Hub-Signature-256 must be "sha256=" followed by 64 hex digits');
  if (!(await anySignatureMatches(keys, request.body, [signature]))) {
    throw refusal(STATUS, "invalid_signature", "X-Hub-Signature-256 does not match the body under this source's secret: is the webhook's secret in GitHub the one this source has?");
  }
  const event = request.headers.get("x-github-event");
  if (event === "ping") return { reply: { ok: true, ping: true } };
  return { event: { deliveryId: request.headers.get("x-github-delivery"), dedupByBody: true, eventType: event, headers: pickHeaders(request.headers, HEADERS) } };
}
