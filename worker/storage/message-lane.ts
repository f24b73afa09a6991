// A stored message's lane (protocol/lanes.ts), decided from what the row holds: a webhook source's events
// are the source's lane whatever their target; every other message is the gateway conversation the agent's
// conversationOf (local-agent/delivery/conversation.ts) gives the frame built from the row — an envelope
// parsed from its body as the agent parses it, or a hook body's own `sessionKey` (read under the same size
// and content-type limits), else its sub-path. Computed at intake (inbox-store.ts stores it with the row) and
// for rows stored before schema 7 when first needed. Pure; covered by test/worker/websocket-lanes.test.ts.
import { SESSION_KEY_MAX_CHARS, decodeUtf8, hookBodySessionKey, laneOf, parseEnvelope } from "../../protocol/index.ts";
import type { Envelope } from "../../protocol/index.ts";
import { sourceNameOf } from "../sources/source-config.ts";
import type { StoredMessage } from "./stored-message.ts";

/** What deciding a lane needs of a row (or of a message about to be one). */
export type LaneInputs = Pick<StoredMessage, "kind" | "subpath" | "content_type" | "sender"> & { body: Uint8Array };

/** The envelope the agent reads from the frame's body (the UTF-8 text; a base64 body is never one), or null. */
function envelopeIn(text: string | null): Envelope | null {
  if (text === null) return null;
  try {
    return parseEnvelope(JSON.parse(text));
  } catch {
    // Not an envelope after all: the agent orders it as a hook body, and so does its lane.
    return null;
  }
}

/** A hook body's `sessionKey`, as the agent reads it from the frame built from this row (its body's length in the frame: the text, or base64). */
function hookSessionKey(m: LaneInputs, text: string | null): string | null {
  const frameBodyChars = text !== null ? text.length : 4 * Math.ceil(m.body.byteLength / 3);
  if (frameBodyChars > SESSION_KEY_MAX_CHARS * 2) return null;
  return hookBodySessionKey(m.content_type, text ?? new TextDecoder().decode(m.body));
}

/** The lane of an envelope stored as itself, from the envelope intake parsed (what messageLane reads back from its body). */
export function envelopeLane(envelope: Envelope): string {
  const source = sourceNameOf(envelope.from);
  return source !== null ? laneOf({ source }) : laneOf({ envelope });
}

export function messageLane(m: LaneInputs): string {
  const source = sourceNameOf(m.sender);
  if (source !== null) return laneOf({ source });
  const text = decodeUtf8(m.body);
  const envelope = m.kind === "envelope" ? envelopeIn(text) : null;
  if (envelope) return laneOf({ envelope });
  return laneOf({ sessionKey: hookSessionKey(m, text), subpath: m.subpath });
}
