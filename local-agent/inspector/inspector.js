// @ts-check
// The inspector page's script (an ES module; its parts beside it): plain DOM, no framework, nothing
// loaded from elsewhere. It follows the agent's event stream (/inspector/events) for deliveries and
// status, asks the relay's queue and its history (history-list.js) through the agent (/inspector/api/*) and sends replay, drop and "Retry
// now" with the token the page was served with. Message bodies are the outside world's bytes: only ever set as text.
// Served by local-agent/inspector/inspector-routes.ts; type-checked by tsconfig.inspector.json.
import { addDelivery, deliveriesOf, lastGatewayEvent, resetDeliveries, retryingCount, setGatewayDown, wireDeliveries } from "./delivery-list.js";
import { wireHistory } from "./history-list.js";
import { renderChart } from "./hour-chart.js";
import { setAgentLanes, setRelayLanes } from "./lane-panel.js";
import { messageRow, openMessage, selectedId, updateSeen, wireDetail } from "./message-detail.js";
import { api, cell, clippedCell, el, eventsUrl, reasonCell, setText } from "./page-dom.js";
import { ago, clock, oneLine, retryText, statusClass } from "./page-text.js";

/** @typedef {import("./delivery-list.js").DeliveryEvent} DeliveryEvent */
/** @typedef {import("./message-detail.js").QueueItem} QueueItem */
/** @typedef {import("./hour-chart.js").MinuteFigures} MinuteFigures */
/** @typedef {{ source: string, target: string, last_answer: { status: number, detail: string, at: number, id: number } | null, failing_since: number | null, last_error: string | null, delivered: number, rejected: number }} ForwardTarget */
/** @typedef {{ agent_id: string, relay: { url: string, state: string, since: number, error: string | null }, gateway: { port: number, hooks_path: string, problem?: string | null }, delivery: { queued: number, in_flight: number, gateway_down: { since: number, probes: number, reason: string } | null, paused: string | null, last_error: { id: number, message: string, at: number } | null, last_delivery: { status: number, at: number } | null, forwards?: ForwardTarget[], lanes?: import("./lane-panel.js").AgentLane[] } }} AgentStatus */
/** @typedef {{ status: AgentStatus, totals: { delivered: number, rejected: number, retried: number }, reconnects: number, last_hour: MinuteFigures[], now: number, recent?: DeliveryEvent[] }} StatePush */
/** @typedef {{ queued: number, sent: number, dead: number, lanes?: import("./lane-panel.js").RelayLane[] }} QueueSummary the relay's counts, by its states, and its lanes (protocol/queue-item.ts; none from an older relay) */

const QUEUE_EVERY_MS = 5000;

/** @type {ReturnType<typeof setTimeout> | null} */
let queueTimer = null;
/** @type {ReturnType<typeof setTimeout> | null} */
let stateTimer = null;
/** Counted by the agent; between its state pushes, moved on by each delivery event. */
let totals = { delivered: 0, rejected: 0, retried: 0 };

function renderTotals() {
  setText("n-delivered", String(totals.delivered));
  setText("n-rejected", String(totals.rejected));
  setText("n-retried", String(totals.retried));
}

/** @param {StatePush} push */
function renderState(push) {
  const { status } = push;
  totals = { ...push.totals };
  clock.skew = Date.now() - push.now;
  setText("agent-id", status.agent_id);
  const state = el("relay-state");
  state.textContent = status.relay.state;
  state.className = `pill ${status.relay.state === "connected" ? "ok" : status.relay.state === "connecting" ? "warn" : "bad"}`;
  setText("relay-since", `since ${ago(clock.now() - status.relay.since)}${status.relay.error ? ` — ${status.relay.error}` : ""}`);
  setText("reconnects", String(push.reconnects));
  // The deliveries first: the gateway's last answer below is read from them.
  if (push.recent) resetDeliveries(push.recent);
  setText("gateway", status.gateway.problem ? `none: ${status.gateway.problem}` : `127.0.0.1:${status.gateway.port}${status.gateway.hooks_path}`);
  const last = lastGatewayEvent();
  const answer = el("gateway-last");
  if (last) {
    answer.textContent = `${last.status === 0 ? "unreachable" : last.status} ${ago(clock.now() - last.at)}`;
    answer.className = `pill ${last.status >= 200 && last.status < 300 ? "ok" : last.status === 0 || last.status >= 500 ? "warn" : "bad"}`;
  }
  renderGatewayDown(status.delivery.gateway_down);
  renderTotals();
  const error = el("last-error");
  const problem = status.delivery.paused ?? status.delivery.last_error?.message ?? null;
  error.hidden = problem === null;
  error.textContent = problem ? `${status.delivery.paused ? "paused: " : "last error: "}${problem}` : "";
  renderRetry(status);
  renderChart(push.last_hour);
  renderForwards(status.delivery.forwards ?? []);
  // An agent from before lanes reports none.
  setAgentLanes(status.delivery.lanes ?? []);
}

/**
 * While the gateway is down (the status's gateway_down, as `clawrelay status` says GATEWAY DOWN): a red
 * pill beside its address with since when and the probes so far, and the waiting rows' attempts follow.
 * @param {AgentStatus["delivery"]["gateway_down"]} down
 */
function renderGatewayDown(down) {
  const pill = el("gateway-down");
  pill.hidden = down === null;
  pill.textContent = down ? `gateway down since ${ago(clock.now() - down.since)} · probed ${down.probes} times` : "";
  pill.title = down ? `${down.reason}; one post at a time probes it, every conversation goes on once it answers` : "";
  setGatewayDown(down);
}

/**
 * "Retry now" while something waits that it would cut short: a pause (a configuration error's 60 s), the
 * down gateway's next probe, or messages waiting to retry (started, their latest event here a retry).
 * @param {AgentStatus} status
 */
function renderRetry(status) {
  const d = status.delivery;
  const waiting = d.paused !== null || d.gateway_down !== null || (d.in_flight > 0 && retryingCount() > 0);
  el("retry-now").hidden = !waiting;
  el("retry-line").hidden = !waiting && !el("retry-result").textContent;
}

async function retryNow() {
  const button = /** @type {HTMLButtonElement} */ (el("retry-now"));
  button.disabled = true;
  try {
    setText("retry-result", retryText(await api("/inspector/api/retry", { method: "POST" })));
  } catch (err) {
    setText("retry-result", `retry refused: ${err instanceof Error ? err.message : String(err)}`);
  } finally {
    button.disabled = false;
  }
  // What the woken messages did next: the agent's status and the relay's queue, asked again now.
  await refreshState();
  void refreshQueue();
}

const refreshState = () => api("/inspector/api/state").then((push) => renderState({ ...push, recent: undefined }), () => {});

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
        cell("td", answer ? `${answer.status} ${ago(clock.now() - answer.at)}` : "none yet", answer ? statusClass(answer.status) : "muted"),
        cell("td", f.failing_since === null ? "—" : `${ago(clock.now() - f.failing_since)}`, f.failing_since === null ? "" : "status-warn"),
        cell("td", String(f.delivered)),
        cell("td", String(f.rejected), f.rejected > 0 ? "status-bad" : ""),
        cell("td", f.last_error ?? "", "wrap"),
      );
      return row;
    }),
  );
}

/** The relay's own counts, one figure per state it has: queued (waiting for the agent), sent (in the agent's hands), dead. @param {QueueSummary | null} summary */
function renderRelayCounts(summary) {
  setText("n-queued", summary ? String(summary.queued) : "?");
  setText("n-sent", summary ? String(summary.sent) : "?");
  setText("n-dead", summary ? String(summary.dead) : "?");
}

async function refreshQueue() {
  if (queueTimer) clearTimeout(queueTimer);
  queueTimer = setTimeout(() => void refreshQueue(), QUEUE_EVERY_MS);
  const state = /** @type {HTMLSelectElement} */ (el("queue-state")).value;
  const empty = /** @type {HTMLElement} */ (el("queue").querySelector(".empty"));
  try {
    const listing = /** @type {{ messages: QueueItem[], summary: QueueSummary }} */ (await api(`/inspector/api/queue?state=${state}`));
    renderRelayCounts(listing.summary);
    setRelayLanes(listing.summary.lanes ?? []);
    const body = /** @type {HTMLElement} */ (el("queue").querySelector("tbody"));
    body.replaceChildren(
      ...listing.messages.map((m) =>
        messageRow(m, "queue", [
          cell("td", String(m.id), "mono"),
          cell("td", m.state, m.state === "dead" ? "status-bad" : ""),
          cell("td", m.subpath ?? `(envelope ${m.type ?? "?"})`, "mono clip"),
          clippedCell(m.lane ?? "—", "mono clip"),
          cell("td", m.sender ?? "—", "mono"),
          cell("td", `${m.size ?? 0} B`),
          cell("td", m.received_at ? ago(clock.now() - m.received_at) : ""),
          reasonCell(oneLine(m.reason ?? ""), m.reason ?? "", ""),
        ]),
      ),
    );
    empty.hidden = listing.messages.length > 0;
    empty.textContent = "The inbox holds nothing: everything was delivered.";
  } catch (err) {
    renderRelayCounts(null);
    setRelayLanes([]);
    empty.hidden = false;
    empty.textContent = `The relay could not be asked: ${err instanceof Error ? err.message : String(err)}`;
  }
}

function follow() {
  const stream = new EventSource(eventsUrl());
  stream.addEventListener("open", () => setText("live", "live"));
  stream.addEventListener("error", () => setText("live", "reconnecting to the agent…"));
  stream.addEventListener("state", (e) => renderState(JSON.parse(/** @type {MessageEvent} */ (e).data)));
  stream.addEventListener("delivery", (e) => {
    /** @type {DeliveryEvent} */
    const event = JSON.parse(/** @type {MessageEvent} */ (e).data);
    addDelivery(event);
    if (event.id === selectedId()) updateSeen(deliveriesOf(event.id));
    totals[event.outcome === "retrying" ? "retried" : event.outcome] += 1;
    renderTotals();
    // The rest (chart, gateway's last answer, the relay's queue) follows at once, not at the next push.
    if (queueTimer) clearTimeout(queueTimer);
    queueTimer = setTimeout(() => void refreshQueue(), 250);
    if (stateTimer) clearTimeout(stateTimer);
    stateTimer = setTimeout(() => void refreshState(), 250);
  });
}

wireDeliveries((id, seen) => void openMessage(id, seen, "deliveries"), selectedId);
wireDetail(() => void refreshQueue());
el("queue-state").addEventListener("change", () => void refreshQueue());
el("retry-now").addEventListener("click", () => void retryNow());
follow();
void refreshQueue();
wireHistory();
