// The credentials file the agent keeps on the relay's hub token (settings.hub_credentials): read its
// token, write a newer one, whichever client's format it is. Used by token-sources.ts, token-handoff.ts,
// token-sync.ts and doctor/doctor-hub.ts; covered by test/node/hub-credentials.test.ts.
import { readAgentlineFile, writeAgentlineToken } from "./agentline-credentials.ts";
import { readBotcordFile, writeBotcordToken } from "./botcord-credentials.ts";
import type { HubCredentialsLink } from "../settings.ts";

export interface FileToken {
  token: string;
  /** Unix seconds: the unit the relay's hub_token frames use. */
  expiresAt: number;
}

export interface LinkedFile {
  /** null when the file holds no token (or one without an expiry). */
  token: FileToken | null;
  hubUrl: string | null;
}

/**
 * The file's hub and token; throws AgentError when it is missing or unreadable. Synchronous: the
 * identity in it was checked when it was imported, and its token is all that is read here.
 */
export function readLinkedFile(link: HubCredentialsLink): LinkedFile {
  const read = link.format === "botcord" ? readBotcordFile(link.path) : readAgentlineFile(link.path);
  const token = read.token && read.tokenExpiresAt ? { token: read.token, expiresAt: Math.floor(read.tokenExpiresAt / 1000) } : null;
  return { token, hubUrl: read.hubUrl };
}

export function writeLinkedToken(link: HubCredentialsLink, token: FileToken): void {
  if (link.format === "botcord") writeBotcordToken(link.path, token.token, token.expiresAt);
  else writeAgentlineToken(link.path, token.token, token.expiresAt);
}

/** Two hub URLs name the same hub (a trailing slash or letter case in the host aside). */
export function sameHub(a: string, b: string): boolean {
  const norm = (url: string) => {
    try {
      const u = new URL(url.trim());
      return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, "")}`;
    } catch {
      return url.trim().replace(/\/+$/, "");
    }
  };
  return norm(a) === norm(b);
}

/** The file's token when it is for `hubUrl` (a file naming no hub is taken as this one's). */
export function tokenForHub(file: LinkedFile, hubUrl: string): FileToken | null {
  return file.hubUrl === null || sameHub(file.hubUrl, hubUrl) ? file.token : null;
}

/** The newer of two tokens: the hub mints each with a 24 h life, so the later expiry is the newer. */
export function newerToken(a: FileToken | null, b: FileToken | null): FileToken | null {
  if (!a) return b;
  if (!b) return a;
  return b.expiresAt > a.expiresAt ? b : a;
}
