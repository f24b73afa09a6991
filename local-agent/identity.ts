// The agent's signing identity in memory: seed in, ag_ id, key text and a sign function out.
import {
  agentIdFor,
  defaultKeyIdFor,
  formatPublicKey,
  fromBase64,
  generateSeed,
  publicKeyFromSeed,
  signWithSeed,
  toBase64,
} from "../protocol/index.ts";
import { AgentError } from "./errors.ts";

export interface Identity {
  agentId: string;
  keyId: string;
  publicKey: string;
  /** base64 of the 32-byte seed, as Agentline credentials store it. */
  privateKey: string;
  sign(message: Uint8Array): Uint8Array;
}

/** Async: the ag_ id and the default key id are SHA-256 hashes, and hashing is WebCrypto's. */
export async function identityFromPrivateKey(privateKey: string, keyId?: string): Promise<Identity> {
  const seed = fromBase64(privateKey);
  if (!seed || seed.length !== 32) throw new AgentError("invalid_key", "a private key must be base64 of a 32-byte Ed25519 seed");
  const publicKey = formatPublicKey(publicKeyFromSeed(seed));
  return {
    agentId: await agentIdFor(publicKey),
    keyId: keyId ?? (await defaultKeyIdFor(publicKey)),
    publicKey,
    privateKey,
    sign: (message) => signWithSeed(seed, message),
  };
}

export function newIdentity(): Promise<Identity> {
  return identityFromPrivateKey(toBase64(generateSeed()));
}

/** The identity the settings file holds (its key and key id). */
export function settingsIdentity(settings: { key: { private_key: string; key_id: string } }): Promise<Identity> {
  return identityFromPrivateKey(settings.key.private_key, settings.key.key_id);
}
