// What an inbox stores about itself, and how a claim request changes it. Pure: no storage here.
import {
  DEFAULT_HUB_URL,
  INBOX_CEILINGS,
  INBOX_DEFAULTS,
  RelayError,
  agentIdFor,
  formatPublicKey,
  fromBase64,
  isAgentId,
  isKeyId,
  parsePublicKey,
  publicKeyOfSeed,
} from "../protocol/index.ts";
import type { KeyState } from "../protocol/index.ts";
import { checkClaimFields, parseHubUrl } from "./access/claim-body.ts";
import { HUB_LINK_DEFAULTS, parseHubLink } from "./hub/hub-settings.ts";
import type { HubLinkSettings } from "./hub/hub-settings.ts";

export interface StoredKey {
  key_id: string;
  pubkey: string;
  state: KeyState;
}

export interface InboxPolicy {
  mode: "open" | "allowlist";
  allow: string[];
  block: string[];
}

export interface InboxLimits {
  max_body_bytes: number;
  max_queue_messages: number;
  max_queue_bytes: number;
  hook_ttl_sec: number;
  /** How long the dead-letter shelf keeps a message (inboxes claimed before it existed lack it). */
  dead_ttl_sec?: number;
  /** How long a delivered message is kept in history; 0 deletes it at acknowledgement (inboxes claimed before it existed lack it: the default). */
  retention_sec?: number;
}

export interface InboxConfig {
  agent_id: string;
  keys: StoredKey[];
  /** Signs receipts as the agent; the agent's main private key never leaves its machine. */
  /** `seed`: base64 of the 32-byte seed, or sealed ("enc:v1:…") when the Worker has RECEIPT_KEY_SECRET. */
  receipt_key: { key_id: string; seed: string; pubkey: string };
  hub_url: string;
  /** How the hub delivers and which prefix it uses (inboxes claimed before it existed lack it). */
  hub?: HubLinkSettings;
  policy: InboxPolicy;
  rate_per_minute: number;
  limits: InboxLimits;
  webhook_token_hash: string;
  /** A claim carried the operator's claim token (token admission): this inbox may publish a card. */
  admitted_by_token?: boolean;
  claimed_at: number;
  updated_at: number;
}

const bad = (message: string) => new RelayError(400, "invalid_claim", message);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function integerIn(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== "number" || !Number.isInteger(value) || value < min || value > max) {
    throw bad(`${field} must be an integer from ${min} to ${max}`);
  }
  return value;
}

function agentList(value: unknown, field: string): string[] {
  if (!Array.isArray(value) || value.length > 10_000 || !value.every(isAgentId)) {
    throw bad(`${field} must be an array of agent ids (ag_ + 12 hex)`);
  }
  return [...new Set(value)];
}

function parseKeys(value: unknown): StoredKey[] {
  if (!Array.isArray(value) || value.length === 0 || value.length > 16) throw bad("keys must be an array of 1 to 16 keys");
  const keys = value.map((entry, i): StoredKey => {
    if (!isRecord(entry) || !isKeyId(entry.key_id) || !parsePublicKey(entry.pubkey)) {
      throw bad(`keys[${i}] must be {"key_id":"k_…","pubkey":"ed25519:<base64>"} with a valid Ed25519 key`);
    }
    const state = entry.state ?? "active";
    if (state !== "active" && state !== "revoked") throw bad(`keys[${i}].state must be "active" or "revoked"`);
    return { key_id: entry.key_id, pubkey: entry.pubkey as string, state };
  });
  if (new Set(keys.map((k) => k.key_id)).size !== keys.length) throw bad("keys must not repeat a key_id");
  return keys;
}

async function parseReceiptKey(value: unknown): Promise<InboxConfig["receipt_key"]> {
  const seed = isRecord(value) && typeof value.private_key === "string" ? fromBase64(value.private_key) : null;
  if (!isRecord(value) || !isKeyId(value.key_id) || !seed || seed.length !== 32) {
    throw bad('receipt_key must be {"key_id":"k_…","private_key":"<base64 of a 32-byte Ed25519 seed>"}');
  }
  return { key_id: value.key_id, seed: value.private_key as string, pubkey: formatPublicKey(await publicKeyOfSeed(seed)) };
}

export interface ClaimInput {
  agentId: string;
  /** The key that signed the claim, already verified. */
  signerKey: string;
  body: unknown;
  existing: InboxConfig | null;
  webhookTokenHash: string | null;
  nowMs: number;
  defaultHubUrl?: string;
  /** This claim carried the operator's valid claim token. */
  admittedByToken?: boolean;
}

/** Applies a claim body to the inbox's config; throws invalid_claim naming the field to fix. */
export async function applyClaim(input: ClaimInput): Promise<InboxConfig> {
  const { body, existing, agentId, signerKey } = input;
  if (!isRecord(body)) throw bad("the claim body must be a JSON object");
  checkClaimFields(body);
  const signerIsRoot = (await agentIdFor(signerKey)) === agentId;

  let keys = existing?.keys;
  if (body.keys !== undefined) {
    if (!signerIsRoot) throw new RelayError(403, "root_key_required", `only the key whose id derives to ${agentId} may change the inbox's key list`);
    keys = parseKeys(body.keys);
  }
  if (!keys) throw bad(`keys is required on the first claim: list the agent's keys, including ${signerKey}`);

  const receipt_key = body.receipt_key !== undefined ? await parseReceiptKey(body.receipt_key) : existing?.receipt_key;
  if (!receipt_key) throw bad("receipt_key is required on the first claim");
  if (keys.some((k) => k.key_id === receipt_key.key_id && k.pubkey !== receipt_key.pubkey)) {
    throw bad(`receipt_key.key_id ${receipt_key.key_id} is already used by another key in keys`);
  }

  const policyIn = isRecord(body.policy) ? body.policy : body.policy === undefined ? {} : null;
  if (!policyIn) throw bad("policy must be an object");
  const previous = existing?.policy ?? { mode: "open", allow: [], block: [] };
  const mode = policyIn.mode ?? previous.mode;
  if (mode !== "open" && mode !== "allowlist") throw bad('policy.mode must be "open" or "allowlist"');
  const policy: InboxPolicy = {
    mode,
    allow: policyIn.allow === undefined ? previous.allow : agentList(policyIn.allow, "policy.allow"),
    block: policyIn.block === undefined ? previous.block : agentList(policyIn.block, "policy.block"),
  };

  const limitsIn = isRecord(body.limits) ? body.limits : body.limits === undefined ? {} : null;
  if (!limitsIn) throw bad("limits must be an object");
  // Defaults first, so a limit added after an inbox was claimed (dead_ttl_sec) gets its default.
  const prev: Required<InboxLimits> = {
    max_body_bytes: INBOX_DEFAULTS.maxBodyBytes,
    max_queue_messages: INBOX_DEFAULTS.maxQueueMessages,
    max_queue_bytes: INBOX_DEFAULTS.maxQueueBytes,
    hook_ttl_sec: INBOX_DEFAULTS.hookTtlSec,
    dead_ttl_sec: INBOX_DEFAULTS.deadTtlSec,
    retention_sec: INBOX_DEFAULTS.retentionSec,
    ...existing?.limits,
  };
  const limit = (name: keyof InboxLimits, ceiling: number) =>
    limitsIn[name] === undefined ? prev[name] : integerIn(limitsIn[name], `limits.${name}`, 1, ceiling);
  const limits: InboxLimits = {
    max_body_bytes: limit("max_body_bytes", INBOX_CEILINGS.maxBodyBytes),
    max_queue_messages: limit("max_queue_messages", INBOX_CEILINGS.maxQueueMessages),
    max_queue_bytes: limit("max_queue_bytes", INBOX_CEILINGS.maxQueueBytes),
    hook_ttl_sec: limit("hook_ttl_sec", INBOX_CEILINGS.hookTtlSec),
    dead_ttl_sec: limit("dead_ttl_sec", INBOX_CEILINGS.deadTtlSec),
    // 0 is allowed here only: it keeps nothing after delivery, as before history existed.
    retention_sec: limitsIn.retention_sec === undefined ? prev.retention_sec : integerIn(limitsIn.retention_sec, "limits.retention_sec", 0, INBOX_CEILINGS.retentionSec),
  };

  const webhook_token_hash = input.webhookTokenHash ?? existing?.webhook_token_hash;
  if (!webhook_token_hash) throw new Error("a first claim must mint a webhook token");

  return {
    agent_id: agentId,
    keys,
    receipt_key,
    hub_url:
      body.hub_url !== undefined ? parseHubUrl(body.hub_url) : (existing?.hub_url ?? input.defaultHubUrl ?? DEFAULT_HUB_URL),
    ...(body.hub !== undefined || existing?.hub ? { hub: body.hub === undefined ? existing!.hub! : parseHubLink(body.hub, hubLinkOf(existing)) } : {}),
    policy,
    rate_per_minute:
      body.rate_per_minute === undefined
        ? (existing?.rate_per_minute ?? INBOX_DEFAULTS.ratePerMinute)
        : integerIn(body.rate_per_minute, "rate_per_minute", 1, INBOX_CEILINGS.ratePerMinute),
    limits,
    webhook_token_hash,
    ...(existing?.admitted_by_token || input.admittedByToken ? { admitted_by_token: true } : {}),
    claimed_at: existing?.claimed_at ?? input.nowMs,
    updated_at: input.nowMs,
  };
}

export function hubLinkOf(config: InboxConfig | null): HubLinkSettings {
  return config?.hub ?? HUB_LINK_DEFAULTS;
}

export function deadTtlSec(config: InboxConfig): number {
  return config.limits.dead_ttl_sec ?? INBOX_DEFAULTS.deadTtlSec;
}

export function retentionSec(config: InboxConfig | null): number {
  return config?.limits.retention_sec ?? INBOX_DEFAULTS.retentionSec;
}

/** The config as the owner may see it: no secrets (token hash, receipt seed). */
export function publicView(config: InboxConfig) {
  return {
    agent_id: config.agent_id,
    keys: config.keys,
    receipt_key: { key_id: config.receipt_key.key_id, pubkey: config.receipt_key.pubkey },
    hub_url: config.hub_url,
    hub: hubLinkOf(config),
    policy: config.policy,
    rate_per_minute: config.rate_per_minute,
    limits: { ...config.limits, dead_ttl_sec: deadTtlSec(config), retention_sec: retentionSec(config) },
    claimed_at: config.claimed_at,
    updated_at: config.updated_at,
  };
}

/** True when `publicKeyText` may act for this inbox: the root key, or an active key in its list. */
export async function keyMayActFor(config: InboxConfig | null, agentId: string, publicKeyText: string): Promise<boolean> {
  if ((await agentIdFor(publicKeyText)) === agentId) return true;
  return !!config?.keys.some((k) => k.pubkey === publicKeyText && k.state === "active");
}

/** Policy decision for a sender; null when allowed. Block-list wins over allow-list. */
export function policyRefusal(policy: InboxPolicy, sender: string): RelayError | null {
  if (policy.block.includes(sender)) return new RelayError(403, "sender_blocked", `${sender} is on this inbox's block-list`);
  if (policy.mode === "allowlist" && !policy.allow.includes(sender)) {
    return new RelayError(403, "sender_not_allowed", `this inbox accepts only senders on its allow-list, and ${sender} is not on it`);
  }
  return null;
}
