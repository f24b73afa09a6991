// @ts-check
// The inspector page's script: plain DOM, no framework, nothing loaded from elsewhere. It follows the
// agent's event stream (/inspector/events) for deliveries and status, asks the relay's queue through the
// agent (/inspector/api/*) and sends replay and drop with the token the page was served with. Message
// bodies are the outside world's bytes: they are only ever set as text, never as markup.
// Served by local-agent/inspector/inspector-routes.ts; type-checked by tsconfig.inspector.json.

/** @typedef {{ outcome: "delivered" | "rejected" | "retrying", id: number, subpath: string, sender: string | null, status: number, at: number, latency_ms: number, attempts: number, detail: string | null, target?: string, method?: string }} DeliveryEvent */
/** @typedef {{ source: string, target: string, last_answer: { status: number, detail: string, at: number, id: number } | null, failing_since: number | null, last_error: string | null, delivered: number, rejected: number }} ForwardTarget */
/** @typedef {{ at: number, delivered: number, failed: number, latency_sum_ms: number, latency_max_ms: number }} MinuteFigures */
/** @typedef {{ id: number, state: string, kind: string, subpath: string | null, content_type: string, size?: number, received_at?: number, sender?: string | null, msg_id?: string | null, type?: string | null, attempts?: number, reason?: string | null, last_status?: number | null, replay_of?: number | null, target?: string }} QueueItem */
/** @typedef {{ agent_id: string, relay: { url: string, state: string, since: number, error: string | null }, gateway: { port: number, hooks_path: string, problem?: string | null }, delivery: { queued: number, paused: string | null, last_error: { id: number, message: string, at: number } | null, last_delivery: { status: number, at: number } | null, forwards?: ForwardTarget[] } }} AgentStatus */
/** @typedef {{ status: AgentStatus, totals: { delivered: number, rejected: number, retried: number }, reconnects: number, last_hour: MinuteFigures[], now: number, recent?: DeliveryEvent[] }} StatePush */

const TOKEN = /** @type {HTMLMetaElement} */ (document.querySelector('meta[name="clawrelay-token"]')).content;
const MAX_ROWS = 100;
const QUEUE_EVERY_MS = 5000;

/** @type {DeliveryEvent[]} */
let deliveries = [];
/** @type {number | null} */
let selected = null;
/** @type {ReturnType<typeof setTimeout> | null} */
let queueTimer = null;
/** @type {ReturnType<typeof setTimeout> | null} */
let stateTimer = null;
let clockSkew = 0;
/** Counted by the agent; between its state pushes, moved on by each delivery event. */
let totals = { delivered: 0, rejected: 0, retried: 0 };

function renderTotals() {
  setText("n-delivered", String(totals.delivered));
  setText("n-rejected", String(totals.rejected));
  setText("n-retried", String(totals.retried));
}

/** @param {string} id */
function el(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`no #${id}`);
  return found;
}

/** @param {string} id @param {string} text */
function setText(id, text) {
  el(id).textContent = text;
}

/** @param {string} tag @param {string} text @param {string} [className] */
function cell(tag, text, className) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** @param {number} ms */
function ago(ms) {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 90) return `${s}s ago`;
  if (s < 5400) return `${Math.round(s / 60)}m ago`;
  if (s < 172800) return `${Math.round(s / 3600)}h ago`;
  return `${Math.round(s / 86400)}d ago`;
}

/** @param {number} ms */
function duration(ms) {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 120000) return `${(ms / 1000).toFixed(1)} s`;
  return `${Math.round(ms / 60000)} min`;
}

const now = () => Date.now() - clockSkew;

/** @param {number} status */
function statusClass(status) {
  if (status >= 200 && status < 300) return "status-ok";
  if (status === 0 || status >= 500 || status === 429) return "status-warn";
  return "status-bad";
}

/** @param {string} path @param {RequestInit} [init] */
async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { "x-clawrelay-inspector-token": TOKEN } });
  const body = await res.json();
  if (!res.ok) throw new Error(body.error ?? `${res.status}`);
  return body;
}

/** @param {StatePush} push */
function renderState(push) {
  const { status } = push;
  totals = { ...push.totals };
  clockSkew = Date.now() - push.now;
  setText("agent-id", status.agent_id);
  const state = el("relay-state");
  state.textContent = status.relay.state;
  state.className = `pill ${status.relay.state === "connected" ? "ok" : status.relay.state === "connecting" ? "warn" : "bad"}`;
  setText("relay-since", `since ${ago(now() - status.relay.since)}${status.relay.error ? ` — ${status.relay.error}` : ""}`);
  setText("reconnects", String(push.reconnects));
  // The deliveries first: the gateway's last answer below is read from them.
  if (push.recent) {
    deliveries = [...push.recent].reverse().slice(0, MAX_ROWS);
    renderDeliveries(null);
  }
  setText("gateway", status.gateway.problem ? `none: ${status.gateway.problem}` : `127.0.0.1:${status.gateway.port}${status.gateway.hooks_path}`);
  // The gateway's last answer: a forwarded event's is its app's, shown with its target below.
  const last = deliveries.find((d) => !d.target);
  const answer = el("gateway-last");
  if (last) {
    answer.textContent = `${last.status === 0 ? "unreachable" : last.status} ${ago(now() - last.at)}`;
    answer.className = `pill ${last.status >= 200 && last.status < 300 ? "ok" : last.status === 0 || last.status >= 500 ? "warn" : "bad"}`;
  }
  renderTotals();
  setText("n-in-agent", String(status.delivery.queued));
  const error = el("last-error");
  const problem = status.delivery.paused ?? status.delivery.last_error?.message ?? null;
  error.hidden = problem === null;
  error.textContent = problem ? `${status.delivery.paused ? "paused: " : "last error: "}${problem}` : "";
  renderChart(push.last_hour);
  renderForwards(status.delivery.forwards ?? []);
}

/** @param {ForwardTarget[]} forwards */
function renderForwards(forwards) {
  el("forwards").hidden = forwards.length === 0;
  const body = /** @type {HTMLElement} */ (el("forwards").querySelector("tbody"));
  body.replaceChildren(
    ...forwards.map((f) => {
      const row = document.createElement("tr");
      row.dataset.source = f.source;
      if (f.failing_since !== null) row.className = "failing";
      const answer = f.last_answer;
      row.append(
        cell("td", f.source, "mono"),
        cell("td", f.target, "mono wrap"),
        cell("td", answer ? `${answer.status} ${ago(now() - answer.at)}` : "none yet", answer ? statusClass(answer.status) : "muted"),
        cell("td", f.failing_since === null ? "—" : `${ago(now() - f.failing_since)}`, f.failing_since === null ? "" : "status-warn"),
        cell("td", String(f.delivered)),
        cell("td", String(f.rejected), f.rejected > 0 ? "status-bad" : ""),
        cell("td", f.last_error ?? "", "wrap"),
      );
      return row;
    }),
  );
}

/** @param {MinuteFigures[]} minutes */
function renderChart(minutes) {
  const svg = el("chart");
  const ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  const width = 600;
  const height = 120;
  const slot = width / minutes.length;
  const most = Math.max(1, ...minutes.map((m) => m.delivered + m.failed));
  const means = minutes.map((m) => (m.delivered > 0 ? m.latency_sum_ms / m.delivered : null));
  const slowest = Math.max(1, ...means.map((m) => m ?? 0));
  minutes.forEach((m, i) => {
    const ok = (m.delivered / most) * (height - 10);
    const bad = (m.failed / most) * (height - 10);
    for (const [value, y, className] of /** @type {[number, number, string][]} */ ([[ok, height - ok, "bar"], [bad, height - ok - bad, "fail"]])) {
      if (value <= 0) continue;
      const rect = document.createElementNS(ns, "rect");
      rect.setAttribute("x", String(i * slot + 1));
      rect.setAttribute("y", String(y));
      rect.setAttribute("width", String(Math.max(1, slot - 2)));
      rect.setAttribute("height", String(value));
      rect.setAttribute("class", className);
      svg.append(rect);
    }
  });
  const points = means.flatMap((mean, i) => (mean === null ? [] : [`${i * slot + slot / 2},${height - 4 - (mean / slowest) * (height - 14)}`]));
  for (const point of points) {
    const [cx, cy] = point.split(",");
    const dot = document.createElementNS(ns, "circle");
    dot.setAttribute("cx", cx ?? "0");
    dot.setAttribute("cy", cy ?? "0");
    dot.setAttribute("r", "2.5");
    dot.setAttribute("class", "latency-dot");
    svg.append(dot);
  }
  if (points.length > 1) {
    const line = document.createElementNS(ns, "polyline");
    line.setAttribute("points", points.join(" "));
    line.setAttribute("class", "latency");
    svg.append(line);
  }
  const total = minutes.reduce((n, m) => n + m.delivered, 0);
  setText("chart-scale", `${total} delivered in the last hour; tallest bar ${most}/min; slowest minute's mean latency ${duration(slowest === 1 && total === 0 ? 0 : slowest)}`);
}

/** @param {number | null} fresh */
function renderDeliveries(fresh) {
  const body = /** @type {HTMLElement} */ (el("deliveries").querySelector("tbody"));
  body.replaceChildren(
    ...deliveries.map((d) => {
      const row = document.createElement("tr");
      row.dataset.id = String(d.id);
      row.dataset.outcome = d.outcome;
      if (d.target) row.dataset.target = d.target;
      if (d.id === fresh) row.className = "fresh";
      if (d.id === selected) row.classList.add("selected");
      row.append(
        cell("td", new Date(d.at).toLocaleTimeString()),
        cell("td", String(d.id), "mono"),
        cell("td", d.target ? `${d.method ?? "POST"} ${d.target}` : d.subpath, d.target ? "mono wrap" : "mono"),
        cell("td", d.sender ?? "—", "mono"),
        cell("td", d.status === 0 ? "—" : String(d.status), statusClass(d.status)),
        cell("td", duration(d.latency_ms)),
        cell("td", d.outcome === "delivered" ? "delivered" : d.outcome === "rejected" ? `dead: ${d.detail ?? ""}` : `retrying: ${d.detail ?? ""}`, `wrap ${d.outcome === "delivered" ? "status-ok" : d.outcome === "rejected" ? "status-bad" : "status-warn"}`),
      );
      row.addEventListener("click", () => void openMessage(d.id));
      return row;
    }),
  );
  /** @type {HTMLElement} */ (el("deliveries").querySelector(".empty")).hidden = deliveries.length > 0;
}

async function refreshQueue() {
  if (queueTimer) clearTimeout(queueTimer);
  queueTimer = setTimeout(() => void refreshQueue(), QUEUE_EVERY_MS);
  const state = /** @type {HTMLSelectElement} */ (el("queue-state")).value;
  try {
    const listing = /** @type {{ messages: QueueItem[], summary: { queued: number, sent: number, dead: number } }} */ (await api(`/inspector/api/queue?state=${state}`));
    setText("n-queued", String(listing.summary.queued + listing.summary.sent));
    setText("n-dead", String(listing.summary.dead));
    const body = /** @type {HTMLElement} */ (el("queue").querySelector("tbody"));
    body.replaceChildren(
      ...listing.messages.map((m) => {
        const row = document.createElement("tr");
        row.dataset.id = String(m.id);
        row.dataset.state = m.state;
        if (m.id === selected) row.className = "selected";
        row.append(
          cell("td", String(m.id), "mono"),
          cell("td", m.state, m.state === "dead" ? "status-bad" : ""),
          cell("td", m.subpath ?? `(envelope ${m.type ?? "?"})`, "mono"),
          cell("td", m.sender ?? "—", "mono"),
          cell("td", `${m.size ?? 0} B`),
          cell("td", m.received_at ? ago(now() - m.received_at) : ""),
          cell("td", m.reason ?? "", "wrap"),
        );
        row.addEventListener("click", () => void openMessage(m.id));
        return row;
      }),
    );
    /** @type {HTMLElement} */ (el("queue").querySelector(".empty")).hidden = listing.messages.length > 0;
  } catch (err) {
    setText("n-queued", "?");
    setText("n-dead", "?");
    /** @type {HTMLElement} */ (el("queue").querySelector(".empty")).hidden = false;
    /** @type {HTMLElement} */ (el("queue").querySelector(".empty")).textContent = `The relay could not be asked: ${err instanceof Error ? err.message : String(err)}`;
  }
}

/** @param {string} base64 */
function hexDump(base64) {
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
function pretty(text) {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** @param {number} id */
async function openMessage(id) {
  selected = id;
  for (const row of document.querySelectorAll("tbody tr[data-id]")) row.classList.toggle("selected", row instanceof HTMLElement && row.dataset.id === String(id));
  const panel = el("detail");
  panel.hidden = false;
  panel.scrollIntoView({ block: "nearest" });
  setText("detail-id", String(id));
  setText("action-result", "");
  setText("detail-body", "loading…");
  try {
    const shown = /** @type {{ message: QueueItem, body: string, encoding: "utf8" | "base64", headers: Record<string, string> | null, source: "relay" | "agent" }} */ (await api(`/inspector/api/messages/${id}`));
    const m = shown.message;
    const meta = el("detail-meta");
    /** @type {[string, string | number | null | undefined][]} */
    const fields = [
      ["state", shown.source === "agent" ? "finished (the relay deleted it on ack; the agent kept this copy)" : m.state],
      ["kind", m.kind], ["sub-path", m.subpath], ["forwarded to", m.target], ["content-type", m.content_type], ["size", m.size === undefined ? undefined : `${m.size} bytes`],
      ["received", m.received_at ? new Date(m.received_at).toLocaleString() : undefined], ["sender", m.sender], ["msg_id", m.msg_id], ["type", m.type],
      ["attempts", m.attempts], ["last status", m.last_status], ["reason", m.reason], ["replay of", m.replay_of],
    ];
    meta.replaceChildren(...fields.filter(([, v]) => v !== null && v !== undefined && v !== "").flatMap(([k, v]) => [cell("dt", k), cell("dd", String(v))]));
    const headers = /** @type {HTMLElement} */ (el("detail-headers").querySelector("tbody"));
    const entries = Object.entries(shown.headers ?? {});
    headers.replaceChildren(...(entries.length > 0 ? entries.map(([k, v]) => { const row = document.createElement("tr"); row.append(cell("td", k, "mono"), cell("td", v, "mono wrap")); return row; }) : [cell("tr", "none")]));
    setText("detail-encoding", shown.encoding === "base64" ? "(not UTF-8: hex dump)" : /json/i.test(m.content_type) ? "(JSON, formatted)" : "");
    setText("detail-body", shown.encoding === "base64" ? hexDump(shown.body) : pretty(shown.body));
    /** @type {HTMLButtonElement} */ (el("replay")).disabled = !(shown.source === "relay" && m.state === "dead");
    /** @type {HTMLButtonElement} */ (el("drop")).disabled = shown.source !== "relay";
    el("drop").textContent = "Drop";
  } catch (err) {
    setText("detail-body", `could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function replay() {
  if (selected === null) return;
  try {
    const answer = /** @type {{ replayed: number, id: number }} */ (await api(`/inspector/api/messages/${selected}/replay`, { method: "POST" }));
    setText("action-result", `queued again as message ${answer.id}`);
    /** @type {HTMLButtonElement} */ (el("replay")).disabled = true;
    void refreshQueue();
  } catch (err) {
    setText("action-result", `replay refused: ${err instanceof Error ? err.message : String(err)}`);
  }
}

async function drop() {
  if (selected === null) return;
  const button = /** @type {HTMLButtonElement} */ (el("drop"));
  // A drop cannot be undone: the first click asks, the second does it.
  if (button.textContent !== "Really drop?") {
    button.textContent = "Really drop?";
    return;
  }
  try {
    const answer = /** @type {{ dropped: number, was: string }} */ (await api(`/inspector/api/messages/${selected}/drop`, { method: "POST" }));
    setText("action-result", `message ${answer.dropped} (${answer.was}) dropped`);
    button.disabled = true;
    /** @type {HTMLButtonElement} */ (el("replay")).disabled = true;
    void refreshQueue();
  } catch (err) {
    setText("action-result", `drop refused: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function follow() {
  const stream = new EventSource(`/inspector/events?token=${encodeURIComponent(TOKEN)}`);
  stream.addEventListener("open", () => setText("live", "live"));
  stream.addEventListener("error", () => setText("live", "reconnecting to the agent…"));
  stream.addEventListener("state", (e) => renderState(JSON.parse(/** @type {MessageEvent} */ (e).data)));
  stream.addEventListener("delivery", (e) => {
    /** @type {DeliveryEvent} */
    const event = JSON.parse(/** @type {MessageEvent} */ (e).data);
    deliveries = [event, ...deliveries].slice(0, MAX_ROWS);
    totals[event.outcome === "retrying" ? "retried" : event.outcome] += 1;
    renderTotals();
    renderDeliveries(event.id);
    // The rest (chart, gateway's last answer, the relay's queue) follows at once, not at the next push.
    if (queueTimer) clearTimeout(queueTimer);
    queueTimer = setTimeout(() => void refreshQueue(), 250);
    if (stateTimer) clearTimeout(stateTimer);
    stateTimer = setTimeout(() => void api("/inspector/api/state").then((push) => renderState({ ...push, recent: undefined }), () => {}), 250);
  });
}

el("replay").addEventListener("click", () => void replay());
el("drop").addEventListener("click", () => void drop());
el("detail-close").addEventListener("click", () => {
  el("detail").hidden = true;
  selected = null;
});
el("queue-state").addEventListener("change", () => void refreshQueue());
follow();
void refreshQueue();
