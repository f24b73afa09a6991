// WebSocket frames between an inbox and its local agent. JSON text frames, one object each.
// The README's "WebSocket protocol" section documents the same thing for other client authors.

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

export type ServerFrame =
  | { type: "challenge"; agent_id: string; nonce: string }
  | { type: "ready"; after: number; backlog: number; window: number }
  | DeliveryFrame
  | { type: "pong" }
  | { type: "error"; code: string; message: string };

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
}

export type ClientFrame =
  | { type: "auth"; key: string; signature: string; after?: number; window?: number }
  | { type: "ack"; id: number }
  | { type: "ping" };

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
      return frame as ClientFrame;
    case "ack":
      return isNonNegativeInteger(frame.id) ? { type: "ack", id: frame.id } : null;
    case "ping":
      return { type: "ping" };
    default:
      return null;
  }
}
