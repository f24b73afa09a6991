// The credentials file the agent keeps on the relay's hub token (settings.hub_credentials): read its
// token, write a newer one, whichever client's format it is (each format's reader and writer convert its
// own field and unit to and from HubToken). Used by token-sources.ts, token-handoff.ts, token-sync.ts and
// doctor/doctor-hub.ts; covered by test/node/hub-credentials.test.ts.
import type { HubToken } from "../../protocol/index.ts";
import { readAgentlineFile, writeAgentlineToken } from "./agentline-credentials.ts";
import { readBotcordFile, writeBotcordToken } from "./botcord-credentials.ts";
import type { HubCredentialsLink } from "../settings.ts";

/**
 * A token as the relay's hub_token frame carries it: `expiresAt` in unix SECONDS. The shape hub-side.ts
 * and hub-watch.ts read from token-sync.ts; everywhere else a token is a HubToken (expiresAtMs).
 */
export interface LinkedFile {
  /** null when the file holds no token (or one whose expiry cannot be told). */
  token: HubToken | null;
  hubUrl: string | null;
}

/**
 * The file's hub and token; throws AgentError when it is missing or unreadable. Synchronous: the
 * identity in it was checked when it was imported, and its token is all that is read here.
 */
export function readLinkedFile(link: HubCredentialsLink): LinkedFile {
  const read = link.format === "botcord" ? readBotcordFile(link.path) : readAgentlineFile(link.path);
  return { token: read.token, hubUrl: read.hubUrl };
}

export function writeLinkedToken(link: HubCredentialsLink, token: HubToken): void {
  if (link.format === "botcord") writeBotcordToken(link.path, token);
  else writeAgentlineToken(link.path, token);
}

/** Two hub URLs name the same hub (a trailing slash or letter case in the host aside). */
export function sameHub(a: string, b: string): boolean {
  const norm = (url: string) => {
    try {
      const u = new URL(url.trim());
      return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
    } catch {
      // Not a URL: compared as text.
      return url.trim().replace(/\/+$/, "");
    }
  };
  return norm(a) === norm(b);
}

/** The file's token when it is for `hubUrl` (a file naming no hub is taken as this one's). */
export function tokenForHub(file: LinkedFile, hubUrl: string): HubToken | null {
  return file.hubUrl === null || sameHub(file.hubUrl, hubUrl) ? file.token : null;
}
