// Reading a hub client's credentials file (BotCord's or Agentline's) and changing only its token.
// Other clients read these files at any moment, and know fields we do not: so the update reads the file,
// sets the two token fields, writes a temp file beside it (mode 600) and renames it over — a reader sees
// the old file or the new one, never half of one, and every other field survives. A symlink (BotCord's
// default.json points at a credentials file) is followed, so the link stays a link. Imported by
// agentline-credentials.ts and botcord-credentials.ts; covered by test/node/hub-credentials.test.ts.
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { expiresAtSec } from "../../protocol/index.ts";
import type { HubToken } from "../../protocol/index.ts";
import { AgentError } from "../errors.ts";

/** What clawrelay reads of either client's file besides the key: the hub, the name and the token. */
export interface CredentialsFileFields {
  hubUrl: string | null;
  displayName: string | null;
  /**
   * The hub JWT the client saved, with its expiry read from the file's own field and unit (else the
   * JWT's exp); null when the file holds none, or one whose end cannot be told.
   */
  token: HubToken | null;
  /** The file itself (a symlink resolved): the one whose token is kept in step. */
  path: string;
}

/** The file's JSON object; `code` names the format in the error ("botcord_identity_invalid"). */
export function readJsonObject(path: string, code: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(path, "utf8"));
  } catch (err) {
    throw new AgentError(code, `cannot read ${path} as JSON: ${(err as Error).message}`);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new AgentError(code, `${path} does not hold a JSON object`);
  return value as Record<string, unknown>;
}

/** Applies `change` to the file's object and writes it back atomically, mode 600. */
export function updateJsonFile(path: string, code: string, change: (data: Record<string, unknown>) => void): void {
  if (!existsSync(path)) throw new AgentError(code, `no credentials file at ${path}`);
  const real = realpathSync(path);
  const data = readJsonObject(real, code);
  change(data);
  // A dot name that does not end in .json: clients listing credentials/*.json never pick it up.
  const temp = join(dirname(real), `.${basename(real)}.${randomBytes(6).toString("hex")}.tmp`);
  try {
    writeFileSync(temp, JSON.stringify(data, null, 2) + "\n", { mode: 0o600 });
    chmodSync(temp, 0o600);
    renameSync(temp, real);
  } finally {
    rmSync(temp, { force: true });
  }
}

/**
 * An expiry written in the unit the file already uses (ms, seconds or an ISO date), so the client that
 * owns the file reads it as it wrote it; seconds when the file has none yet.
 */
export function expiryLike(previous: unknown, token: HubToken): number | string {
  if (typeof previous === "string" && previous !== "" && !/^\d+$/.test(previous)) return new Date(token.expiresAtMs).toISOString();
  if (typeof previous === "number" && previous >= 1e12) return token.expiresAtMs;
  return expiresAtSec(token);
}
