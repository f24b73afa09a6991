// The hub clients' credentials files as the agent reads and writes them: BotCord's
// (~/.botcord/credentials/<agent_id>.json, default.json a symlink; its field names and units as its own
// reader takes them) and Agentline's token writer. Proves the writes are atomic (a new inode renamed
// over, no temp file left), keep every other field and the file's own expiry unit, leave mode 600 and
// keep a symlink a symlink. Covers local-agent/hub/botcord-credentials.ts, credentials-file.ts,
// linked-credentials.ts and writeAgentlineToken.
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { writeAgentlineToken } from "../../local-agent/hub/agentline-credentials.ts";
import { chooseBotcordFile, readBotcordCredentials, writeBotcordToken } from "../../local-agent/hub/botcord-credentials.ts";
import { readLinkedFile, tokenForHub, writeLinkedToken } from "../../local-agent/hub/linked-credentials.ts";
import { codeOf } from "../support/node/error-code.ts";
import { identityFromPrivateKey, newIdentity } from "../../local-agent/identity.ts";
import type { Identity } from "../../local-agent/identity.ts";

// The Agentline test vector (docs/protocol.md, "Agent ids").
const VECTOR_SEED = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";

let dir = "";
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = "";
});

async function botcordHome(): Promise<string> {
  // Resolved: the reader answers with real paths (macOS's temp directory is behind a symlink).
  dir = realpathSync(await mkdtemp(join(tmpdir(), "clawrelay-botcord-")));
  mkdirSync(join(dir, "credentials"), { recursive: true, mode: 0o700 });
  return dir;
}

/** A file as BotCord's writeCredentialsFile leaves it, plus daemon fields we do not know. */
function botcordFile(root: string, identity: Identity, extra: Record<string, unknown> = {}): string {
  const path = join(root, "credentials", `${identity.agentId}.json`);
  const data = {
    version: 1,
    hubUrl: "https://api.botcord.chat",
    agentId: identity.agentId,
    keyId: "k_0123456789ab",
    privateKey: identity.privateKey,
    publicKey: identity.publicKey.slice("ed25519:".length),
    displayName: "Botty",
    savedAt: "2026-11-30T10:00:00.000Z",
    token: "old.jwt.token",
    tokenExpiresAt: 1_900_000_000,
    runtime: "openclaw-acp",
    openclawGateway: "default",
    ...extra,
  };
  writeFileSync(path, JSON.stringify(data, null, 2) + "\n", { mode: 0o600 });
  return path;
}

const json = (path: string) => JSON.parse(readFileSync(path, "utf8")) as Record<string, unknown>;

describe("BotCord credentials: reading", () => {
  it("reads the identity under the hub's key id, the hub, the name and the token (tokenExpiresAt in seconds)", async () => {
    const root = await botcordHome();
    const vector = await identityFromPrivateKey(VECTOR_SEED);
    const path = botcordFile(root, vector);
    const read = await readBotcordCredentials(path);
    expect(read.identity.agentId).toBe("ag_ff73a0647bbc");
    expect(read.identity.keyId).toBe("k_0123456789ab");
    expect(read).toMatchObject({ hubUrl: "https://api.botcord.chat", displayName: "Botty", token: { token: "old.jwt.token", expiresAtMs: 1_900_000_000_000 }, path });
  });

  it("takes the snake_case names and an expiry in ms, as BotCord's own reader does", async () => {
    const root = await botcordHome();
    const identity = await newIdentity();
    const path = join(root, "credentials", `${identity.agentId}.json`);
    writeFileSync(path, JSON.stringify({ hub_url: "https://hub.example/", agent_id: identity.agentId, key_id: "k_snake", private_key: identity.privateKey, token: "t", token_expires_at: 1_900_000_000_000 }));
    expect(await readBotcordCredentials(path)).toMatchObject({ hubUrl: "https://hub.example", token: { token: "t", expiresAtMs: 1_900_000_000_000 }, identity: { keyId: "k_snake" } });
  });

  it("a token saved without an expiry: the JWT's exp; without that, no token to use (its age cannot be told)", async () => {
    const root = await botcordHome();
    const claims = Buffer.from(JSON.stringify({ agent_id: "ag_x", exp: 1_900_000_123 })).toString("base64url");
    const jwt = `eyJhbGciOiJIUzI1NiJ9.${claims}.c2ln`;
    const withExp = botcordFile(root, await newIdentity(), { token: jwt, tokenExpiresAt: undefined });
    expect((await readBotcordCredentials(withExp)).token).toEqual({ token: jwt, expiresAtMs: 1_900_000_123_000 });
    const opaque = botcordFile(root, await newIdentity(), { token: "opaque", tokenExpiresAt: undefined });
    expect((await readBotcordCredentials(opaque)).token).toBeNull();
  });

  it("refuses a file whose agentId or publicKey does not match its key, or that has no keyId", async () => {
    const root = await botcordHome();
    const identity = await newIdentity();
    await expect(readBotcordCredentials(botcordFile(root, identity, { agentId: "ag_000000000000" }))).rejects.toMatchObject({ code: "botcord_identity_invalid" });
    const other = await newIdentity();
    await expect(readBotcordCredentials(botcordFile(root, identity, { publicKey: other.publicKey }))).rejects.toMatchObject({ code: "botcord_identity_invalid" });
    await expect(readBotcordCredentials(botcordFile(root, identity, { keyId: undefined }))).rejects.toThrow("has no keyId");
    await expect(readBotcordCredentials(join(root, "credentials", "ag_111111111111.json"))).rejects.toMatchObject({ code: "botcord_identity_missing" });
  });

  it("which file: the id named, else default.json's (a symlink, resolved to the file itself), else the only one; several and no default is an error naming --botcord-id", async () => {
    const root = await botcordHome();
    const a = await newIdentity();
    const b = await newIdentity();
    const only = botcordFile(root, a);
    expect(chooseBotcordFile(root)).toBe(only);
    const pathB = botcordFile(root, b);
    expect(codeOf(() => chooseBotcordFile(root))).toBe("botcord_identity_ambiguous");
    expect(() => chooseBotcordFile(root)).toThrow("--botcord-id");
    symlinkSync(pathB, join(root, "default.json"));
    expect(chooseBotcordFile(root)).toBe(pathB);
    expect(chooseBotcordFile(root, a.agentId)).toBe(only);
  });
});

describe("token writers", () => {
  it("BotCord: atomic (a new file renamed over, no temp left), every other field kept, tokenExpiresAt in seconds, mode 600", async () => {
    const root = await botcordHome();
    const path = botcordFile(root, await newIdentity());
    chmodSync(path, 0o644);
    const before = json(path);
    const inode = statSync(path).ino;
    writeBotcordToken(path, { token: "new.jwt.token", expiresAtMs: 1_900_086_400_000 });
    expect(json(path)).toEqual({ ...before, token: "new.jwt.token", tokenExpiresAt: 1_900_086_400 });
    expect(Object.keys(json(path))).toEqual(Object.keys(before));
    expect(statSync(path).ino).not.toBe(inode);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(readdirSync(join(root, "credentials"))).toEqual([`${String(before.agentId)}.json`]);
  });

  it("through BotCord's default.json symlink: the file it points at is written, the link stays a link", async () => {
    const root = await botcordHome();
    const path = botcordFile(root, await newIdentity());
    const link = join(root, "default.json");
    symlinkSync(path, link);
    writeBotcordToken(link, { token: "via.the.link", expiresAtMs: 1_900_000_100_000 });
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(json(path)).toMatchObject({ token: "via.the.link", tokenExpiresAt: 1_900_000_100 });
  });

  it("Agentline: token_expires_at stays in the unit the file uses (seconds, ms or an ISO date)", async () => {
    const root = await botcordHome();
    const identity = await newIdentity();
    const path = join(root, "agentline.json");
    const base = { hub_url: "https://agentgram.chat", agent_id: identity.agentId, key_id: "k_x", private_key: identity.privateKey, display_name: "A", extra_field: [1, 2] };
    for (const [previous, written] of [
      [1_900_000_000, 1_900_086_400],
      [1_900_000_000_000, 1_900_086_400_000],
      ["2030-03-17T17:46:40.000Z", "2030-03-18T17:46:40.000Z"],
      [undefined, 1_900_086_400],
    ] as const) {
      writeFileSync(path, JSON.stringify({ ...base, token: "old", token_expires_at: previous }), { mode: 0o600 });
      writeAgentlineToken(path, { token: "new", expiresAtMs: 1_900_086_400_000 });
      expect(json(path)).toEqual({ ...base, token: "new", token_expires_at: written });
    }
  });

  it("the linked file, either format: read its token (seconds) and hub, write a newer one; another hub's token is not this hub's", async () => {
    const root = await botcordHome();
    const path = botcordFile(root, await newIdentity());
    const link = { path, format: "botcord" as const };
    const file = readLinkedFile(link);
    expect(file).toEqual({ token: { token: "old.jwt.token", expiresAtMs: 1_900_000_000_000 }, hubUrl: "https://api.botcord.chat" });
    expect(tokenForHub(file, "https://api.botcord.chat/")).toEqual(file.token);
    expect(tokenForHub(file, "https://agentgram.chat")).toBeNull();
    writeLinkedToken(link, { token: "newer", expiresAtMs: 1_900_000_500_000 });
    expect(json(path)).toMatchObject({ token: "newer", tokenExpiresAt: 1_900_000_500 });
    expect(readLinkedFile(link).token).toEqual({ token: "newer", expiresAtMs: 1_900_000_500_000 });
  });
});
