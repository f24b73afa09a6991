// Importing an Agentline identity (~/.agentline/credentials/<agent_id>.json, docs/hub-setup.md) and the
// agent's own settings file: mode 600 in a 700 directory, stable error codes when missing or broken.
import { chmodSync, existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { chooseCredentialsFile, readAgentlineCredentials } from "../../local-agent/hub/agentline-credentials.ts";
import { codeOf } from "../support/node/error-code.ts";
import { identityFromPrivateKey, newIdentity } from "../../local-agent/identity.ts";
import type { Identity } from "../../local-agent/identity.ts";
import { loadSettings, saveSettings } from "../../local-agent/settings.ts";
import type { AgentSettings } from "../../local-agent/settings.ts";

// The Agentline test vector (docs/protocol.md, "Agent ids").
const VECTOR_SEED = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
const VECTOR_ID = "ag_ff73a0647bbc";

let dir = "";
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  dir = "";
});

async function tempDir(): Promise<string> {
  dir = await mkdtemp(join(tmpdir(), "clawrelay-creds-"));
  return dir;
}

function writeCredentials(agentlineDir: string, identity: Identity, extra: Record<string, unknown> = {}): string {
  const credentials = join(agentlineDir, "credentials");
  mkdirSync(credentials, { recursive: true });
  const path = join(credentials, `${identity.agentId}.json`);
  const data = {
    hub_url: "https://hub.example",
    agent_id: identity.agentId,
    display_name: "Alice",
    key_id: "k_abc123abc123",
    private_key: identity.privateKey,
    public_key: identity.publicKey,
    token: "jwt.secret",
    token_expires_at: 1_900_000_000,
    ...extra,
  };
  writeFileSync(path, JSON.stringify(data), { mode: 0o600 });
  return path;
}


describe("Agentline credentials import", () => {
  it("reads the identity, hub and display name; the id derives from the key", async () => {
    const root = await tempDir();
    const vector = await identityFromPrivateKey(VECTOR_SEED);
    expect(vector.agentId).toBe(VECTOR_ID);
    const path = writeCredentials(root, vector);
    const credentials = await readAgentlineCredentials(chooseCredentialsFile(root));
    expect(credentials.path).toBe(path);
    expect(credentials.identity.agentId).toBe(VECTOR_ID);
    expect(credentials.identity.publicKey).toBe("ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=");
    expect(credentials.identity.keyId).toBe("k_abc123abc123");
    expect(credentials).toMatchObject({ hubUrl: "https://hub.example", displayName: "Alice" });
  });

  it("follows default.json when there are several identities", async () => {
    const root = await tempDir();
    const a = await newIdentity();
    const b = await newIdentity();
    writeCredentials(root, a);
    const pathB = writeCredentials(root, b);
    writeFileSync(join(root, "default.json"), JSON.stringify({ agent_id: b.agentId }));
    expect(chooseCredentialsFile(root)).toBe(pathB);
    writeFileSync(join(root, "default.json"), JSON.stringify({ default: b.agentId }));
    expect(chooseCredentialsFile(root)).toBe(pathB);
  });

  it("takes the only file when there is no default.json", async () => {
    const root = await tempDir();
    const only = writeCredentials(root, await newIdentity());
    expect(chooseCredentialsFile(root)).toBe(only);
  });

  it("an explicit agent id wins over default.json", async () => {
    const root = await tempDir();
    const a = await newIdentity();
    const b = await newIdentity();
    const pathA = writeCredentials(root, a);
    writeCredentials(root, b);
    writeFileSync(join(root, "default.json"), JSON.stringify({ agent_id: b.agentId }));
    expect(chooseCredentialsFile(root, a.agentId)).toBe(pathA);
  });

  it("several identities without a default: agentline_identity_ambiguous, naming the CLI option that picks one", async () => {
    const root = await tempDir();
    writeCredentials(root, await newIdentity());
    writeCredentials(root, await newIdentity());
    expect(codeOf(() => chooseCredentialsFile(root))).toBe("agentline_identity_ambiguous");
    // The CLI's option for choosing one is --agentline-id (--import-agentline is a boolean flag).
    expect(() => chooseCredentialsFile(root)).toThrow("--agentline-id");
  });

  it("no identities at all is an error too", async () => {
    const root = await tempDir();
    expect(codeOf(() => chooseCredentialsFile(root))).toMatch(/^agentline_identity_/);
  });

  it("agent_id that does not match the key: agentline_identity_invalid", async () => {
    const root = await tempDir();
    const path = writeCredentials(root, await newIdentity(), { agent_id: "ag_000000000000" });
    await expect(readAgentlineCredentials(path)).rejects.toMatchObject({ code: "agentline_identity_invalid" });
    await expect(readAgentlineCredentials(path)).rejects.toThrow("ag_000000000000");
  });

  it("no private_key: agentline_identity_invalid; no file: agentline_identity_missing", async () => {
    const root = await tempDir();
    const path = writeCredentials(root, await newIdentity(), { private_key: undefined });
    await expect(readAgentlineCredentials(path)).rejects.toMatchObject({ code: "agentline_identity_invalid" });
    await expect(readAgentlineCredentials(join(root, "credentials", "ag_111111111111.json"))).rejects.toMatchObject({ code: "agentline_identity_missing" });
  });
});

async function sampleSettings(): Promise<AgentSettings> {
  const key = await newIdentity();
  const receipt = await newIdentity();
  return {
    relay_url: "https://relay.example",
    agent_id: key.agentId,
    hub_url: "https://hub.example",
    key: { key_id: key.keyId, private_key: key.privateKey, public_key: key.publicKey },
    receipt_key: { key_id: receipt.keyId, private_key: receipt.privateKey, public_key: receipt.publicKey },
    webhook_token: "wt",
  };
}

describe("settings file", () => {
  it("saveSettings writes mode 600 in a new 700 directory and round-trips", async () => {
    const root = await tempDir();
    const path = join(root, "home", "clawrelay", "agent.json");
    const settings = await sampleSettings();
    saveSettings(path, settings);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(root, "home", "clawrelay")).mode & 0o777).toBe(0o700);
    expect(loadSettings(path)).toEqual(settings);
    expect(readdirSync(join(root, "home", "clawrelay"))).toEqual(["agent.json"]);
  });

  it("an existing file readable by others is tightened to 600 on save", async () => {
    const root = await tempDir();
    const path = join(root, "agent.json");
    writeFileSync(path, "{}", { mode: 0o644 });
    chmodSync(path, 0o644);
    saveSettings(path, await sampleSettings());
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it("loadSettings: no file -> no_settings, naming init", async () => {
    const root = await tempDir();
    const path = join(root, "agent.json");
    expect(existsSync(path)).toBe(false);
    expect(codeOf(() => loadSettings(path))).toBe("no_settings");
    expect(() => loadSettings(path)).toThrow("clawrelay init");
  });

  it("loadSettings: broken JSON, missing fields or a bad agent_id -> invalid_settings", async () => {
    const root = await tempDir();
    const path = join(root, "agent.json");
    writeFileSync(path, "{ not json");
    expect(codeOf(() => loadSettings(path))).toBe("invalid_settings");
    const { receipt_key: _, ...noReceipt } = await sampleSettings();
    writeFileSync(path, JSON.stringify(noReceipt));
    expect(codeOf(() => loadSettings(path))).toBe("invalid_settings");
    expect(() => loadSettings(path)).toThrow("receipt_key");
    writeFileSync(path, JSON.stringify({ ...(await sampleSettings()), agent_id: "alice" }));
    expect(codeOf(() => loadSettings(path))).toBe("invalid_settings");
  });
});
