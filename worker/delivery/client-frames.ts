// What the inbox does with each frame its local agent sends on the WebSocket: auth (the newest
// connection wins, delivery begins after the agent's cursor; an agent naming "lanes" gets lanes, and the
// messages an older agent set aside back; one naming "live" may be sent live requests), ack, reject, ping,
// answer (to a live request: only from a live socket), and the hub link's
// two: hub_pull (the agent saw mail at the hub: a pulling inbox pulls now) and hub_token (the agent
// holds a newer hub JWT); a frame over 1 MiB closes the socket with 1009. The Durable Object's
// webSocketMessage (inbox.ts) hands every frame here inside its guard; covered by
// test/worker/websocket-auth.test.ts, test/worker/websocket-delivery.test.ts,
// test/worker/websocket-limits.test.ts, test/worker/websocket-lanes.test.ts, test/worker/hub-token.test.ts and
// test/worker/live-requests.test.ts.
import { CLOSE_CODES, parseClientFrame } from "../../protocol/index.ts";
import type { HubLink } from "../hub/hub-link.ts";
import { tokenFrame } from "../hub/hub-token.ts";
import type { InboxConfig } from "../inbox-config.ts";
import { CLOSE_MESSAGE_TOO_BIG, MAX_CLIENT_FRAME_BYTES, frameTooLarge } from "./socket-limits.ts";
import type { LiveRequests } from "../live/live-requests.ts";
import { authenticate, closeIfAuthOverdue } from "./socket-auth.ts";
import { acknowledge, beginDelivery, closeSocket, reject, send, speaksLanes, speaksLive, stateOf } from "./socket-session.ts";
import type { Outgoing } from "./socket-session.ts";

/** What answering a frame needs of its inbox (a narrow view of it: inbox.ts), and its hub link. */
export interface FrameHost extends Outgoing {
  readonly config: InboxConfig | null;
  readonly hub: HubLink;
  /** Live requests wait here for their answer frames (worker/live/). */
  readonly live: LiveRequests;
  requireConfig(): InboxConfig;
  sockets(): WebSocket[];
  ensureAlarm(at: number): Promise<void>;
}

export async function answerClientFrame(host: FrameHost, ws: WebSocket, data: string | ArrayBuffer): Promise<void> {
  // Frames past 32 MiB never get here: the runtime refuses them (socket-limits.ts, answerSocketError).
  if (frameTooLarge(data)) {
    send(ws, { type: "error", code: "frame_too_large", message: `a frame is at most ${MAX_CLIENT_FRAME_BYTES} bytes (the protocol's are a few hundred); this one was larger` });
    return closeSocket(ws, CLOSE_MESSAGE_TOO_BIG, "frame_too_large");
  }
  const frame = typeof data === "string" ? parseClientFrame(data) : null;
  const state = stateOf(ws);
  if (!frame || !state) {
    send(ws, { type: "error", code: "bad_frame", message: "frames are JSON text: auth, ack, reject, ping, hub_pull or hub_token (docs/protocol.md, Frames)" });
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
    // A lanes agent takes back what an older one set aside, before its cursor is applied (which spares them).
    const lanes = speaksLanes(frame.features);
    if (lanes) host.store.restoreSetAside();
    if (after > 0) host.store.acknowledge({ upTo: after });
    // Newest connection wins: a restarting agent's new process replaces its old socket, whose
    // unacknowledged messages are sent again on the new one.
    for (const other of host.sockets()) {
      if (other !== ws && stateOf(other)?.authed) {
        send(other, { type: "error", code: "replaced", message: "a newer connection for this inbox authenticated" });
        closeSocket(other, CLOSE_CODES.replaced, "replaced");
        host.live.socketGone(other);
      }
    }
    beginDelivery(ws, host, after, frame.window, { prefix: host.hub.prefix(), mode: host.hub.settings().mode }, { lanes, live: speaksLive(frame.features) });
    // The agent keeps its credentials file on the inbox's token; a pulling inbox looks at the hub at once.
    const token = await host.hub.agentConnected(Date.now());
    if (token) send(ws, token);
    return;
  }
  if (frame.type === "hub_pull") {
    if (host.hub.settings().mode === "pull") await host.hub.pullNow();
    return;
  }
  if (frame.type === "hub_token") {
    const { taken, held } = await host.hub.offerToken(frame, "agent", Date.now());
    // Ours is newer: the agent should write that one into its credentials file.
    if (!taken && held && held.token !== frame.token) send(ws, tokenFrame(held));
    return;
  }
  if (frame.type === "ack") return acknowledge(ws, host, frame.id);
  // An answer from a socket that never named "live" is a frame it does not speak: as before live existed.
  if (frame.type === "answer") {
    if (state.live === true) return host.live.take(ws, frame);
    send(ws, { type: "error", code: "bad_frame", message: "answer frames are for live requests: name \"live\" in the auth frame's features first" });
    return closeSocket(ws, CLOSE_CODES.badFrame, "bad_frame");
  }
  if (frame.type === "reject") {
    const keepUntil = reject(ws, host, host.requireConfig(), frame, Date.now());
    if (keepUntil !== null) await host.ensureAlarm(keepUntil);
    return;
  }
  send(ws, { type: "error", code: "bad_frame", message: "already authenticated" });
}
