// Key texts and the ids derived from them. agent_id hashes the base64 TEXT (docs/protocol.md, "Agent ids"), so the
// parser must accept exactly one text per key, or one key would own several inboxes.
import { describe, expect, it } from "vitest";
import { agentIdFor, defaultKeyIdFor, formatPublicKey, generateSeed, isAgentId, isKeyId, parsePublicKey, publicKeyFromSeed } from "../../protocol/index.ts";
import { testAgentIdFor, testKeyIdFor } from "../support/workerd/agents.ts";

const PUBKEY = "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg=";
// Same 32 bytes: the last base64 char's two unused bits are set ("g" = 100000, "h" = 100001).
const PUBKEY_NON_CANONICAL = "ed25519:A6EHv/POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbh=";

describe("parsePublicKey", () => {
  it("parses the canonical text", () => {
    expect(parsePublicKey(PUBKEY)?.length).toBe(32);
  });

  it("refuses a second spelling of the same key, which would derive a different agent id", async () => {
    expect(await agentIdFor(PUBKEY_NON_CANONICAL)).not.toBe(await agentIdFor(PUBKEY));
    expect(parsePublicKey(PUBKEY_NON_CANONICAL)).toBeNull();
  });

  const rejected: Array<[string, unknown]> = [
    ["no prefix", PUBKEY.slice("ed25519:".length)],
    ["another algorithm's prefix", "x25519:" + PUBKEY.slice("ed25519:".length)],
    ["an upper-case prefix", "ED25519:" + PUBKEY.slice("ed25519:".length)],
    ["url-safe base64", "ed25519:A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg="],
    ["unpadded base64", PUBKEY.slice(0, -1)],
    ["31 bytes", "ed25519:" + btoa(String.fromCharCode(...new Uint8Array(31).fill(3)))],
    ["33 bytes", "ed25519:" + btoa(String.fromCharCode(...new Uint8Array(33).fill(3)))],
    ["a non-string", 42],
    ["null", null],
  ];
  for (const [name, value] of rejected) {
    it(`refuses ${name}`, () => {
      expect(parsePublicKey(value)).toBeNull();
    });
  }
});

describe("ids", () => {
  it("agent ids are ag_ + 12 lowercase hex", async () => {
    expect(isAgentId(await agentIdFor(PUBKEY))).toBe(true);
    for (const bad of ["ag_FF73A0647BBC", "ag_ff73a0647bb", "ag_ff73a0647bbcd", "rm_ff73a0647bbc", 1]) expect(isAgentId(bad)).toBe(false);
  });

  it("default key ids are k_ + 12 hex, stable per key text", async () => {
    expect(await defaultKeyIdFor(PUBKEY)).toMatch(/^k_[0-9a-f]{12}$/);
    expect(await defaultKeyIdFor(PUBKEY)).toBe(await defaultKeyIdFor(PUBKEY));
    expect(isKeyId(await defaultKeyIdFor(PUBKEY))).toBe(true);
    expect(isKeyId("k_")).toBe(false);
    expect(isKeyId("key_1")).toBe(false);
  });
});

describe("the test agents' own derivation (test/support/workerd/agents.ts, node:crypto)", () => {
  it("gives the protocol's ag_ ids and default key ids, so the tests' agents are what a client makes", async () => {
    for (let i = 0; i < 20; i++) {
      const key = formatPublicKey(publicKeyFromSeed(generateSeed()));
      expect(testAgentIdFor(key)).toBe(await agentIdFor(key));
      expect(testKeyIdFor(key)).toBe(await defaultKeyIdFor(key));
    }
    expect(testAgentIdFor(PUBKEY)).toBe(await agentIdFor(PUBKEY));
  });
});
