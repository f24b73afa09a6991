// Picks the verifier of a source's kind. Imported by source-routes.ts; covered by test/worker/sources-*.test.ts.
import { verifyDiscord } from "./discord.ts";
import { verifyGithub } from "./github.ts";
import type { SourceKind } from "../../protocol/index.ts";
import type { SourceKeys, SourceRequest, Verdict } from "./source-kinds.ts";
import { verifySlack } from "./slack.ts";
import { verifyStandardWebhooks } from "./standard-webhooks.ts";
import { verifyStripe } from "./stripe.ts";
import { verifyToken } from "./token.ts";

export async function verifySourceRequest(kind: SourceKind, request: SourceRequest, keys: SourceKeys): Promise<Verdict> {
  if (keys.kind === "hash") return verifyToken(request, keys.hashes);
  if (keys.kind === "ed25519") return verifyDiscord(request, keys.publicKeys);
  if (kind === "github") return verifyGithub(request, keys.keys);
  if (kind === "stripe") return verifyStripe(request, keys.keys);
  if (kind === "slack") return verifySlack(request, keys.keys);
  return verifyStandardWebhooks(request, keys.keys);
}
