// The relay client's terms (relay-client.ts): its states, options, what it needs of the delivery journal,
// what a state change tells, its socket's timings and the URL it connects to. Types and two constants;
// imported by relay-client.ts (which re-exports them for its users) and relay-link.ts. Covered by
// test/node/relay-client.test.ts.
import type { ServerFrame } from "../../protocol/index.ts";
import { DEFAULTS } from "../backoff.ts";
import type { Identity } from "../identity.ts";
import type { Logger } from "../logger.ts";
import type { SocketTiming } from "../reconnecting-socket.ts";

export type ConnectionState = "connecting" | "connected" | "disconnected" | "replaced" | "closed";

/** The frames the client answers itself; every other type is dispatched to on()'s handlers. */
type OwnFrameType = "challenge" | "ready" | "rejected" | "error" | "pong";
export type DispatchedType = Exclude<ServerFrame["type"], OwnFrameType>;
export type FrameOf<T extends ServerFrame["type"]> = Extract<ServerFrame, { type: T }>;

export const RELAY_SOCKET_TIMING: SocketTiming = {
  // The handshake and challenge/auth/ready; the relay itself closes an unauthenticated socket after 5 s.
  authDeadlineMs: DEFAULTS.connectTimeoutMs,
  pingEveryMs: DEFAULTS.heartbeatIntervalMs,
  silenceMs: DEFAULTS.heartbeatDeadlineMs,
  backoff: DEFAULTS,
};

export interface RelayClientOptions {
  relayUrl: string;
  identity: Identity;
  window?: number;
  logger: Logger;
  /** Where finished ids and the cursor persist (none: in memory only, as in tests of the socket). */
  journal?: FinishedLog;
  /** DEFAULTS unless given (tests shorten them, or run them on fake timers). */
  timing?: Partial<SocketTiming>;
}

/** What the client needs of the delivery journal. */
export interface FinishedLog {
  readonly cursor: number;
  /** Binds to the inbox's epoch; true when it differed and everything was forgotten. */
  adopt(epoch: string): boolean;
  has(id: number): boolean;
  /** Finished by a record of its own, not merely under the cursor (a restored message's check). */
  recorded(id: number): boolean;
  finish(id: number, cursor: number): void;
  reset(cursor: number): void;
}

export interface RejectInfo {
  reason: string;
  status: number;
  attempts: number;
}

export interface StateDetail {
  backlog?: number;
  error?: string;
  hubPrefix?: string;
  /** From `ready`: webhook, pull or off (absent from an older relay). */
  hubMode?: string;
  /** From `ready`: the unacknowledged messages the relay sends at most (what it granted of the window asked). */
  window?: number;
  /** From `ready`: the relay sends live requests on this socket (it named the feature back). */
  live?: boolean;
}

export type StateListener = (state: ConnectionState, detail: StateDetail) => void;

export function connectUrl(relayUrl: string, agentId: string): string {
  return `${relayUrl.replace(/\/+$/, "").replace(/^http/, "ws")}/inbox/${agentId}/connect`;
}
