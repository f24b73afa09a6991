// Imports a BotCord identity (~/.botcord/credentials/<agent_id>.json, docs/hub-setup.md) and keeps its
// token in step with the relay's. The format is BotCord's own (packages/protocol-core/src/credentials.ts
// in github:botlearn-ai/botcord): {version: 1, hubUrl, agentId, keyId, privateKey (base64 seed),
// publicKey (base64, no "ed25519:"), displayName, savedAt, token, tokenExpiresAt (unix SECONDS; its
// reader takes a value above 1e10 for ms)} plus fields of its daemon we leave alone; its reader also
// takes the snake_case names. ~/.botcord/default.json is a symlink to the default agent's file.
// Imported by cli/init.ts and linked-credentials.ts; covered by test/node/hub-credentials.test.ts.
import { existsSync, readdirSync, realpathSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { expiresAtSec, isAgentId, keptHubToken } from "../../protocol/index.ts";
import type { HubToken } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { identityFromPrivateKey } from "../identity.ts";
import type { Identity } from "../identity.ts";
import { readJsonObject, updateJsonFile } from "./credentials-file.ts";
import type { CredentialsFileFields } from "./credentials-file.ts";

/** BotCord's default hub (cli/src/constants.ts), used when nothing else names one. */
export const BOTCORD_DEFAULT_HUB = "https://api.botcord.chat";
const INVALID = "botcord_identity_invalid";

export interface BotcordCredentials extends BotcordFile {
  identity: Identity;
}

/** The file's fields without the identity its key derives to (reading a token needs no hashing). */
export type BotcordFile = CredentialsFileFields;

export function botcordDir(home = homedir()): string {
  return join(home, ".botcord");
}

/** The first non-empty string among the names, as BotCord's own reader picks (camelCase, then snake_case). */
function text(data: Record<string, unknown>, ...names: string[]): string | null {
  for (const name of names) {
    const value = data[name];
    if (typeof value === "string" && value.trim() !== "") return value;
  }
  return null;
}

/**
 * Which file to import: the agent named (--botcord-id, else $BOTCORD_AGENT_ID as BotCord's CLI reads
 * it), else the one default.json stands for, else the only one.
 */
export function chooseBotcordFile(dir: string, agentId?: string): string {
  const credentials = join(dir, "credentials");
  if (agentId) return join(credentials, `${agentId}.json`);
  const link = join(dir, "default.json");
  if (existsSync(link)) {
    const id = text(readJsonObject(link, INVALID), "agentId", "agent_id");
    const own = id && isAgentId(id) ? join(credentials, `${id}.json`) : null;
    return own && existsSync(own) ? realpathSync(own) : realpathSync(link);
  }
  const files = existsSync(credentials) ? readdirSync(credentials).filter((f) => f.endsWith(".json")) : [];
  if (files.length === 1) return join(credentials, files[0]!);
  throw new AgentError(
    "botcord_identity_ambiguous",
    files.length === 0 ? `no BotCord credentials under ${credentials}` : `several BotCord identities under ${credentials} and no default.json; name one with --botcord-id <agent_id>`,
  );
}

function readData(path: string): { data: Record<string, unknown>; privateKey: string; keyId: string } {
  if (!existsSync(path)) throw new AgentError("botcord_identity_missing", `no BotCord credentials at ${path}`);
  const data = readJsonObject(path, INVALID);
  const privateKey = text(data, "privateKey", "private_key");
  const keyId = text(data, "keyId", "key_id");
  if (!privateKey) throw new AgentError(INVALID, `${path} has no privateKey`);
  if (!keyId) throw new AgentError(INVALID, `${path} has no keyId (BotCord's own clients refuse such a file too)`);
  return { data, privateKey, keyId };
}

/** The hub, name and token, read synchronously for keeping the token in step (the identity was checked at import). */
export function readBotcordFile(path: string): BotcordFile {
  return fileFields(readData(path).data, path);
}

/** The identity too, checked against the agentId and publicKey the file states (async: an ag_ id is a hash). */
export async function readBotcordCredentials(path: string): Promise<BotcordCredentials> {
  const { data, privateKey, keyId } = readData(path);
  const identity = await identityFromPrivateKey(privateKey, keyId);
  const agentId = text(data, "agentId", "agent_id");
  if (agentId && agentId !== identity.agentId) throw new AgentError(INVALID, `${path} says agentId ${agentId}, but its key derives to ${identity.agentId}`);
  const publicKey = text(data, "publicKey", "public_key");
  if (publicKey && publicKey.replace(/^ed25519:/, "") !== identity.publicKey.slice("ed25519:".length)) {
    throw new AgentError(INVALID, `${path} has a publicKey that does not match its privateKey`);
  }
  return { identity, ...fileFields(data, path) };
}

function fileFields(data: Record<string, unknown>, path: string): BotcordFile {
  return {
    hubUrl: text(data, "hubUrl", "hub_url", "hub")?.trim().replace(/\/+$/, "") ?? null,
    displayName: text(data, "displayName", "display_name"),
    token: keptHubToken(text(data, "token"), data.tokenExpiresAt ?? data.token_expires_at),
    path: realpathSync(path),
  };
}

/** Sets token and tokenExpiresAt (unix seconds, as BotCord writes it); every other field is kept. */
export function writeBotcordToken(path: string, token: HubToken): void {
  updateJsonFile(path, INVALID, (data) => {
    data.token = token.token;
    data.tokenExpiresAt = expiresAtSec(token);
    // The snake_case twin, if the file has one, must not contradict the camelCase one.
    if ("token_expires_at" in data) data.token_expires_at = expiresAtSec(token);
  });
}
