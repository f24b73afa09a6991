// @ts-check
// The inspector page's small DOM and API helpers: find an element, set text (never markup: bodies and
// reasons are the outside world's), make a cell, call the agent's inspector API with the token the page
// was served with. Imported by the page's modules; covered by test/node/inspector.browser.test.ts.

const TOKEN = /** @type {HTMLMetaElement} */ (document.querySelector('meta[name="clawrelay-token"]')).content;

/** @param {string} id */
export function el(id) {
  const found = document.getElementById(id);
  if (!found) throw new Error(`no #${id}`);
  return found;
}

/** @param {string} id @param {string} text */
export function setText(id, text) {
  el(id).textContent = text;
}

/** @param {string} tag @param {string} text @param {string} [className] */
export function cell(tag, text, className) {
  const node = document.createElement(tag);
  node.textContent = text;
  if (className) node.className = className;
  return node;
}

/** A cell whose text the style may clip (class "clip"), all of it in its tooltip. @param {string} text @param {string} className */
export function clippedCell(text, className) {
  const node = cell("td", text, className);
  node.title = text;
  return node;
}

/** A cell showing `text` cut to one line, the whole of it in its tooltip. @param {string} short @param {string} full @param {string} className */
export function reasonCell(short, full, className) {
  const node = cell("td", short, `reason ${className}`);
  if (full) node.title = full;
  return node;
}

/** @param {string} path @param {RequestInit} [init] */
export async function api(path, init = {}) {
  const res = await fetch(path, { ...init, headers: { "x-clawrelay-inspector-token": TOKEN } });
  const body = await res.json();
  // The local API's failures are {error: {code, message}} (api/api-app.ts).
  if (!res.ok) throw new Error(body.error?.message ?? `${res.status}`);
  return body;
}

/** The event stream's address: an EventSource cannot send a header, so the token rides in the query. */
export const eventsUrl = () => `/inspector/events?token=${encodeURIComponent(TOKEN)}`;
