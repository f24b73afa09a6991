// How long an unauthenticated socket has to answer its challenge, and how long a peer has to answer
// the server's close frame: the protocol's 5 s and RFC 6455's grace (2 s) unless the Worker var
// SOCKET_AUTH_DEADLINE_MS / SOCKET_CLOSE_GRACE_MS says otherwise — the end-to-end tests set both short,
// so they watch the real alarm close and end sockets without waiting seconds. Read once per isolate
// from the Worker's env (cloudflare:workers), so the callers' signatures stay as they are. Imported by
// socket-session.ts and socket-limits.ts; covered by test/worker/websocket-limits.test.ts (defaults),
// test/node/auth-deadline.e2e.test.ts and test/node/socket-close.e2e.test.ts (set).
import { env } from "cloudflare:workers";
import { AUTH_DEADLINE_MS } from "../../protocol/index.ts";

/** How long a peer has to answer the server's close frame (RFC 6455 §7.1.1: then the server ends the TCP connection). */
export const CLOSE_ANSWER_GRACE_MS = 2000;

export interface SocketTimings {
  authDeadlineMs: number;
  closeAnswerGraceMs: number;
}

/** The Worker vars that shorten the timings (strings, as vars are); unset in production. */
export interface SocketTimingVars {
  SOCKET_AUTH_DEADLINE_MS?: string;
  SOCKET_CLOSE_GRACE_MS?: string;
}

/** A var's whole number of ms, or the default when unset; a value that is no such number is refused loudly. */
function millis(vars: SocketTimingVars, name: keyof SocketTimingVars, fallback: number): number {
  const raw = vars[name];
  if (raw === undefined || raw === "") return fallback;
  const ms = Number(raw);
  if (!Number.isSafeInteger(ms) || ms <= 0) throw new Error(`Worker var ${name} must be a whole number of milliseconds above 0, not ${JSON.stringify(raw)}`);
  return ms;
}

export function socketTimingsFrom(vars: SocketTimingVars): SocketTimings {
  return {
    authDeadlineMs: millis(vars, "SOCKET_AUTH_DEADLINE_MS", AUTH_DEADLINE_MS),
    closeAnswerGraceMs: millis(vars, "SOCKET_CLOSE_GRACE_MS", CLOSE_ANSWER_GRACE_MS),
  };
}

let timings: SocketTimings | null = null;

export function socketTimings(): SocketTimings {
  timings ??= socketTimingsFrom(env as SocketTimingVars);
  return timings;
}
