// What the inbox does with each frame its local agent sends on the WebSocket: auth (the newest
// connection wins, delivery begins after the agent's cursor), ack, reject and ping. The Durable
// Object's webSocketMessage (inbox.ts) hands every frame here inside its guard; covered by
// test/worker/websocket-auth.test.ts and test/worker/websocket-delivery.test.ts.
import { CLOSE_CODES, parseClientFrame } from "../../protocol/index.ts";
import { effectivePrefix } from "../hub/hub-link.ts";
import { hubLinkOf } from "../inbox-config.ts";
import type { InboxConfig } from "../inbox-config.ts";
import type { InboxStore } from "../storage/inbox-store.ts";
import { acknowledge, authenticate, beginDelivery, closeIfAuthOverdue, closeSocket, reject, send, stateOf } from "./socket-session.ts";

/** What answering a frame needs of its inbox. */
export interface FrameHost {
  readonly config: InboxConfig | null;
  readonly store: InboxStore;
  /** Pull mode: when the alarm next asks the hub (hub-sync.ts). */
  nextPullAt: number | null;
  sockets(): WebSocket[];
  requireConfig(): InboxConfig;
  ensureAlarm(at: number): Promise<void>;
}

export async function answerClientFrame(host: FrameHost, ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
  const frame = typeof data === "string" ? parseClientFrame(data) : null;
  const state = stateOf(ws);
  if (!frame || !state) {
    send(ws, { type: "error", code: "bad_frame", message: "frames are JSON text: auth, ack, reject or ping (docs/protocol.md, Frames)" });
    return closeSocket(ws, CLOSE_CODES.badFrame, "bad_frame");
  }
  if (frame.type === "ping") {
    send(ws, { type: "pong" });
    return;
  }
  if (!state.authed) {
    // Late is late, even when the frame arrives before the timer ran.
    if (closeIfAuthOverdue(ws, Date.now()) === null) return;
    if (frame.type !== "auth") {
      send(ws, { type: "error", code: "auth_required", message: "answer the challenge with an auth frame first" });
      return closeSocket(ws, CLOSE_CODES.authFailed, "auth_required");
    }
    const config = host.config;
    if (!config || !(await authenticate(ws, state, frame, config))) return;
    // Ids only grow, so a cursor beyond the newest id ever handed out comes from another life of
    // this inbox (its storage was wiped): it acknowledges nothing, and `ready` says so with after 0.
    const requested = frame.after ?? 0;
    const after = requested <= host.store.queueStats().lastSeq ? requested : 0;
    if (after > 0) host.store.acknowledge({ upTo: after });
    // Newest connection wins: a restarting agent's new process replaces its old socket, whose
    // unacknowledged messages are sent again on the new one.
    for (const other of host.sockets()) {
      if (other !== ws && stateOf(other)?.authed) {
        send(other, { type: "error", code: "replaced", message: "a newer connection for this inbox authenticated" });
        closeSocket(other, CLOSE_CODES.replaced, "replaced");
      }
    }
    beginDelivery(ws, host.store, after, frame.window, effectivePrefix(hubLinkOf(config), host.store.loadHubState()));
    // A pulling inbox looks at the hub as soon as its agent is back.
    if (hubLinkOf(config).mode === "pull") {
      host.nextPullAt = Date.now();
      await host.ensureAlarm(host.nextPullAt);
    }
    return;
  }
  if (frame.type === "ack") return acknowledge(ws, host.store, frame.id);
  if (frame.type === "reject") {
    const keepUntil = reject(ws, host.store, host.requireConfig(), frame, Date.now());
    if (keepUntil !== null) await host.ensureAlarm(keepUntil);
    return;
  }
  send(ws, { type: "error", code: "bad_frame", message: "already authenticated" });
}
