// WebSocket frames between an inbox and its local agent. JSON text frames, one object each.
// docs/protocol.md ("Receiving over a WebSocket") documents the same thing for other client authors.
import type { ForwardFrame } from "./forward.ts";
import { parseAnswerFrame } from "./live.ts";
import type { LiveAnswerFrame, LiveRequestFrame } from "./live.ts";
import { cutText } from "./text-cut.ts";

/** Sent by the client; the server answers with PONG_FRAME without waking the Durable Object. */
export const PING_FRAME = '{"type":"ping"}';
export const PONG_FRAME = '{"type":"pong"}';

export const CLOSE_CODES = {
  /** No valid auth frame within AUTH_DEADLINE_MS of the challenge. */
  authTimeout: 4001,
  /** The auth frame was malformed, signed by a key the inbox does not hold, or the inbox is unclaimed. */
  authFailed: 4003,
  /** A frame the server could not parse or did not expect. */
  badFrame: 4400,
  /** A newer connection for the same inbox authenticated; this one is retired. */
  replaced: 4409,
} as const;

export const AUTH_DEADLINE_MS = 5000;
export const DEFAULT_WINDOW = 16;
export const MAX_WINDOW = 256;
/** A reject frame's reason is cut to this many characters (it is shown to a person, not parsed). */
export const REJECT_REASON_MAX = 1000;

export type ServerFrame =
  /**
   * `epoch` names this life of the inbox (it changes only if the inbox is created anew, e.g. a wiped
   * relay): a client's cursor from another epoch refers to other messages and must not be sent.
   */
  | { type: "challenge"; agent_id: string; nonce: string; epoch: string }
  /**
   * `backlog`: messages waiting to be delivered (queued, including those about to be sent here);
   * `dead`: messages on the dead-letter shelf; `last_id`: the newest id the inbox ever handed out.
   * A client whose cursor is above `last_id` is talking to an inbox whose state was wiped.
   * `hub_prefix`: the sub-path prefix the agent's hub uses ("agentgram", "botcord"): envelopes the relay
   * delivers itself are posted under `<prefix>_inbox/agent|wake`, so one pair of mappings serves all.
   */
  | ReadyFrame
  | DeliveryFrame
  /**
   * The agent's hub JWT as the inbox holds it (sent after `ready` and whenever the inbox gets a newer
   * one): the agent keeps its credentials file on the same token, so no hub client logs another out.
   */
  | HubTokenFrame
  /** Message `id` is on the dead-letter shelf, as a reject frame asked: the client may move its cursor past it. */
  | { type: "rejected"; id: number }
  | { type: "pong" }
  /**
   * Lanes only: message `id`, sent on this connection, is no longer the agent's — the owner dropped it
   * ("dropped"), or its source's target changed and it comes again with the new one ("retargeted"). The
   * agent stops posting it and sends neither ack nor reject for it.
   */
  | AbandonFrame
  /**
   * Lanes only: sent when the agent holds nothing and nothing is to be sent, and the floor moved on since
   * it was last told: no id up to `floor` is queued (see DeliveryFrame.floor).
   */
  | { type: "floor"; floor: number }
  /** Sent before a close, or alone (with `id`) when an ack or reject named a message not sent here. */
  | { type: "error"; code: string; message: string; id?: number }
  /** Live only (protocol/live.ts): a request whose sender waits for the answer. */
  | LiveRequestFrame;

export interface ReadyFrame {
  type: "ready";
  after: number;
  backlog: number;
  window: number;
  dead: number;
  last_id: number;
  hub_prefix?: string;
  hub_mode?: HubLinkMode;
  /** The features of the agent's auth frame this relay speaks too (protocol/lanes.ts); absent from an older relay. */
  features?: string[];
}

export interface AbandonFrame {
  type: "abandon";
  id: number;
  reason: "dropped" | "retargeted";
}

export interface DeliveryFrame {
  type: "message";
  id: number;
  /** "hook": a webhook body to post to the gateway at `subpath`; "envelope": a verified a2a envelope. */
  kind: "hook" | "envelope";
  subpath: string | null;
  content_type: string;
  /** The stored bytes: UTF-8 text as is when `encoding` is "utf8", else base64. */
  body: string;
  encoding: "utf8" | "base64";
  received_at: number;
  expires_at: number;
  /** A webhook source's headers of interest (sources.ts), posted to the gateway with the body. */
  headers?: Record<string, string>;
  /**
   * Set when the event's source forwards to a local app (forward.ts): the agent posts the body there,
   * with this method, URL tail and the sender's own headers, instead of to the gateway.
   */
  forward?: ForwardFrame;
  /** Lanes only: the message's lane (protocol/lanes.ts); the agent keeps order within it. */
  lane?: string;
  /**
   * Lanes only: when this frame was sent, no message with an id up to `floor` was queued at the relay, so
   * none will be sent again (but a `restored` one): the agent's resume cursor may pass them.
   */
  floor?: number;
  /**
   * Lanes only: an older agent set this message aside (to the dead shelf, reason "set aside: …") and the
   * relay put it back in its lane at its old place: deliver it even though its id is below the cursor.
   */
  restored?: true;
  /**
   * Live only: this event was first sent to the agent as live request `live_rid` and held when its answer
   * did not come in time. An agent that still has (or had) that request posts nothing again: it settles
   * this message by what the target answered to the live request.
   */
  live_rid?: string;
}

/** How the inbox is linked to its hub: the hub pushes webhooks, the inbox pulls, or no link. */
export type HubLinkMode = "webhook" | "pull" | "off";

/** A hub JWT and when it expires (unix seconds); the newer of two is the one that expires later. */
export interface HubTokenFrame {
  type: "hub_token";
  token: string;
  expires_at: number;
}

/** A hub JWT is a few hundred characters; anything near this is not one. */
export const HUB_TOKEN_MAX_LENGTH = 4096;

export type ClientFrame =
  /** `features`: what this agent speaks beyond the first protocol (protocol/lanes.ts); an older relay ignores it. */
  | { type: "auth"; key: string; signature: string; after?: number; window?: number; features?: string[] }
  /** The hub has new mail for this agent (its /hub/ws said so): a pulling inbox pulls now. */
  | { type: "hub_pull" }
  /** A hub JWT the agent holds (its credentials file, a registration): taken when newer than the inbox's. */
  | HubTokenFrame
  /** The gateway accepted message `id` (or the agent consumed it): the relay deletes it. */
  | { type: "ack"; id: number }
  /**
   * The gateway refused message `id` for its content (400, 413, an unmapped sub-path…): the relay
   * moves it to the dead-letter shelf with this reason, and its window slot is free again.
   */
  | RejectFrame
  /** Live only (protocol/live.ts): the answer to a `request` frame, or a part of it. */
  | LiveAnswerFrame
  | { type: "ping" };

export interface RejectFrame {
  type: "reject";
  id: number;
  /** What a person should do about it, e.g. which hooks.mappings entry to add. */
  reason: string;
  /** The gateway's last HTTP status (0 when it could not be reached). */
  status?: number;
  /** How many times the agent posted it. */
  attempts?: number;
}

function isNonNegativeInteger(value: unknown): value is number {
  return typeof value === "number" && Number.isSafeInteger(value) && value >= 0;
}

/** Parses a client frame; null when it is not one of the documented shapes. */
export function parseClientFrame(text: string): ClientFrame | null {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null) return null;
  const frame = value as Record<string, unknown>;
  switch (frame.type) {
    case "auth":
      if (typeof frame.key !== "string" || typeof frame.signature !== "string") return null;
      if (frame.after !== undefined && !isNonNegativeInteger(frame.after)) return null;
      if (frame.window !== undefined && !isNonNegativeInteger(frame.window)) return null;
      if (frame.features !== undefined && !(Array.isArray(frame.features) && frame.features.length <= 32 && frame.features.every((f) => typeof f === "string" && f.length <= 64))) return null;
      return frame as ClientFrame;
    case "ack":
      return isNonNegativeInteger(frame.id) ? { type: "ack", id: frame.id } : null;
    case "reject": {
      if (!isNonNegativeInteger(frame.id) || typeof frame.reason !== "string" || frame.reason.trim() === "") return null;
      if (frame.status !== undefined && !(isNonNegativeInteger(frame.status) && frame.status < 1000)) return null;
      if (frame.attempts !== undefined && !isNonNegativeInteger(frame.attempts)) return null;
      const reject: RejectFrame = { type: "reject", id: frame.id, reason: cutText(frame.reason, REJECT_REASON_MAX) };
      if (frame.status !== undefined) reject.status = frame.status;
      if (frame.attempts !== undefined) reject.attempts = frame.attempts;
      return reject;
    }
    case "ping":
      return { type: "ping" };
    case "hub_pull":
      return { type: "hub_pull" };
    case "hub_token":
      return parseHubToken(frame);
    case "answer":
      return parseAnswerFrame(frame);
    default:
      return null;
  }
}

/** A hub_token frame's fields, or null: a non-empty printable token and a positive expiry. */
export function parseHubToken(value: Record<string, unknown>): HubTokenFrame | null {
  const { token, expires_at: expiresAt } = value;
  if (typeof token !== "string" || token.length === 0 || token.length > HUB_TOKEN_MAX_LENGTH || !/^[\x21-\x7e]+$/.test(token)) return null;
  if (!isNonNegativeInteger(expiresAt) || expiresAt === 0) return null;
  return { type: "hub_token", token, expires_at: expiresAt };
}
