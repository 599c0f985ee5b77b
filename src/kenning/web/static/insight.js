// Insight: seed 000's per-layer statistics with plots, strength decay curves,
// recall traffic, and (for admins) the audit log.

import { barChart, lineChart, PALETTE } from "./charts.js";
import {
  act, api, clear, cut, empty, field, h, inlineError, isAdmin, loading, num, pageHeader, say,
  select, time, put,
} from "./ui.js";

const LAYERS = ["personal", "shared", "organization"];
const TYPES = ["episodic", "semantic", "procedural", "working"];
const LEVELS = ["very_low", "low", "medium", "high", "very_high"];
const AGES = ["<1d", "<7d", "<30d", "<365d"];

function ordered(known, present) {
  return [...known.filter((k) => present.has(k)), ...[...present].filter((k) => !known.includes(k)).sort()];
}

const AGE_LABELS = { "<1d": "under a day", "<7d": "under a week", "<30d": "under a month",
  "<365d": "under a year", ">=365d": "a year or more" };

/** #/insight */
export async function renderInsight(root, { me }) {
  put(root, pageHeader("Insight",
    "What the memories you may read look like: per layer, by type, confidence and age; how "
    + "strength fades without use; how often memories are recalled."));
  const table = h("div", {}, loading("Loading statistics…"));
  const slots = { types: h("div"), confidence: h("div"), age: h("div"), curves: h("div") };
  const grid = h("div", { class: "chart-grid" }, Object.values(slots));
  const trafficBox = h("div", { class: "chart-wide" });
  put(root, table, grid, trafficBox);
  const audit = isAdmin(me) ? h("section", { class: "card", "aria-labelledby": "audit-h" }) : null;
  if (audit) put(root, audit);
  await Promise.all([
    stats(table, slots), curves(slots.curves), traffic(trafficBox, 30),
    audit ? auditLog(audit) : null,
  ]);
}

async function stats(box, slots) {
  let layers;
  try {
    layers = await api("GET", "/v1/stats");
  } catch (err) {
    put(clear(box), inlineError(err));
    return;
  }
  clear(box);
  const total = layers.reduce((a, s) => a + s.total_memories, 0);
  const byLayer = Object.fromEntries(layers.map((s) => [s.layer, s]));
  const present = ordered(LAYERS, new Set(layers.map((s) => s.layer)));
  put(box, h("section", { class: "card", "aria-labelledby": "layers-h" },
    h("h2", { id: "layers-h" }, `Per layer: ${total} memories`),
    total === 0 ? empty("No memories yet.", "Statistics appear once memories are written.")
      : h("div", { class: "table-wrap" }, h("table", { class: "table", id: "layer-stats" },
        h("thead", {}, h("tr", {}, ["Layer", "Memories", "By status", "Avg. confidence",
          "Entities", "Relationships"].map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, present.map((l) => {
          const s = byLayer[l];
          return h("tr", {}, h("th", { scope: "row" }, l), h("td", { class: "num" }, String(s.total_memories)),
            h("td", {}, Object.entries(s.by_status).map(([k, v]) => `${k.replace("_", " ")} ${v}`).join(" · ")),
            h("td", { class: "num" }, num(s.avg_confidence)), h("td", { class: "num" }, String(s.entities_count)),
            h("td", { class: "num" }, String(s.relationships_count)));
        }))))));
  if (total === 0) {
    for (const name of ["types", "confidence", "age"]) slots[name].remove();
    return;
  }
  const types = ordered(TYPES, new Set(layers.flatMap((s) => Object.keys(s.by_type))));
  const levels = ordered(LEVELS, new Set(layers.flatMap((s) => Object.keys(s.confidence_distribution))));
  const ages = ordered(AGES, new Set(layers.flatMap((s) => Object.keys(s.age_distribution))));
  const perLayer = (key, cats) => present.map((l) => ({
    name: l, color: PALETTE[LAYERS.indexOf(l)], values: cats.map((c) => byLayer[l][key][c] || 0) }));
  put(slots.types, barChart({ id: "chart-types", title: "Memories by layer and type",
    categories: present, desc: "stacked by memory type",
    series: types.map((t, i) => ({ name: t, color: PALETTE[(i + 4) % PALETTE.length],
      values: present.map((l) => byLayer[l].by_type[t] || 0) })), yLabel: "memories" }));
  put(slots.confidence, barChart({ id: "chart-confidence", title: "Confidence distribution",
    categories: levels, labels: levels.map((l) => l.replace("_", " ")),
    series: perLayer("confidence_distribution", levels), yLabel: "memories",
    desc: "very low < 0.4 ≤ low < 0.6 ≤ medium < 0.75 ≤ high < 0.9 ≤ very high" }));
  put(slots.age, barChart({ id: "chart-age", title: "Age distribution", categories: ages,
    labels: ages.map((a) => AGE_LABELS[a] || a), series: perLayer("age_distribution", ages),
    yLabel: "memories", desc: "time since each memory was created" }));
}

async function curves(box) {
  put(box, loading());
  try {
    const data = await api("GET", "/v1/insight/strength-curves", { params: { days: 180, points: 37 } });
    const series = Object.entries(data).map(([name, points], i) => ({
      name, points, color: PALETTE[i % PALETTE.length], dashed: name.includes(","),
    }));
    put(clear(box), lineChart({ id: "chart-curves", title: "Strength decay without use",
      desc: "strength of a memory never recalled, per type (dashed: semantic at importance 1 and 4; importance 5 never fades)",
      series, xLabel: "days without use", yLabel: "strength", yMax: 1 }));
  } catch (err) {
    put(clear(box), inlineError(err));
  }
}

async function traffic(box, days) {
  put(clear(box), loading());
  let rows;
  try {
    rows = await api("GET", "/v1/insight/traffic", { params: { days } });
  } catch (err) {
    put(clear(box), inlineError(err));
    return;
  }
  const kinds = [...new Set(rows.flatMap((r) => Object.keys(r).filter((k) => k !== "day")))].sort();
  const fmt = new Intl.DateTimeFormat(undefined, { month: "short", day: "numeric", timeZone: "UTC" });
  const chooser = select([[7, "7 days"], [30, "30 days"], [90, "90 days"]], days, {
    onchange: () => traffic(box, Number(chooser.value)) });
  const series = kinds.length ? kinds.map((k, i) => ({ name: k.replace("_", " "), color: PALETTE[i],
    values: rows.map((r) => r[k] || 0) })) : [{ name: "accesses", values: rows.map(() => 0) }];
  const chart = barChart({ id: "chart-traffic", title: "Recall traffic", wide: true,
    desc: `accesses per day to the memories you may read, last ${days} days`,
    categories: rows.map((r) => r.day), labels: rows.map((r) => fmt.format(new Date(`${r.day}T00:00:00Z`))),
    series, yLabel: "accesses" });
  put(chart.querySelector("figcaption"), h("div", { class: "field inline" },
    h("label", { for: "traffic-days" }, "Period"), Object.assign(chooser, { id: "traffic-days" })));
  put(clear(box), chart);
}

// -- the audit log (admins) -------------------------------------------------------------------

async function auditLog(section) {
  const user = h("input", { type: "text", placeholder: "any user" });
  const action = h("input", { type: "text", placeholder: "e.g. memory. or admin." });
  const body = h("div", {});
  const filter = h("button", { type: "submit", class: "secondary" }, "Filter");
  const load = async (before) => {
    const lines = await api("GET", "/v1/admin/audit", { params: {
      user: user.value.trim(), action: action.value.trim(), before_seq: before, limit: 25 } });
    clear(body);
    if (!lines.length) {
      put(body, empty(before ? "No older entries." : "No audit entries match."));
    } else {
      put(body, h("div", { class: "table-wrap" }, h("table", { class: "table compact", id: "audit-table" },
        h("thead", {}, h("tr", {}, ["#", "When", "Who", "Action", "Target", "Outcome", "Request"]
          .map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, lines.map((a) => h("tr", {},
          h("td", { class: "num" }, String(a.seq)), h("td", {}, time(a.at)), h("td", {}, a.actor),
          h("td", { class: "mono" }, a.action), h("td", { class: "mono wrap" }, cut(a.target || "—", 40)),
          h("td", {}, h("span", { class: `badge outcome-${a.outcome}` }, a.outcome)),
          h("td", { class: "mono small" }, cut(a.request_id || "—", 12))))))));
    }
    const newest = h("button", { type: "button", class: "secondary", disabled: !before,
      onclick: () => act(newest, () => load(undefined)) }, "Newest");
    const older = h("button", { type: "button", class: "secondary", disabled: lines.length < 25,
      onclick: () => act(older, () => load(lines.at(-1).seq)) },
    "Older →");
    put(body, h("nav", { class: "pager", "aria-label": "Audit pages" }, newest,
      h("span", { class: "muted small" }, lines.length ? `#${lines[0].seq} – #${lines.at(-1).seq}` : ""), older));
  };
  put(section, h("h2", { id: "audit-h" }, "Audit log"),
    h("p", { class: "muted" }, "Every write, every admin read and every directory change, newest first."),
    h("form", { class: "row filters-inline", method: "post", onsubmit: (event) => {
      event.preventDefault();
      act(filter, async () => {
        await load(undefined);
        say("Audit log filtered");
      });
    } }, field("User", user), field("Action starts with", action), filter),
    body);
  put(body, loading());
  try {
    await load(undefined);
  } catch (err) {
    put(clear(body), inlineError(err));
  }
}
