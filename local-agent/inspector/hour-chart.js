// @ts-check
// The inspector page's chart of the last hour: deliveries per minute as bars (failures red on top) and
// each minute's mean latency as a line, drawn as SVG. Imported by inspector.js; covered by
// test/node/inspector.browser.test.ts.
import { el, setText } from "./page-dom.js";
import { duration } from "./page-text.js";

/** @typedef {{ at: number, delivered: number, failed: number, latency_sum_ms: number, latency_max_ms: number }} MinuteFigures */

const NS = "http://www.w3.org/2000/svg";
const WIDTH = 600;
const HEIGHT = 120;

/** @param {string} tag @param {Record<string, string>} attributes */
function shape(tag, attributes) {
  const node = document.createElementNS(NS, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  return node;
}

/** @param {MinuteFigures[]} minutes oldest first */
export function renderChart(minutes) {
  const svg = el("chart");
  svg.replaceChildren();
  const slot = WIDTH / minutes.length;
  const most = Math.max(1, ...minutes.map((m) => m.delivered + m.failed));
  const means = minutes.map((m) => (m.delivered > 0 ? m.latency_sum_ms / m.delivered : null));
  const slowest = Math.max(1, ...means.map((m) => m ?? 0));
  minutes.forEach((m, i) => {
    const ok = (m.delivered / most) * (HEIGHT - 10);
    const bad = (m.failed / most) * (HEIGHT - 10);
    for (const [value, y, className] of /** @type {[number, number, string][]} */ ([[ok, HEIGHT - ok, "bar"], [bad, HEIGHT - ok - bad, "fail"]])) {
      if (value <= 0) continue;
      svg.append(shape("rect", { x: String(i * slot + 1), y: String(y), width: String(Math.max(1, slot - 2)), height: String(value), class: className }));
    }
  });
  const points = means.flatMap((mean, i) => (mean === null ? [] : [`${i * slot + slot / 2},${HEIGHT - 4 - (mean / slowest) * (HEIGHT - 14)}`]));
  for (const point of points) {
    const [cx, cy] = point.split(",");
    svg.append(shape("circle", { cx: cx ?? "0", cy: cy ?? "0", r: "2.5", class: "latency-dot" }));
  }
  if (points.length > 1) svg.append(shape("polyline", { points: points.join(" "), class: "latency" }));
  const total = minutes.reduce((n, m) => n + m.delivered, 0);
  setText("chart-scale", `${total} delivered in the last hour; tallest bar ${most}/min; slowest minute's mean latency ${duration(slowest === 1 && total === 0 ? 0 : slowest)}`);
}
