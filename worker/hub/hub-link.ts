// The inbox's link to its hub, as one part: it holds the agent's hub token and the refresh in flight
// (hub-token.ts), the pull schedule (hub-pull.ts) and the webhook era's bridge (webhook-era/), and reads
// and writes their rows (meta 'hub_token' and 'hub_state', hub-settings.ts) through the store. The inbox
// (inbox.ts) builds it with what it needs; the hub routes (hub-routes.ts), the client frames
// (delivery/client-frames.ts), the hook route (webhook-era/hub-webhook.ts) and the alarm's jobs
// (housekeeping.ts) call it. Covered by test/worker/hub-token.test.ts, test/worker/hub-pull.test.ts,
// test/worker/hub-bridge.test.ts and test/node/hub-link.e2e.test.ts.
import { hubClient, postHubReceipt } from "../../protocol/index.ts";
import type { HubPrefix, HubTokenFrame } from "../../protocol/index.ts";
import { hubLinkOf } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { Answer, IntakeContext } from "../intake/intake-context.ts";
import type { HookArrival } from "../intake/intake.ts";
import type { Signer } from "../intake/receipts.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import { HubPuller } from "./hub-pull.ts";
import { idleCostPerDay } from "./hub-schedule.ts";
import { effectivePrefix, prefixSource } from "./hub-settings.ts";
import type { HubLinkSettings, HubState } from "./hub-settings.ts";
import { HubTokenKeeper, tokenFrame, tokenView } from "./hub-token.ts";
import type { HeldHubToken, HubTokenSource } from "./hub-token.ts";
import { BRIDGE_TIMINGS, HubBridge } from "./webhook-era/hub-bridge.ts";
import type { BridgeTimings } from "./webhook-era/hub-bridge.ts";

/** What the link is built with: the store its rows live in, and what it needs of its inbox. */
export interface HubLinkParts {
  store: InboxStore;
  /** The inbox's config (throws inbox_not_claimed before a claim). */
  config: () => InboxConfig;
  signer: () => Promise<Signer>;
  intake: (nowMs: number) => IntakeContext;
  ensureAlarm: (atMs: number) => Promise<void>;
  /** Sends a hub_token frame to the connected agent. */
  announceToken: (frame: HubTokenFrame) => void;
  /** RECEIPT_KEY_SECRET: the token is kept sealed with it, as the receipt key is. */
  sealingSecret: string | undefined;
  timings: BridgeTimings;
}

/** How the hub took a receipt, as the outbox acts on it: done, never (a permanent refusal), or again later. */
export type ReceiptOutcome = "accepted" | "gone" | "retry";

const wholeMs = (text: string | undefined): number | null => (text !== undefined && /^[0-9]{1,9}$/.test(text) ? Number(text) : null);

/**
 * The bridge's waits, from the Worker's vars (HUB_BRIDGE_GRACE_MS, HUB_BRIDGE_FIRST_LOOK_MS: whole ms),
 * else the defaults the real hub's timing asks for. The end-to-end tests shorten them.
 */
export function hubTimingsFrom(env: { HUB_BRIDGE_GRACE_MS?: string; HUB_BRIDGE_FIRST_LOOK_MS?: string }): BridgeTimings {
  return {
    graceMs: wholeMs(env.HUB_BRIDGE_GRACE_MS) ?? BRIDGE_TIMINGS.graceMs,
    firstLookMs: wholeMs(env.HUB_BRIDGE_FIRST_LOOK_MS) ?? BRIDGE_TIMINGS.firstLookMs,
  };
}

export class HubLink {
  private readonly parts: HubLinkParts;
  private readonly token: HubTokenKeeper;
  private readonly puller: HubPuller;
  private readonly bridge: HubBridge;

  constructor(parts: HubLinkParts) {
    this.parts = parts;
    const { store, config, signer, intake, ensureAlarm } = parts;
    this.token = new HubTokenKeeper({ store, config, signer, sealingSecret: parts.sealingSecret, announce: parts.announceToken });
    this.puller = new HubPuller({ store, config, token: this.token, intake, ensureAlarm, prefix: () => this.prefix() });
    this.bridge = new HubBridge({ store, config, token: this.token, intake, ensureAlarm, timings: parts.timings });
  }

  settings(): HubLinkSettings {
    return hubLinkOf(this.parts.config());
  }

  /** The prefix messages the relay formats itself are stored under (hub-settings.ts). */
  prefix(): HubPrefix {
    return effectivePrefix(this.settings(), this.parts.store.loadHubState());
  }

  // --- the token -------------------------------------------------------------------------------

  heldToken(): Promise<HeldHubToken | null> {
    return this.token.current();
  }

  offerToken(offer: HubTokenFrame, source: HubTokenSource, nowMs: number): Promise<{ taken: boolean; held: HeldHubToken | null }> {
    return this.token.offer(offer, source, nowMs);
  }

  /** The hub URL changed: a token of another hub means nothing at this one. */
  forgetToken(): Promise<void> {
    return this.token.forget();
  }

  /**
   * The agent authenticated: the token frame to send it (it keeps its credentials file on the inbox's
   * token, and answers with a newer one it has), and a pulling inbox looks at the hub at once.
   */
  async agentConnected(nowMs: number): Promise<HubTokenFrame | null> {
    const { mode } = this.settings();
    if (mode === "off") return null;
    // A token row the relay cannot read is no token to hand down: the next hub call refreshes.
    const held = await this.token.current().catch(() => null);
    if (mode === "pull") await this.puller.pullSoon(nowMs);
    return held ? tokenFrame(held) : null;
  }

  // --- pulling (hub-pull.ts) and the webhook era's bridge (webhook-era/) ---------------------------

  /** Pulls now and schedules the next pull (the owner's POST …/hub/pull, the agent's hub_pull). */
  pullNow(): Promise<void> {
    return this.puller.pullNow({ schedule: true });
  }

  /**
   * The next alarm pulls, whenever it runs (a claim that sets pull mode or a new interval starts pulling
   * at once); the wait it backs off from is kept.
   */
  pullAtNextAlarm(): void {
    this.puller.pullAtNextAlarm();
  }

  pullStatus(): { nextAtMs: number | null; pulling: boolean } {
    return this.puller.status();
  }

  /** What the last pull did and when the alarm pulls next (POST …/hub/pull answers with it). */
  pullReport(): { last_pull: HubState["last_pull"]; next_pull_at: number | null } {
    return { last_pull: this.parts.store.loadHubState().last_pull, next_pull_at: this.puller.status().nextAtMs };
  }

  /** The alarm's pull: when due, in pull mode; returns when it pulls next. */
  pullIfDue(nowMs: number): Promise<number | null> {
    return this.settings().mode === "pull" ? this.puller.pullIfDue(nowMs) : Promise.resolve(null);
  }

  /** The alarm's look at the history for the flat bodies stored, in webhook mode; returns when it looks next. */
  bridgeIfDue(nowMs: number): Promise<number | null> {
    return this.settings().mode === "webhook" ? this.bridge.bridgeIfDue(nowMs) : Promise.resolve(null);
  }

  acceptFlatBody(hook: HookArrival, nowMs: number): Promise<Answer | null> {
    return this.bridge.acceptFlatBody(hook, nowMs);
  }

  learnPrefix(subpath: string): void {
    this.bridge.learnPrefix(subpath);
  }

  // --- receipts to the hub (the alarm's outbox) ----------------------------------------------------

  /** POST {hub}/hub/receipt; the outcome is kept for `hub status`. */
  async postReceipt(hubUrl: string, receiptJson: string, nowMs: number): Promise<ReceiptOutcome> {
    const result = await postHubReceipt(hubClient(hubUrl), receiptJson);
    let msgId: string | null = null;
    try {
      msgId = String((JSON.parse(receiptJson) as { reply_to?: unknown }).reply_to ?? "") || null;
    } catch {
      // A receipt we built ourselves is JSON; nothing to name otherwise.
    }
    this.parts.store.updateHubState((state) => {
      state.last_receipt = { at: nowMs, ok: result.outcome === "accepted", status: result.status, detail: result.detail, msg_id: msgId };
      if (result.outcome === "refused") state.receipts_refused += 1;
    });
    // A permanent refusal (a key id the hub does not know, no such record) cannot get better by
    // retrying: it ends here and shows in `clawrelay hub status` / `status`.
    return result.outcome === "accepted" ? "accepted" : result.outcome === "refused" ? "gone" : "retry";
  }

  /** GET /inbox/{id}/hub: what the link is and last did (never the token itself). */
  async view(): Promise<Record<string, unknown>> {
    const config = this.parts.config();
    const { store } = this.parts;
    const link = hubLinkOf(config);
    const state = store.loadHubState();
    return {
      hub_url: config.hub_url,
      mode: link.mode,
      prefix: effectivePrefix(link, state),
      prefix_source: prefixSource(link, state),
      pull_interval_sec: link.pull_interval_sec,
      receipt_key_id: config.receipt_key.key_id,
      // A token row the relay cannot read shows as none: this is a view.
      token: tokenView(await this.token.current().catch(() => null)),
      token_lost: state.token_lost,
      last_receipt: state.last_receipt,
      receipts_refused: state.receipts_refused,
      receipts_pending: store.countOutbox("hub"),
      last_pull: state.last_pull,
      recent_pulled: state.recent_pulled,
      next_pull_at: link.mode === "pull" ? this.puller.status().nextAtMs : null,
      idle_cost_per_day: link.mode === "pull" ? idleCostPerDay(link.pull_interval_sec) : null,
      last_bridge: state.last_bridge,
      bridge_waiting: state.claims.length,
    };
  }
}
