// One token per agent, shared: once `hub register` (or a `hub status` that had to refresh) settled on a
// token, the relay is handed it (PUT /inbox/{id}/hub/token: taken when it expires later than the one the
// relay holds), and the linked credentials file gets it when the file's own expires earlier — so the
// relay, the agent and the user's BotCord or Agentline client all use the same token, and none of them
// refreshes and ends the others'. Used by hub-link.ts and hub-status.ts; covered by
// test/node/hub-link.test.ts and test/node/hub-bind.test.ts. Never prints the token.
import { existsSync } from "node:fs";
import type { HubToken } from "../../protocol/index.ts";
import type { AgentSettings } from "../settings.ts";
import { when } from "./hub-client.ts";
import type { HeldToken } from "./hub-session.ts";
import { readLinkedFile, sameHub, writeLinkedToken } from "./linked-credentials.ts";
import { offerRelayHubToken } from "./relay-hub.ts";

export interface Handoff {
  /** The relay took it (or held it already). */
  relay: boolean;
  /** The linked file was written. */
  file: boolean;
  lines: string[];
}

const fromRelay = (held: HeldToken) => held.source.startsWith("the relay's token");

async function toRelay(settings: AgentSettings, held: HeldToken, token: HubToken): Promise<{ ok: boolean; line: string }> {
  if (fromRelay(held)) return { ok: true, line: "the relay: holds this token already" };
  try {
    const answer = await offerRelayHubToken(settings, token);
    if (!answer) return { ok: false, line: "the relay: it is older and keeps no hub token (it refreshes its own, which ends this one: update the relay)" };
    if (answer.taken) return { ok: true, line: `the relay: took it (valid until ${when(token.expiresAtMs)}); it pulls and signs in with it from now on` };
    if (answer.heldExpiresAtMs === token.expiresAtMs) return { ok: true, line: "the relay: holds this token already" };
    return { ok: true, line: `the relay: holds a token that expires later (${when(answer.heldExpiresAtMs ?? 0)}) and kept it` };
  } catch (err) {
    return { ok: false, line: `the relay: could not be handed the token — ${(err as Error).message}` };
  }
}

function toFile(settings: AgentSettings, token: HubToken): { ok: boolean; line: string } {
  const link = settings.hub_credentials;
  if (!link) return { ok: false, line: "credentials file: none linked (init --import-botcord or --import-agentline links one)" };
  if (!existsSync(link.path)) return { ok: false, line: `credentials file: ${link.path} is gone` };
  try {
    const file = readLinkedFile(link);
    if (file.hubUrl && !sameHub(file.hubUrl, settings.hub_url)) return { ok: false, line: `credentials file: ${link.path} is for another hub (${file.hubUrl}): left alone` };
    if (file.token?.token === token.token) return { ok: true, line: `credentials file: ${link.path} holds this token already` };
    if (file.token && file.token.expiresAtMs >= token.expiresAtMs) return { ok: false, line: `credentials file: ${link.path} holds a token that expires later (${when(file.token.expiresAtMs)}): left alone` };
    writeLinkedToken(link, token);
    return { ok: true, line: `credentials file: wrote it into ${link.path} (${file.token ? "its token expired earlier" : "it had none"}), so your ${link.format === "botcord" ? "BotCord" : "Agentline"} client uses it too` };
  } catch (err) {
    return { ok: false, line: `credentials file: ${link.path} not updated — ${(err as Error).message}` };
  }
}

/** Hands `held` to the relay and (unless `file: false`) the linked credentials file. */
export async function shareToken(settings: AgentSettings, held: HeldToken, to: { file?: boolean } = {}): Promise<Handoff> {
  if (held.expiresAtMs === null) return { relay: false, file: false, lines: ["token not shared: its expiry is unknown (the hub said none, and it is not a JWT with exp)"] };
  const token = { token: held.token, expiresAtMs: held.expiresAtMs };
  const relay = await toRelay(settings, held, token);
  const file = to.file === false ? null : toFile(settings, token);
  return { relay: relay.ok, file: file?.ok ?? false, lines: file ? [relay.line, file.line] : [relay.line] };
}
