// @ts-check
// The Deliveries list: one row per message id, however many times it was retried. A row shows the
// message's latest outcome, its attempts and the reason cut to one line (the whole reason in the
// tooltip and in the message's detail); an event of a message already listed changes that row where it
// stands (the same element), so a message retried nine times during an outage is one row, not nine.
// Newest message first. A live request the agent answered (kind "live", a negative id: no inbox message)
// is a row of its own: method, path without its query, status and duration, never a body; it has no detail
// to open. While the gateway is down a message waiting for it posts only when its turn to probe comes, and
// a failed probe sends no event: its row's attempts add the outage's probes as the status counts them
// (setGatewayDown), instead of freezing at the count it had when the outage began. A forwarded event's URL
// is shown whole (cut in its middle only past 160 characters). Imported by inspector.js; covered by
// test/node/inspector-deliveries.browser.test.ts, inspector-retry.browser.test.ts (retryingCount, for
// "Retry now") and inspector-outage.browser.test.ts.
import { cell, clippedCell, el, reasonCell } from "./page-dom.js";
import { duration, oneLine, statusClass, urlShown } from "./page-text.js";

/** @typedef {{ kind?: "live", outcome: "delivered" | "rejected" | "retrying", id: number, subpath: string, sender: string | null, status: number, at: number, latency_ms: number, attempts: number, detail: string | null, target?: string, method?: string }} DeliveryEvent */
/** @typedef {{ id: number, first_at: number, events: number, attempts: number, latest: DeliveryEvent }} MessageDeliveries */

const MAX_ROWS = 100;
const WORDS = { delivered: "delivered", rejected: "dead", retrying: "retrying" };
const CLASSES = { delivered: "status-ok", rejected: "status-bad", retrying: "status-warn" };

/** @type {Map<number, MessageDeliveries>} */
const messages = new Map();
/** @type {Map<number, HTMLTableRowElement>} */
const rows = new Map();
/** @type {(id: number, seen: MessageDeliveries) => void} */
let onOpen = () => {};
/** @type {() => number | null} */
let selectedId = () => null;
/** @typedef {{ since: number, probes: number, reason: string }} GatewayDown the status's delivery.gateway_down */
/** @type {GatewayDown | null} */
let gatewayDown = null;

/** What a click on a row does, and which message is open (its row is marked). */
export function wireDeliveries(/** @type {typeof onOpen} */ open, /** @type {typeof selectedId} */ selected) {
  onOpen = open;
  selectedId = selected;
}

/** @param {DeliveryEvent} event */
function note(event) {
  const known = messages.get(event.id);
  // The latest event's count is the delivery's own; the page may have missed some, never more.
  const attempts = Math.max(event.attempts, known?.attempts ?? 0);
  messages.set(event.id, { id: event.id, first_at: known?.first_at ?? event.at, events: (known?.events ?? 0) + 1, attempts, latest: event });
}

/** The agent's recent events (oldest first), as a state push carries them: the list starts afresh. @param {DeliveryEvent[]} events */
export function resetDeliveries(events) {
  messages.clear();
  for (const event of events) note(event);
  render(null, true);
}

/** One live event: its message's row changes in place, or a new row comes on top. @param {DeliveryEvent} event */
export function addDelivery(event) {
  note(event);
  render(event.id, false);
}

/** What the page knows of one message's deliveries, for its detail. @param {number} id */
export function deliveriesOf(id) {
  return messages.get(id) ?? null;
}

/** Messages whose latest event here is a retry still to come (the page's "Retry now" may cut their wait). */
export function retryingCount() {
  let n = 0;
  for (const { latest } of messages.values()) if (latest.outcome === "retrying") n += 1;
  return n;
}

/**
 * The gateway's outage as the agent's status says it (null: it answers): rows of messages waiting for it
 * show its probes with their attempts, and follow its count. @param {GatewayDown | null} down
 */
export function setGatewayDown(down) {
  const changed = (down?.since ?? null) !== (gatewayDown?.since ?? null) || (down?.probes ?? 0) !== (gatewayDown?.probes ?? 0);
  gatewayDown = down;
  if (!changed) return;
  for (const m of messages.values()) {
    const row = rows.get(m.id);
    if (row && (waitsForGateway(m.latest) || row.dataset.probes !== undefined)) fill(m, row);
  }
}

/** A gateway message whose latest event is a retry: while the gateway is down, it waits for a probe. @param {DeliveryEvent} d */
const waitsForGateway = (d) => d.outcome === "retrying" && !d.target && d.kind !== "live";

/**
 * The attempts cell: the posts this page saw, plus — while the gateway is down — the outage's probes
 * (made one at a time by the messages waiting for it), as the status counts them.
 * @param {MessageDeliveries} m @param {HTMLTableRowElement} row
 */
function attemptsCell(m, row) {
  const down = gatewayDown;
  if (!down || !waitsForGateway(m.latest)) {
    delete row.dataset.probes;
    return cell("td", String(m.attempts), "attempts");
  }
  row.dataset.probes = String(down.probes);
  const node = cell("td", `${m.attempts} + ${down.probes} probes`, "attempts status-warn");
  node.title = `${m.attempts} posts of this message failed; since the gateway went down at ${new Date(down.since).toLocaleTimeString()} it was probed ${down.probes} times, one post at a time by the messages waiting for it (${down.reason})`;
  return node;
}

/** A forwarded event's method and URL: the whole URL in the cell (cut in its middle only when very long) and its tooltip. @param {DeliveryEvent} d */
function targetCell(d) {
  const full = `${d.method ?? "POST"} ${d.target}`;
  const node = cell("td", `${d.method ?? "POST"} ${urlShown(d.target ?? "")}`, "mono url");
  node.title = full;
  return node;
}

/** The gateway's own latest answer (a forwarded event's answer is its app's). */
export function lastGatewayEvent() {
  let last = /** @type {DeliveryEvent | null} */ (null);
  for (const { latest } of messages.values()) if (!latest.target && latest.kind !== "live" && (!last || latest.at >= last.at)) last = latest;
  return last;
}

/** A narrow cell, the text whole in its tooltip: the outcome, last on the row, must stay in view. @param {string} text */
const clipped = (text) => clippedCell(text, "mono clip");

/** @param {MessageDeliveries} m @param {HTMLTableRowElement} row */
function fill(m, row) {
  const d = m.latest;
  row.dataset.id = String(d.id);
  row.dataset.outcome = d.outcome;
  row.dataset.attempts = String(m.attempts);
  if (d.target) row.dataset.target = d.target;
  const live = d.kind === "live";
  const word = live ? (d.outcome === "delivered" ? "answered live" : "live, failed") : WORDS[d.outcome];
  const full = d.detail ? `${word}: ${d.detail}` : word;
  const time = cell("td", new Date(d.at).toLocaleTimeString());
  if (m.events > 1) time.title = `first seen ${new Date(m.first_at).toLocaleTimeString()}; ${m.events} events since`;
  row.replaceChildren(
    time,
    cell("td", live ? "live" : String(d.id), "mono"),
    live ? clipped(`${d.method ?? "POST"} ${d.subpath}`) : d.target ? targetCell(d) : clipped(d.subpath),
    clipped(d.sender ?? "—"),
    cell("td", d.status === 0 ? "—" : String(d.status), statusClass(d.status)),
    cell("td", duration(d.latency_ms)),
    attemptsCell(m, row),
    reasonCell(d.detail ? `${word}: ${oneLine(d.detail)}` : word, full, CLASSES[d.outcome]),
  );
}

/** @param {number | null} fresh the message whose event just came @param {boolean} all whether every row is filled anew */
function render(fresh, all) {
  const shown = [...messages.values()].sort((a, b) => b.first_at - a.first_at || b.id - a.id).slice(0, MAX_ROWS);
  for (const id of messages.keys()) if (!shown.some((m) => m.id === id)) messages.delete(id);
  for (const id of rows.keys()) if (!messages.has(id)) rows.delete(id);
  for (const m of shown) {
    let row = rows.get(m.id);
    if (!row) {
      const created = document.createElement("tr");
      created.addEventListener("animationend", () => created.classList.remove("fresh"));
      created.addEventListener("click", () => {
        const seen = messages.get(m.id);
        if (seen && seen.latest.kind !== "live") onOpen(m.id, seen);
      });
      rows.set(m.id, (row = created));
    }
    if (all || m.id === fresh || row.childElementCount === 0) fill(m, row);
    row.classList.toggle("selected", m.id === selectedId());
    if (m.id === fresh) {
      // Restarts the highlight on a row that had it already (a second retry within 1.5 s).
      row.classList.remove("fresh");
      void row.offsetWidth;
      row.classList.add("fresh");
    }
  }
  // Rows already in place stay put: a node taken out and put back would replay its highlight.
  const body = /** @type {HTMLElement} */ (el("deliveries").querySelector("tbody"));
  shown.forEach((m, i) => {
    const row = /** @type {HTMLTableRowElement} */ (rows.get(m.id));
    if (body.children[i] !== row) body.insertBefore(row, body.children[i] ?? null);
  });
  while (body.children.length > shown.length) body.lastElementChild?.remove();
  /** @type {HTMLElement} */ (el("deliveries").querySelector(".empty")).hidden = shown.length > 0;
}
