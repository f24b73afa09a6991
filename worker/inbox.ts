// One Durable Object per agent inbox: holds the config, the queue (SQLite), the local agent's WebSocket and
// the alarm, and composes the parts that do the work — the hub link (hub/hub-link.ts: the hub token, pulling
// and the webhook era's bridge), receipts to sibling inboxes (intake/sibling-sender.ts), the webhook sources
// (sources/source-book.ts), live requests (live/), A2A (a2a/), the outbox (outbox/) and the alarm's jobs
// (housekeeping.ts).
// Decisions live in the intake steps (intake/), socket-session.ts and inbox-store.ts; HTTP parsing in
// inbox-routes.ts. Covered by test/worker/.
import { DurableObject } from "cloudflare:workers";
import type { Hono } from "hono";
import { PING_FRAME, PONG_FRAME, RelayError, hubClient, isAgentId, lookupHubKey } from "../protocol/index.ts";
import type { AbandonFrame, HubTokenFrame, KeyRecord, LiveSummary } from "../protocol/index.ts";
import { admissionFrom } from "./access/admission.ts";
import type { Admission } from "./access/admission.ts";
import { isSealed, openSecret, sealSecret } from "./access/secret-box.ts";
import { A2aBook } from "./a2a/a2a-book.ts";
import { answerClientFrame } from "./delivery/client-frames.ts";
import { MessageWaiters } from "./delivery/message-waiters.ts";
import { answerSocketError, endEveryConnection, reapPlan } from "./delivery/socket-limits.ts";
import { abandon, closeSocket, inFlightOf, pump, send, stateOf } from "./delivery/socket-session.ts";
import type { Abandoned } from "./delivery/socket-session.ts";
import type { Env, InboxRpc } from "./env.ts";
import { JobFailures, housekeepingJobs, runHousekeeping } from "./housekeeping.ts";
import type { HousekeepingJob, JobFailure } from "./housekeeping.ts";
import { HubLink, hubTimingsFrom } from "./hub/hub-link.ts";
import { keyMayActFor } from "./inbox-config.ts";
import type { InboxConfig } from "./inbox-config.ts";
import { inboxRouter } from "./inbox-routes.ts";
import type { IntakeContext } from "./intake/intake-context.ts";
import { intakeHooks } from "./intake/intake-hooks.ts";
import type { IntakeHooks } from "./intake/intake-hooks.ts";
import { KeyResolver } from "./intake/key-resolver.ts";
import { RateLimiter } from "./intake/rate-limiter.ts";
import { receiptSigner } from "./intake/receipts.ts";
import type { Signer } from "./intake/receipts.ts";
import { storeSiblingReceipts } from "./intake/sibling-receipts.ts";
import type { SiblingReceipt, SiblingResult } from "./intake/sibling-receipts.ts";
import { SiblingSender } from "./intake/sibling-sender.ts";
import { LiveLog } from "./live/live-log.ts";
import { LiveRequests } from "./live/live-requests.ts";
import { KeptCredentials } from "./sources/kept-credentials.ts";
import { OutboxBook } from "./outbox/outbox-store.ts";
import { SourceBook } from "./sources/source-book.ts";
import { InboxStore } from "./storage/inbox-store.ts";
import type { InFlight } from "./storage/in-flight.ts";

export class Inbox extends DurableObject<Env> implements InboxRpc {
  readonly store: InboxStore;
  config: InboxConfig | null;
  readonly rates = new RateLimiter();
  readonly keys: KeyResolver;
  /** The link to the inbox's hub; its token, pull schedule and bridge state are its own. */
  readonly hub: HubLink;
  /** Webhook sources (sources/): GitHub, Stripe, Slack, Standard Webhooks, token. */
  readonly sources = new SourceBook(this.ctx.storage.sql, {
    agentId: () => this.requireConfig().agent_id,
    workerSecret: () => this.env.RECEIPT_KEY_SECRET,
  });
  /** Where each source's events go now, read as each delivery frame is built (delivery-frame.ts). */
  readonly forwardTargets = (name: string) => this.sources.forwardTarget(name);
  /** Senders' credentials kept for forward targets (sources/kept-credentials.ts); once one is opened the sockets pump again (a poll opens its own). */
  readonly keptCredentials = new KeptCredentials({ agentId: () => this.requireConfig().agent_id, secret: () => this.env.RECEIPT_KEY_SECRET, opened: () => this.sockets().forEach((ws) => pump(ws, this)) });
  /** The last live requests (live/live-log.ts) and those waiting for their answer (live/live-requests.ts). */
  readonly liveLog = new LiveLog((query, ...params) => this.store.countedExec(query, ...params), (entry) => this.store.keepLive(entry));
  readonly live = new LiveRequests(() => this.sockets(), this.liveLog);
  /** What the agent sent, and the receipts filed against it (outbox/). */
  readonly outbox = new OutboxBook(this.ctx.storage.sql);
  /** The A2A settings and the stored Agent Card (a2a/). */
  readonly a2a = new A2aBook(this.ctx.storage.sql);
  private readonly siblings: SiblingSender;
  private readonly jobs: HousekeepingJob[];
  private readonly jobFailures: JobFailures;
  private signerPromise: Promise<Signer> | null = null;
  private alarmAtMs: number | null = null;
  private readonly polls = new MessageWaiters();
  private readonly intakeHooks: IntakeHooks;
  private readonly router: Hono;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    const store = (this.store = new InboxStore(ctx.storage.sql, (endMs) => void this.ensureAlarm(endMs).catch((err) => console.error("Inbox: setting the alarm for a history period failed:", err))));
    this.config = store.loadConfig();
    const ensureAlarm = (atMs: number) => this.ensureAlarm(atMs);
    this.siblings = new SiblingSender({
      store,
      agentId: () => this.config?.agent_id ?? null,
      sibling: (agentId) => this.sibling(agentId),
      acceptHere: (receipts) => this.acceptSiblingReceipts(receipts),
      ensureAlarm,
    });
    this.keys = new KeyResolver({
      relay: (agentId, keyId) => this.relayKey(agentId, keyId),
      hub: (agentId, keyId) => lookupHubKey(hubClient(this.requireConfig().hub_url), agentId, keyId),
    });
    this.intakeHooks = intakeHooks({
      store, rates: this.rates, keys: this.keys, signer: () => this.signer(), ensureAlarm, wakeConsumers: () => this.wakeConsumers(),
      sendToSibling: (agentId, receipt) => this.siblings.send(agentId, receipt), owedAcks: this.siblings.owed, outbox: this.outbox, hubUrl: () => this.requireConfig().hub_url,
    });
    this.hub = new HubLink({
      store,
      config: () => this.requireConfig(),
      signer: () => this.signer(),
      intake: (nowMs) => this.intake(nowMs),
      ensureAlarm,
      announceToken: (frame) => this.announce(frame),
      sealingSecret: env.RECEIPT_KEY_SECRET,
      timings: hubTimingsFrom(env),
    });
    this.jobFailures = new JobFailures(store);
    this.jobs = housekeepingJobs({
      store,
      config: () => this.config,
      sockets: () => this.sockets(),
      inFlight: () => this.inFlight(),
      signer: () => this.signer(),
      sendToSibling: (agentId, receipt) => this.siblings.send(agentId, receipt),
      sibling: (agentId) => this.sibling(agentId),
      owedAcks: this.siblings.owed,
      hub: this.hub,
    });
    this.router = inboxRouter(this);
    // Answered by the runtime without waking a hibernated object (a WebSocket auto-response).
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair(PING_FRAME, PONG_FRAME));
    void ctx.blockConcurrencyWhile(async () => {
      this.alarmAtMs = await ctx.storage.getAlarm();
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

  /** A lanes agent stops posting these (dropped; or retargeted, and sent again with their new target). */
  abandon(which: Abandoned, reason: AbandonFrame["reason"]): void {
    for (const ws of this.sockets()) abandon(ws, this, which, reason);
  }

  acceptSocket(ws: WebSocket): void {
    this.ctx.acceptWebSocket(ws);
  }

  /** Sends a frame to the authenticated agent (a hub token it should write into its credentials file). */
  private announce(frame: HubTokenFrame): void {
    for (const ws of this.sockets()) if (stateOf(ws)?.authed) send(ws, frame);
  }

  sibling(agentId: string): DurableObjectStub<InboxRpc> {
    return this.env.INBOX.getByName(agentId);
  }

  defaultHubUrl(): string | undefined {
    return this.env.DEFAULT_HUB_URL;
  }

  /** What the alarm's jobs failed at, by job (GET …/queue shows it). */
  housekeepingFailures(): Record<string, JobFailure> {
    return this.jobFailures.view();
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
      await this.hub.forgetToken();
    }
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

  // --- consumers ---------------------------------------------------------------------------------

  wakeConsumers(): void {
    for (const ws of this.sockets()) pump(ws, this);
    this.polls.wakeAll();
  }

  /** Resolves when a message is stored or after `ms`, whichever comes first (long-poll). */
  waitForMessage(ms: number): Promise<void> {
    return this.polls.wait(ms);
  }

  /** The queue summary's `live` (delivery/queue-routes.ts). */
  liveSummary(): LiveSummary {
    return this.live.summary();
  }

  async ensureAlarm(atMs: number): Promise<void> {
    if (this.alarmAtMs !== null && this.alarmAtMs <= atMs) return;
    this.alarmAtMs = atMs;
    await this.ctx.storage.setAlarm(atMs);
  }

  override async webSocketMessage(ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
    try {
      await answerClientFrame(this, ws, data);
    } catch (err) {
      console.error("Inbox.webSocketMessage:", err);
    }
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.live.socketGone(ws);
    // Reciprocate so the client sees its own code, never 1006; reserved codes cannot be sent back.
    closeSocket(ws, code === 1005 || code === 1006 || code === 1015 ? 1000 : code, reason);
  }

  override async webSocketError(ws: WebSocket, error: unknown): Promise<void> {
    this.live.socketGone(ws);
    answerSocketError(ws, error);
  }

  override async alarm(): Promise<void> {
    this.alarmAtMs = null;
    let reap: string | null = null;
    try {
      // Each job is guarded on its own (housekeeping.ts); this guards scheduling the next run.
      const next = await runHousekeeping(this.jobs, Date.now(), this.jobFailures);
      if (next !== null) await this.ensureAlarm(next);
      reap = reapPlan(this.sockets(), Date.now()).reap;
    } catch (err) {
      console.error("Inbox.alarm:", err);
      await this.ensureAlarm(Date.now() + 30_000);
    }
    if (reap) await endEveryConnection(this.ctx, reap);
  }
}
