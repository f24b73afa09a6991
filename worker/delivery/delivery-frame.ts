// Turns a stored message into the frame the local agent receives (WebSocket and polling alike).
import { decodeUtf8, toBase64 } from "../../protocol/index.ts";
import type { DeliveryFrame } from "../../protocol/index.ts";
import type { StoredMessage } from "../storage/stored-message.ts";

export function deliveryFrame(message: StoredMessage): DeliveryFrame {
  const bytes = new Uint8Array(message.body);
  const text = decodeUtf8(bytes);
  return {
    type: "message",
    id: message.seq,
    kind: message.kind,
    subpath: message.subpath,
    content_type: message.content_type,
    body: text ?? toBase64(bytes),
    encoding: text === null ? "base64" : "utf8",
    received_at: message.received_at,
    expires_at: message.expires_at,
    ...(message.headers ? { headers: JSON.parse(message.headers) as Record<string, string> } : {}),
  };
}
