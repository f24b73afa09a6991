// @ts-check
// One message opened: a panel held in the window beside the list clicked — over the other list, at
// whatever depth the page is scrolled — so it opens where the user is looking, with the message's metadata, what
// this page saw of its deliveries (the whole last reason), its headers of interest and its body, and
// Replay / Drop. A replay queues the message again under a new id and the relay deletes the dead one (a
// delivered one kept in the history stays): the
// panel follows it to the new id (never left saying "dead"). A forwarded message names its whole URL.
// Escape or × closes it. Imported by inspector.js and history-list.js; covered by test/node/inspector.browser.test.ts,
// inspector-deliveries.browser.test.ts, inspector-outage.browser.test.ts and inspector-history.browser.test.ts.
import { deliveriesOf } from "./delivery-list.js";
import { api, cell, el, setText } from "./page-dom.js";
import { hexDump, pretty } from "./page-text.js";

/** @typedef {import("./delivery-list.js").MessageDeliveries} MessageDeliveries */
/** @typedef {{ id: number, state: string, kind: string, subpath: string | null, content_type: string, size?: number, received_at?: number, sender?: string | null, msg_id?: string | null, type?: string | null, attempts?: number, reason?: string | null, last_status?: number | null, replay_of?: number | null, target?: string, lane?: string, live?: true }} QueueItem */

/** @type {number | null} */
let selected = null;
/** The open message's state at the relay, as last read ("delivered": kept in the history). */
let selectedState = "";
/** @type {() => void} */
let afterAction = () => {};

export const selectedId = () => selected;

const WORDS = { delivered: "delivered", rejected: "to the dead shelf", retrying: "retrying" };

/** @param {MessageDeliveries | null} seen */
function seenHere(seen) {
  if (!seen) return undefined;
  const d = seen.latest;
  const tries = `${seen.attempts} attempt${seen.attempts === 1 ? "" : "s"}`;
  return `${WORDS[d.outcome]} at ${new Date(d.at).toLocaleTimeString()} (${tries}${d.status ? `, last answer ${d.status}` : ""})${d.detail ? `: ${d.detail}` : ""}`;
}

/** A new event of the open message: its "delivery here" line follows. @param {MessageDeliveries | null} seen */
export function updateSeen(seen) {
  const label = [...el("detail-meta").querySelectorAll("dt")].find((dt) => dt.textContent === "delivery here");
  if (label?.nextElementSibling && seen) label.nextElementSibling.textContent = seenHere(seen) ?? "";
}

/**
 * A list's row for message `m` (the queue's, the history's): marked while it is the one open, opening it on a click.
 * @param {QueueItem} m @param {"queue" | "history"} from the list it is in @param {HTMLElement[]} cells
 */
export function messageRow(m, from, cells) {
  const tr = document.createElement("tr");
  tr.dataset.id = String(m.id);
  tr.dataset.state = m.state;
  if (m.id === selected) tr.className = "selected";
  tr.append(...cells);
  tr.addEventListener("click", () => void openMessage(m.id, deliveriesOf(m.id), from));
  return tr;
}

/** @param {number} id @param {MessageDeliveries | null} seen what the Deliveries list knows of it @param {"deliveries" | "queue" | "history"} from the list clicked */
export async function openMessage(id, seen, from) {
  selected = id;
  for (const row of document.querySelectorAll("tbody tr[data-id]")) row.classList.toggle("selected", row instanceof HTMLElement && row.dataset.id === String(id));
  const panel = el("detail");
  panel.hidden = false;
  panel.dataset.beside = from;
  panel.scrollTop = 0;
  panel.focus({ preventScroll: true });
  setText("detail-id", String(id));
  setText("action-result", "");
  setText("detail-body", "loading…");
  const meta = el("detail-meta");
  /** @param {[string, string | number | null | undefined][]} fields */
  const showFields = (fields) => meta.replaceChildren(...fields.filter(([, v]) => v !== null && v !== undefined && v !== "").flatMap(([k, v]) => [cell("dt", k), cell("dd", String(v))]));
  showFields([["delivery here", seenHere(seen)]]);
  try {
    const shown = /** @type {{ message: QueueItem, body: string, encoding: "utf8" | "base64", headers: Record<string, string> | null, source: "relay" | "agent" }} */ (await api(`/inspector/api/messages/${id}`));
    if (selected !== id) return;
    const m = shown.message;
    selectedState = m.state;
    showFields([
      ["state", shown.source === "agent" ? "finished (the relay deleted it on ack; the agent kept this copy)" : m.state],
      ["delivery here", seenHere(seen)],
      ["lane", m.lane],
      ["kind", m.kind], ["sub-path", m.subpath], ["forwarded to", m.target ?? (seen?.latest.target ? `${seen.latest.method ?? "POST"} ${seen.latest.target}` : undefined)], ["content-type", m.content_type], ["size", m.size === undefined ? undefined : `${m.size} bytes`],
      ["received", m.received_at ? new Date(m.received_at).toLocaleString() : undefined], ["sender", m.sender], ["msg_id", m.msg_id], ["type", m.type],
      ["attempts reported", m.attempts || undefined], ["last status", m.last_status], ["reason", m.reason], ["replay of", m.replay_of],
    ]);
    const headers = /** @type {HTMLElement} */ (el("detail-headers").querySelector("tbody"));
    const entries = Object.entries(shown.headers ?? {});
    headers.replaceChildren(...(entries.length > 0 ? entries.map(([k, v]) => { const row = document.createElement("tr"); row.append(cell("td", k, "mono"), cell("td", v, "mono wrap")); return row; }) : [cell("tr", "none")]));
    setText("detail-encoding", shown.encoding === "base64" ? "(not UTF-8: hex dump)" : /json/i.test(m.content_type) ? "(JSON, formatted)" : "");
    setText("detail-body", shown.encoding === "base64" ? hexDump(shown.body) : pretty(shown.body));
    // A dead message, or one kept after delivery (history), may be queued again; never a live request's entry.
    /** @type {HTMLButtonElement} */ (el("replay")).disabled = !(shown.source === "relay" && (m.state === "dead" || m.state === "delivered") && !m.live);
    /** @type {HTMLButtonElement} */ (el("drop")).disabled = shown.source !== "relay";
    el("drop").textContent = "Drop";
  } catch (err) {
    if (selected === id) setText("detail-body", `could not be read: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function closeMessage() {
  el("detail").hidden = true;
  selected = null;
  for (const row of document.querySelectorAll("tbody tr.selected")) row.classList.remove("selected");
}

async function replay() {
  if (selected === null) return;
  try {
    const wasKept = selectedState === "delivered";
    const answer = /** @type {{ replayed: number, id: number }} */ (await api(`/inspector/api/messages/${selected}/replay`, { method: "POST" }));
    /** @type {HTMLButtonElement} */ (el("replay")).disabled = true;
    const beside = el("detail").dataset.beside;
    const from = beside === "deliveries" || beside === "history" ? beside : "queue";
    const opened = openMessage(answer.id, deliveriesOf(answer.id), from);
    setText("action-result", `queued again as message ${answer.id} (message ${answer.replayed} ${wasKept ? "stays kept in the history" : "is gone from the relay"}; this panel shows the new one)`);
    afterAction();
    await opened;
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
    afterAction();
  } catch (err) {
    setText("action-result", `drop refused: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** The panel's buttons; `changed` runs after a replay or a drop (the relay's list is asked again). @param {() => void} changed */
export function wireDetail(changed) {
  afterAction = changed;
  el("replay").addEventListener("click", () => void replay());
  el("drop").addEventListener("click", () => void drop());
  el("detail-close").addEventListener("click", closeMessage);
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape" && !el("detail").hidden) closeMessage();
  });
}
