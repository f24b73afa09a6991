// One Durable Object per agent inbox: holds the config, the queue (SQLite), the local agent's
// WebSocket and the alarm that expires messages and retries receipts. Decisions live in intake.ts,
// socket-session.ts and inbox-store.ts; HTTP parsing in inbox-routes.ts.
import { DurableObject } from "cloudflare:workers";
import {
  PING_FRAME,
  PONG_FRAME,
  RelayError,
  isAgentId,
} from "../protocol/index.ts";
import type { Envelope, KeyRecord } from "../protocol/index.ts";
import { admissionFrom } from "./access/admission.ts";
import type { Admission } from "./access/admission.ts";
import type { Env, InboxRpc } from "./env.ts";
import { fetchHubKey } from "./hub/hub-client.ts";
import { keyMayActFor } from "./inbox-config.ts";
import type { InboxConfig } from "./inbox-config.ts";
import { inboxRouter } from "./inbox-routes.ts";
import { InboxStore } from "./storage/inbox-store.ts";
import type { InFlight } from "./storage/stored-message.ts";
import type { IntakeContext } from "./intake/intake.ts";
import { KeyResolver } from "./intake/key-resolver.ts";
import { runHousekeeping } from "./housekeeping.ts";
import { RateLimiter } from "./intake/rate-limiter.ts";
import { receiptSigner } from "./intake/receipts.ts";
import { isSealed, openSecret, sealSecret } from "./access/secret-box.ts";
import { SourceBook } from "./sources/source-book.ts";
import { SiblingCourier, SiblingOutbox, siblingReceipt, storeSiblingReceipts } from "./intake/sibling-receipts.ts";
import type { SiblingReceipt, SiblingResult } from "./intake/sibling-receipts.ts";
import type { Signer } from "./intake/receipts.ts";
import { closeSocket, inFlightOf, pump, send, stateOf } from "./delivery/socket-session.ts";
import { forgetHubToken, tokenFrame } from "./hub/hub-token.ts";
import type { HeldHubToken } from "./hub/hub-token.ts";
import type { PullState } from "./hub/hub-pull.ts";
import { answerClientFrame } from "./delivery/client-frames.ts";
import { answerSocketError, endEveryConnection, reapPlan } from "./delivery/socket-limits.ts";

export class Inbox extends DurableObject<Env> implements InboxRpc {
  readonly store: InboxStore;
  config: InboxConfig | null;
  readonly rates = new RateLimiter();
  readonly keys: KeyResolver;
  private signerPromise: Promise<Signer> | null = null;
  private alarmAt: number | null = null;
  /** Pull mode (hub-pull.ts): in memory; after an eviction the next alarm pulls at once. */
  readonly pull: PullState = { running: null, again: false, nextAt: null, delayMs: null };
  /** The agent's hub JWT (hub-token.ts): undefined until read from storage, where it is kept sealed. */
  hubToken: HeldHubToken | null | undefined = undefined;
  tokenRefresh: Promise<HeldHubToken> | null = null;
  private readonly waiters = new Set<() => void>();
  readonly courier = new SiblingCourier((agentId, batch) => this.sibling(agentId).acceptSiblingReceipts(batch));
  readonly outbox: SiblingOutbox;
  /** Webhook sources (sources/): GitHub, Stripe, Slack, Standard Webhooks, token. */
  readonly sources = new SourceBook(this.ctx.storage.sql, {
    agentId: () => this.requireConfig().agent_id,
    workerSecret: () => this.env.RECEIPT_KEY_SECRET,
  });
  /** Where each source's events go now, read as each delivery frame is built (delivery-frame.ts). */
  readonly forwardTargets = (name: string) => this.sources.forwardTarget(name);
  private readonly intakeHooks: Omit<IntakeContext, "config" | "nowMs">;
  private readonly router = inboxRouter(this);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.store = new InboxStore(ctx.storage.sql);
    this.config = this.store.loadConfig();
    this.outbox = new SiblingOutbox(this);
    this.intakeHooks = this.makeIntakeHooks();
    this.keys = new KeyResolver({
      relay: (agentId, keyId) => this.relayKey(agentId, keyId),
      hub: (agentId, keyId) => fetchHubKey(this.requireConfig().hub_url, agentId, keyId),
    });
    // Answered by the runtime without waking a hibernated object (a WebSocket auto-response).
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_FRAME, PONG_FRAME));
    void ctx.blockConcurrencyWhile(async () => {
      this.alarmAt = await ctx.storage.getAlarm();
    });
  }

  override fetch(request: Request): Promise<Response> {
    return Promise.resolve(this.router.fetch(request));
  }

  /** Sockets of this inbox (the runtime keeps them across hibernation). */
  sockets(): WebSocket[] {
    return this.ctx.getWebSockets();
  }

  /** What the connected agent holds unacknowledged right now (null when none is connected). */
  inFlight(): InFlight | null {
    return inFlightOf(this.sockets());
  }

  acceptSocket(ws: WebSocket): void {
    this.ctx.acceptWebSocket(ws);
  }

  sibling(agentId: string): DurableObjectStub<InboxRpc> {
    return this.env.INBOX.getByName(agentId);
  }

  defaultHubUrl(): string | undefined {
    return this.env.DEFAULT_HUB_URL;
  }

  requireConfig(): InboxConfig {
    if (!this.config) throw new RelayError(404, "inbox_not_claimed", "nobody has claimed this inbox yet; the agent claims it with a signed PUT /inbox/{agent_id}");
    return this.config;
  }

  /** Saves the config, the receipt key sealed when the Worker has RECEIPT_KEY_SECRET (secret-box.ts). */
  async setConfig(config: InboxConfig, hubChanged: boolean): Promise<void> {
    const secret = this.env.RECEIPT_KEY_SECRET;
    const stored =
      secret && !isSealed(config.receipt_key.seed)
        ? { ...config, receipt_key: { ...config.receipt_key, seed: await sealSecret(config.receipt_key.seed, config.agent_id, secret) } }
        : config;
    this.store.saveConfig(stored);
    this.config = stored;
    this.signerPromise = null;
    if (hubChanged) {
      this.keys.clear();
      // A token of another hub means nothing at this one.
      await forgetHubToken(this);
    }
  }

  // --- the hub token, kept sealed like the receipt key (hub-token.ts) -----------------------------

  sealHubToken(plain: string): Promise<string> {
    const secret = this.env.RECEIPT_KEY_SECRET;
    return secret ? sealSecret(plain, `${this.requireConfig().agent_id}/hub-token`, secret) : Promise.resolve(plain);
  }

  openHubToken(stored: string): Promise<string> {
    return openSecret(stored, `${this.requireConfig().agent_id}/hub-token`, this.env.RECEIPT_KEY_SECRET, "hub token", "hub_token_unavailable");
  }

  announceHubToken(held: HeldHubToken): void {
    for (const ws of this.sockets()) if (stateOf(ws)?.authed) send(ws, tokenFrame(held));
  }

  signer(): Promise<Signer> {
    this.signerPromise ??= this.openSigner(this.requireConfig());
    return this.signerPromise;
  }

  private async openSigner(config: InboxConfig): Promise<Signer> {
    const seed = await openSecret(config.receipt_key.seed, config.agent_id, this.env.RECEIPT_KEY_SECRET);
    // A seed stored before the operator set the secret is sealed the first time it is needed.
    if (this.env.RECEIPT_KEY_SECRET && !isSealed(config.receipt_key.seed)) {
      await this.setConfig(config, false);
    }
    return receiptSigner(seed);
  }

  intake(nowMs = Date.now()): IntakeContext {
    return { ...this.intakeHooks, config: this.requireConfig(), nowMs };
  }

  /** What intake calls back, made once per object: a context per request adds only the config and the time. */
  private makeIntakeHooks(): Omit<IntakeContext, "config" | "nowMs"> {
    return {
      store: this.store,
      rates: this.rates,
      resolveKey: (agentId, keyId) => this.keys.resolve(agentId, keyId, Date.now()),
      signer: () => this.signer(),
      stored: async (_seq, expiresAt) => {
        await this.ensureAlarm(expiresAt);
        this.wakeConsumers();
      },
      sendToSibling: (agentId, receipt) => this.sendToSibling(agentId, receipt),
      outbox: this.outbox,
      sendToHub: async (receipt, expiresAt, afterMs = 0) => {
        const at = Date.now() + afterMs;
        this.store.enqueueOutbox(`hub:${this.requireConfig().hub_url}`, JSON.stringify(receipt), at, expiresAt);
        await this.ensureAlarm(at);
      },
    };
  }

  // --- RPC between inboxes of this relay (documented on InboxRpc, env.ts) -------------------------

  async lookupKey(keyId: string): Promise<KeyRecord | null> {
    const config = this.config;
    if (!config) return null;
    if (config.receipt_key.key_id === keyId) {
      return { key_id: keyId, agent_id: config.agent_id, pubkey: config.receipt_key.pubkey, state: "active" };
    }
    const key = config.keys.find((k) => k.key_id === keyId);
    return key ? { key_id: key.key_id, agent_id: config.agent_id, pubkey: key.pubkey, state: key.state } : null;
  }

  async authorises(publicKey: string): Promise<{ claimed: boolean; allowed: boolean; admittedByToken: boolean }> {
    return {
      claimed: this.config !== null,
      allowed: await keyMayActFor(this.config, this.config?.agent_id ?? "", publicKey),
      admittedByToken: this.config?.admitted_by_token === true,
    };
  }

  /** The operator's admission rule for claims (admission.ts). */
  admission(): Admission | RelayError {
    return admissionFrom(this.env);
  }

  async acceptSiblingReceipts(receipts: SiblingReceipt[]): Promise<SiblingResult[]> {
    if (!this.config) return receipts.map(() => "no_inbox");
    return storeSiblingReceipts(this.intake(), receipts);
  }

  private async relayKey(agentId: string, keyId: string): Promise<KeyRecord | null> {
    if (!isAgentId(agentId)) return null;
    if (agentId === this.config?.agent_id) return this.lookupKey(keyId);
    return this.sibling(agentId).lookupKey(keyId);
  }

  /** Stores `receipt` in agentId's inbox on this relay now; a full or failing one is retried from the alarm. */
  async sendToSibling(agentId: string, receipt: Envelope): Promise<void> {
    const item = await siblingReceipt(receipt);
    let result: SiblingResult | "error" = "error";
    if (agentId !== this.config?.agent_id) result = (await this.courier.send(agentId, [item]))[0] ?? "error";
    else {
      try {
        result = (await this.acceptSiblingReceipts([item]))[0]!;
      } catch (err) {
        console.error(`Inbox.sendToSibling: ${agentId}:`, err);
      }
    }
    if (result === "full" || result === "error") await this.retryLater(agentId, item);
  }

  /** A receipt its sibling could not take now: the outbox table, retried from the alarm until its TTL. */
  async retryLater(agentId: string, receipt: SiblingReceipt): Promise<void> {
    const now = Date.now();
    this.store.enqueueOutbox(`relay:${agentId}`, receipt.json, now + 1000, now + receipt.ttl_sec * 1000);
    await this.ensureAlarm(now + 1000);
  }

  // --- consumers ---------------------------------------------------------------------------------

  wakeConsumers(): void {
    for (const ws of this.sockets()) pump(ws, this);
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves when a message is stored or after `ms`, whichever comes first (long-poll). */
  waitForMessage(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.waiters.add(done);
    });
  }

  async ensureAlarm(at: number): Promise<void> {
    if (this.alarmAt !== null && this.alarmAt <= at) return;
    this.alarmAt = at;
    await this.ctx.storage.setAlarm(at);
  }

  override async webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    try {
      await answerClientFrame(this, ws, data);
    } catch (err) {
      console.error("Inbox.webSocketMessage:", err);
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    // Reciprocate so the client sees its own code, never 1006; reserved codes cannot be sent back.
    closeSocket(ws, code === 1005 || code === 1006 || code === 1015 ? 1000 : code, reason);
  }

  override async webSocketError(ws: WebSocket, error: unknown): Promise<void> {
    answerSocketError(ws, error);
  }

  override async alarm(): Promise<void> {
    this.alarmAt = null;
    let reap: string | null = null;
    try {
      // First what is owed to sibling inboxes (after an eviction, what the previous life owed).
      await this.outbox.flush();
      const next = await runHousekeeping(this, Date.now());
      if (next !== null) await this.ensureAlarm(next);
      reap = reapPlan(this.sockets(), Date.now()).reap;
    } catch (err) {
      console.error("Inbox.alarm:", err);
      await this.ensureAlarm(Date.now() + 30_000);
    }
    if (reap) await endEveryConnection(this.ctx, reap);
  }
}
