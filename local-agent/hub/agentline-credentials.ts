// Imports an existing Agentline identity (~/.agentline/credentials/<agent_id>.json; docs/hub-setup.md),
// so the same ag_ id works on the hub and on the relay, and keeps its token in step with the relay's.
// Imported by cli/init.ts, linked-credentials.ts and token-sources.ts; covered by
// test/node/credentials-and-settings.test.ts and test/node/hub-credentials.test.ts.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { keptHubToken } from "../../protocol/index.ts";
import type { HubToken } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";
import { expiryLike, updateJsonFile } from "./credentials-file.ts";
import type { CredentialsFileFields } from "./credentials-file.ts";
import { identityFromPrivateKey } from "../identity.ts";
import type { Identity } from "../identity.ts";

export interface AgentlineCredentials extends AgentlineFile {
  identity: Identity;
}

/** The file's fields without the identity its key derives to (reading a token needs no hashing). */
export type AgentlineFile = CredentialsFileFields;

/** The credentials file of one agent (it may not exist). */
export function credentialsFileOf(dir: string, agentId: string): string {
  return join(dir, "credentials", `${agentId}.json`);
}

export function agentlineDir(home = homedir()): string {
  return join(home, ".agentline");
}

/** Which credentials file to import: the named agent, else default.json's choice, else the only one. */
export function chooseCredentialsFile(dir: string, agentId?: string): string {
  const credentials = join(dir, "credentials");
  if (agentId) return credentialsFileOf(dir, agentId);
  const defaultFile = join(dir, "default.json");
  if (existsSync(defaultFile)) {
    const pointer = JSON.parse(readFileSync(defaultFile, "utf8")) as { agent_id?: unknown; default?: unknown };
    const id = pointer.agent_id ?? pointer.default;
    if (typeof id === "string") return join(credentials, `${id}.json`);
  }
  const files = existsSync(credentials) ? readdirSync(credentials).filter((f) => f.endsWith(".json")) : [];
  if (files.length === 1) return join(credentials, files[0]!);
  throw new AgentError(
    "agentline_identity_ambiguous",
    files.length === 0 ? `no Agentline credentials under ${credentials}` : `several Agentline identities under ${credentials}; name one with --agentline-id <agent_id>`,
  );
}

function readData(path: string): Record<string, unknown> & { private_key: string } {
  if (!existsSync(path)) throw new AgentError("agentline_identity_missing", `no Agentline credentials at ${path}`);
  const data = JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;
  if (typeof data.private_key !== "string") throw new AgentError("agentline_identity_invalid", `${path} has no private_key`);
  return data as Record<string, unknown> & { private_key: string };
}

/** The identity too, checked against the agent_id the file states (async: an ag_ id is a hash). */
export async function readAgentlineCredentials(path: string): Promise<AgentlineCredentials> {
  const data = readData(path);
  const identity = await identityFromPrivateKey(data.private_key, typeof data.key_id === "string" ? data.key_id : undefined);
  if (typeof data.agent_id === "string" && data.agent_id !== identity.agentId) {
    throw new AgentError("agentline_identity_invalid", `${path} says agent_id ${data.agent_id}, but its key derives to ${identity.agentId}`);
  }
  return { identity, ...fileFields(data, path) };
}

/** The hub, name and token, read synchronously for keeping the token in step (the identity was checked at import). */
export function readAgentlineFile(path: string): AgentlineFile {
  return fileFields(readData(path), path);
}

function fileFields(data: Record<string, unknown>, path: string): AgentlineFile {
  return {
    hubUrl: typeof data.hub_url === "string" ? data.hub_url : null,
    displayName: typeof data.display_name === "string" ? data.display_name : null,
    token: keptHubToken(data.token, data.token_expires_at),
    path,
  };
}

/** Sets token and token_expires_at (in the unit the file already uses); every other field is kept. */
export function writeAgentlineToken(path: string, token: HubToken): void {
  updateJsonFile(path, "agentline_identity_invalid", (data) => {
    data.token = token.token;
    data.token_expires_at = expiryLike(data.token_expires_at, token);
  });
}
