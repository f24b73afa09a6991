// @ts-check
// The inspector's History: what the relay kept (delivered messages for the inbox's retention window, and
// those still queued, sent or dead), searched by a text in body, headers or path and filtered by state and
// source, through the agent (/inspector/api/history, which asks the relay's GET /inbox/{id}/history). A
// page at a time in id order; "Load more" follows the relay's cursor. Each row opens the message's detail.
// A match's excerpt is the sender's text: only ever set as text. Imported by inspector.js; covered by
// test/node/inspector-history.browser.test.ts.
import { messageRow } from "./message-detail.js";
import { api, cell, clippedCell, el, reasonCell } from "./page-dom.js";
import { ago, clock, oneLine } from "./page-text.js";

/** @typedef {import("./message-detail.js").QueueItem & { delivered_at?: number | null, source?: string | null, excerpt?: string, live?: true }} HistoryItem */
/** @typedef {{ messages: HistoryItem[], next_cursor: string | null, gap: { reason: string, oldest_kept: string | null } | null, scanned: number }} HistoryPage */

/** Where the next "Load more" starts; null: nothing more was kept when the last page was read. */
/** @type {string | null} */
let nextCursor = null;
/** The query the rows shown answer (a "Load more" continues it, not what the form holds now). */
let shownQuery = "";

function query() {
  const params = new URLSearchParams();
  params.set("state", /** @type {HTMLSelectElement} */ (el("history-state")).value);
  const search = /** @type {HTMLInputElement} */ (el("history-search")).value.trim();
  if (search) params.set("search", search);
  const source = /** @type {HTMLInputElement} */ (el("history-source")).value.trim();
  if (source) params.set("source", source);
  return params.toString();
}

/** @param {HistoryItem} m */
function where(m) {
  if (m.live) return `(live) ${m.subpath ?? ""}`;
  if (m.source) return `source:${m.source}${m.subpath ? ` ${m.subpath}` : ""}`;
  return m.subpath ?? `(envelope ${m.type ?? "?"})`;
}

/** @param {HistoryItem} m */
function row(m) {
  return messageRow(m, "history", [
    cell("td", String(m.id), "mono"),
    cell("td", m.state, m.state === "dead" ? "status-bad" : m.state === "delivered" ? "status-ok" : ""),
    clippedCell(where(m), "mono clip"),
    cell("td", m.sender ?? "—", "mono"),
    cell("td", `${m.size ?? 0} B`),
    cell("td", m.received_at ? ago(clock.now() - m.received_at) : ""),
    reasonCell(oneLine(m.excerpt ?? ""), m.excerpt ?? "", "excerpt mono"),
  ]);
}

/** Reads a page: the first of a new search (`more` false), or the next of the one shown. @param {boolean} more */
async function load(more) {
  const body = /** @type {HTMLElement} */ (el("history").querySelector("tbody"));
  const note = /** @type {HTMLElement} */ (el("history").querySelector(".empty"));
  const button = /** @type {HTMLButtonElement} */ (el("history-more"));
  if (!more) shownQuery = query();
  const cursor = more && nextCursor !== null ? `&cursor=${encodeURIComponent(nextCursor)}` : "";
  button.disabled = true;
  try {
    const page = /** @type {HistoryPage} */ (await api(`/inspector/api/history?${shownQuery}${cursor}`));
    const rows = page.messages.map(row);
    if (more) body.append(...rows);
    else body.replaceChildren(...rows);
    nextCursor = page.next_cursor;
    const count = body.querySelectorAll("tr").length;
    note.hidden = count > 0 && !page.gap;
    note.textContent = count === 0 ? "Nothing kept matches." : page.gap ? "Older messages are past the retention window: listed from the oldest kept." : "";
  } catch (err) {
    if (!more) body.replaceChildren();
    nextCursor = null;
    note.hidden = false;
    note.textContent = `History could not be read: ${err instanceof Error ? err.message : String(err)}`;
  } finally {
    button.hidden = nextCursor === null;
    button.disabled = false;
  }
}

/** The form's search and the "Load more" button; the first page is read at once. */
export function wireHistory() {
  el("history-form").addEventListener("submit", (e) => {
    e.preventDefault();
    void load(false);
  });
  el("history-state").addEventListener("change", () => void load(false));
  el("history-more").addEventListener("click", () => void load(true));
  void load(false);
}
