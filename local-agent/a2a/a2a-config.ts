// The gateway's A2A channel as openclaw.json sets it (channels.a2a; the installed OpenClaw's
// docs/channels/a2a.md): whether it is on, how long the gateway blocks for a reply (replyTimeoutMs,
// default 120 s, 5 s to 600 s), its advertised origin, and each peer's bearer token with `${VAR}`
// references resolved the way the gateway resolves config strings (docs/help/environment.md: `${NAME}` of
// an upper-case name from the environment, `$${NAME}` a literal, a missing or empty variable leaves the
// token unusable — gateway/gateway-token.ts substitutedString). A peer whose token cannot be resolved here
// is named, not sent: the relay then refuses it. Pure; imported by a2a-command.ts; covered by
// test/node/a2a-config.test.ts.
import { A2A_PEER_NAME, a2aDeadlineSec, sha256Hex } from "../../protocol/index.ts";
import type { A2aPeer } from "../../protocol/index.ts";
import type { Environment } from "../gateway/openclaw-config.ts";
import { substitutedString } from "../gateway/gateway-token.ts";

export const DEFAULT_REPLY_TIMEOUT_MS = 120_000;

export interface A2aPeerConfig {
  name: string;
  /** The token as the gateway will read it; null when it cannot be resolved here (`problem` says why). */
  token: string | null;
  problem: string | null;
}

export interface A2aChannel {
  enabled: boolean;
  replyTimeoutMs: number;
  advertisedUrl: string | null;
  peers: A2aPeerConfig[];
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

function peerOf(name: string, value: unknown, env: Environment): A2aPeerConfig {
  const token = record(value).token;
  if (!A2A_PEER_NAME.test(name)) return { name, token: null, problem: `the name "${name.slice(0, 80)}" is not one the relay takes (letters, digits, ".", "_", "-", at most 64)` };
  if (typeof token !== "string" || token === "") return { name, token: null, problem: "it has no token (channels.a2a.peers.<name>.token)" };
  const resolved = substitutedString(token, env);
  if (resolved === null) {
    const missing = /\$\{([A-Z_][A-Z0-9_]*)\}/.exec(token.replace(/\$\$\{[^}]*\}/g, ""))?.[1] ?? "?";
    return { name, token: null, problem: `its token refers to \${${missing}}, which is not set here: export it where clawrelay runs (or in the OpenClaw state dir's .env), as the gateway has it` };
  }
  return { name, token: resolved, problem: null };
}

export function a2aChannelFrom(config: unknown, env: Environment): A2aChannel {
  const raw = record(record(config).channels).a2a;
  const a2a = record(raw);
  const timeout = Number(a2a.replyTimeoutMs);
  return {
    // The gateway runs the channel when channels.a2a is there and `enabled` is not false (its accounts.ts:
    // `enabled: config.enabled !== false`); a non-boolean fails its config schema, so the gateway runs none.
    enabled: raw === a2a && (a2a.enabled === undefined || a2a.enabled === true),
    replyTimeoutMs: Number.isFinite(timeout) && timeout > 0 ? timeout : DEFAULT_REPLY_TIMEOUT_MS,
    advertisedUrl: typeof a2a.advertisedUrl === "string" && a2a.advertisedUrl !== "" ? a2a.advertisedUrl : null,
    peers: Object.entries(record(a2a.peers)).map(([name, value]) => peerOf(name, value, env)),
  };
}

/** The peers the relay is told of: those whose token resolved, each as its SHA-256 (lower-case hex). */
export async function peerHashes(channel: A2aChannel): Promise<A2aPeer[]> {
  const usable = channel.peers.filter((p): p is A2aPeerConfig & { token: string } => p.token !== null);
  return Promise.all(usable.map(async (p) => ({ name: p.name, token_sha256: await sha256Hex(p.token) })));
}

/** The relay's deadline for a call: just above the gateway's own reply time-out, at most the live maximum. */
export function channelDeadlineSec(channel: A2aChannel): number {
  return a2aDeadlineSec(channel.replyTimeoutMs);
}
