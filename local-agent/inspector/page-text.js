// @ts-check
// Text for a person on the inspector page: ages, durations, a status's colour, a reason cut to one line,
// a body formatted (JSON indented, other bytes as a hex dump), a long URL cut in its middle, what "Retry
// now" woke. Pure; the page's
// clock follows the agent's.
// Imported by the page's modules (inspector.js, delivery-list.js, message-detail.js, hour-chart.js); covered by
// test/node/inspector.browser.test.ts and inspector-deliveries.browser.test.ts.

/** How far the browser's clock is ahead of the agent's, learned from each state push. */
export const clock = {
  skew: 0,
  now() {
    return Date.now() - this.skew;
  },
};

/** @param {number} ms */
export function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s}s ago`;
  if (s < 5400) return `${Math.round(s / 60)}m ago`;
  if (s < 172800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

/** @param {number} ms */
export function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60000)} min`;
}

/** @param {number} status */
export function statusClass(status) {
  if (status >= 200 && status < 300) return "status-ok";
  if (status === 0 || status >= 500 || status === 429) return "status-warn";
  return "status-bad";
}

/** A reason's first line, whitespace folded, cut at `max` characters: the full text goes in a tooltip. @param {string} text @param {number} [max] */
export function oneLine(text, max = 80) {
  const [first = "", ...rest] = text.trim().split("\n");
  const line = first.replace(/\s+/g, " ").trim();
  if (line.length > max) return `${line.slice(0, max - 1).trimEnd()}…`;
  return rest.length > 0 ? `${line} …` : line;
}

/**
 * A URL to show in a narrow cell: whole up to `max` characters; past that, its start (the origin and the
 * path's beginning) and its end (the path's last part and the query) around a "…" — never only the
 * origin. The whole URL goes in the tooltip and the message's detail. @param {string} url @param {number} [max]
 */
export function urlShown(url, max = 160) {
  const points = [...url];
  if (points.length <= max) return url;
  const head = Math.ceil((max - 1) * 0.6);
  return `${points.slice(0, head).join("")}…${points.slice(points.length - (max - 1 - head)).join("")}`;
}

/** @param {string} base64 */
export function hexDump(base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const lines = [];
  for (let offset = 0; offset < bytes.length; offset += 16) {
    const row = [...bytes.subarray(offset, offset + 16)];
    const hex = row.map((b) => b.toString(16).padStart(2, "0")).join(" ");
    const text = row.map((b) => (b >= 0x20 && b < 0x7f ? String.fromCharCode(b) : ".")).join("");
    lines.push(`${offset.toString(16).padStart(8, "0")}  ${hex.padEnd(47)}  ${text}`);
  }
  return lines.join("\n");
}

/** @param {string} text */
export function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** @typedef {{ woken: number, hold_cut_ms: number, probe_now: boolean, paused: string | null, relay_reconnect?: boolean }} RetryAnswer what POST /inspector/api/retry woke (delivery-status.ts RetryNow) */

/** The agent's answer to "Retry now", in the words `clawrelay retry` prints (cli-retry.ts wokeText). @param {RetryAnswer} woke */
export function retryText(woke) {
  return [
    woke.woken > 0 ? `woke ${woke.woken} waiting ${woke.woken === 1 ? "retry" : "retries"}` : "no message was waiting to retry",
    ...(woke.hold_cut_ms > 0 ? [`cut the gateway's 429 hold short (${Math.ceil(woke.hold_cut_ms / 1000)} s left)`] : []),
    ...(woke.probe_now ? ["probed the down gateway now"] : []),
    ...(woke.relay_reconnect ? ["reconnected to the relay now"] : []),
    ...(woke.paused ? [`paused (${woke.paused}): the pause ends when a post gets through`] : []),
  ].join("; ");
}
