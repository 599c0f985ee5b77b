// Small hand-written SVG charts: stacked bars and lines, each in a <figure>
// with a caption, a legend and its data as a table (for screen readers and
// anyone who wants the numbers).

import { h, num, put, svg } from "./ui.js";

export const PALETTE = ["#2f5fd0", "#e07b24", "#2e9461", "#c23b50", "#7b56c2", "#0f8b9a",
  "#b08a12", "#6b7280", "#d45fa0", "#4b8f29"];

const NARROW = 560;
const WIDE = 1120;
const H = 280;
const M = { top: 14, right: 14, bottom: 48, left: 48 };

/** Round numbers for an axis from 0 to at least ``max``. */
function ticks(max, count = 5) {
  if (max <= 0) return [0, 1];
  const raw = max / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((f) => f * mag).find((s) => s >= raw) || raw;
  const out = [];
  for (let v = 0; v <= max + step * 0.999; v += step) out.push(Number(v.toFixed(6)));
  return out;
}

function fmt(v) {
  return Number.isInteger(v) ? String(v) : num(v, Math.abs(v) < 1 ? 2 : 1);
}

function legend(series) {
  if (series.length < 2) return null;
  return h("ul", { class: "legend" }, series.map((s, i) => {
    const sw = h("span", { class: "swatch fill", "aria-hidden": "true" });
    sw.style.background = s.color || PALETTE[i % PALETTE.length];
    return h("li", {}, sw, s.name);
  }));
}

function dataTable(caption, head, rows) {
  return h("details", { class: "chart-data" }, h("summary", {}, "Show the data"),
    h("div", { class: "table-wrap" }, h("table", { class: "table compact" },
      h("caption", { class: "visually-hidden" }, caption),
      h("thead", {}, h("tr", {}, head.map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, rows.map((r) => h("tr", {}, r.map((c, i) => i === 0
        ? h("th", { scope: "row" }, c) : h("td", {}, c))))))));
}

function frame(title, id, desc, chart, series, table) {
  return h("figure", { class: "card chart", id, "aria-labelledby": `${id}-title` },
    h("figcaption", { id: `${id}-title` }, h("span", { class: "chart-title" }, title),
      desc ? h("span", { class: "muted small" }, desc) : null),
    chart, legend(series), table);
}

function axes(plot, W, yTicks, yMax, yLabel) {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const g = svg("g", { class: "axis" });
  for (const t of yTicks) {
    const y = M.top + ph - (t / yMax) * ph;
    put(g, svg("line", { x1: M.left, x2: M.left + pw, y1: y, y2: y, class: "grid" }),
      svg("text", { x: M.left - 8, y: y + 4, "text-anchor": "end" }, fmt(t)));
  }
  if (yLabel) {
    put(g, svg("text", { x: 12, y: M.top + ph / 2, transform: `rotate(-90 12 ${M.top + ph / 2})`,
      "text-anchor": "middle", class: "axis-label" }, yLabel));
  }
  put(plot, g);
}

/**
 * Bars: ``categories`` along x, one stacked segment per series.
 * series: [{name, values: [number per category]}]
 */
export function barChart({ id, title, desc = "", categories, labels, series, yLabel = "", wide = false }) {
  const W = wide ? WIDE : NARROW;
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const totals = categories.map((_, i) => series.reduce((a, s) => a + (s.values[i] || 0), 0));
  const yTicks = ticks(Math.max(1, ...totals));
  const yMax = yTicks.at(-1);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img",
    "aria-label": `${title}. ${categories.length} bars; the data table below has the numbers.` });
  axes(chart, W, yTicks, yMax, yLabel);
  const band = pw / Math.max(categories.length, 1);
  const bw = Math.min(56, band * 0.66);
  const every = Math.ceil(categories.length / (wide ? 16 : 12));
  categories.forEach((cat, i) => {
    const x = M.left + band * i + (band - bw) / 2;
    let base = 0;
    series.forEach((s, j) => {
      const v = s.values[i] || 0;
      if (!v) return;
      const y0 = M.top + ph - ((base + v) / yMax) * ph;
      const height = (v / yMax) * ph;
      put(chart, svg("rect", { x, y: y0, width: bw, height: Math.max(height, 1), rx: 2,
        fill: s.color || PALETTE[j % PALETTE.length], class: "bar" },
      svg("title", {}, `${(labels || categories)[i]} · ${s.name}: ${fmt(v)}`)));
      base += v;
    });
    if (totals[i] && categories.length <= (wide ? 40 : 12)) {
      put(chart, svg("text", { x: x + bw / 2, y: M.top + ph - (totals[i] / yMax) * ph - 5,
        "text-anchor": "middle", class: "bar-total" }, fmt(totals[i])));
    }
    if (i % every === 0) {
      put(chart, svg("text", { x: x + bw / 2, y: H - M.bottom + 18, "text-anchor": "middle",
        class: "tick-label" }, (labels || categories)[i]));
    }
  });
  put(chart, svg("line", { x1: M.left, x2: M.left + pw, y1: M.top + ph, y2: M.top + ph,
    class: "baseline" }));
  const table = dataTable(title, ["", ...series.map((s) => s.name), "total"],
    categories.map((_, i) => [(labels || categories)[i], ...series.map((s) => fmt(s.values[i] || 0)),
      fmt(totals[i])]));
  return frame(title, id, desc, chart, series, table);
}

/** Lines: series: [{name, points: [[x, y], ...]}], x from 0. */
export function lineChart({ id, title, desc = "", series, xLabel = "", yLabel = "", yMax = 1 }) {
  const W = NARROW;
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const xMax = Math.max(1, ...series.flatMap((s) => s.points.map((p) => p[0])));
  const yTicks = ticks(yMax, 4);
  const top = yTicks.at(-1);
  const chart = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "chart-svg", role: "img",
    "aria-label": `${title}. ${series.length} lines; the data table below has the numbers.` });
  axes(chart, W, yTicks, top, yLabel);
  const X = (x) => M.left + (x / xMax) * pw;
  const Y = (y) => M.top + ph - (y / top) * ph;
  for (const t of ticks(xMax, 6)) {
    if (t > xMax) continue;
    put(chart, svg("text", { x: X(t), y: H - M.bottom + 18, "text-anchor": "middle",
      class: "tick-label" }, fmt(t)));
  }
  if (xLabel) {
    put(chart, svg("text", { x: M.left + pw / 2, y: H - 8, "text-anchor": "middle",
      class: "axis-label" }, xLabel));
  }
  series.forEach((s, i) => {
    const c = s.color || PALETTE[i % PALETTE.length];
    const d = s.points.map((p, k) => `${k ? "L" : "M"}${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(" ");
    put(chart, svg("path", { d, fill: "none", stroke: c, "stroke-width": 2.2,
      "stroke-linejoin": "round", "stroke-dasharray": s.dashed ? "6 4" : null, class: "line" },
    svg("title", {}, s.name)));
  });
  put(chart, svg("line", { x1: M.left, x2: M.left + pw, y1: M.top + ph, y2: M.top + ph,
    class: "baseline" }));
  const xs = series[0] ? series[0].points.map((p) => p[0]) : [];
  const table = dataTable(title, [xLabel || "x", ...series.map((s) => s.name)],
    xs.map((x, k) => [fmt(x), ...series.map((s) => num(s.points[k] ? s.points[k][1] : null, 3))]));
  return frame(title, id, desc, chart, series, table);
}
