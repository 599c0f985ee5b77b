// The memory browser (search with score breakdowns, or a paged list, with
// filters) and a memory's detail page: provenance, history, related memories,
// entities, access log, and the corrections (edit, archive, restore, delete,
// feedback).

import {
  act, api, ApiError, badge, clear, confirmDialog, cut, empty, field, graphHref, h,
  inlineError, loading, memoryHref, num, pageHeader, say, select, showError, tagList, time, put,
} from "./ui.js";

const TYPES = ["episodic", "semantic", "procedural", "working"];
const LAYERS = ["personal", "shared", "organization"];
const STATUSES = ["active", "pending_review", "archived", "superseded"];
const PAGE_SIZE = 20;

/** The browser's state survives a visit to a detail page and back. */
const state = {
  q: "", scope: "all", layer: "", type: "", status: "", tags: "", after: "", before: "",
  sector: "", k: 10, minScore: "", cursor: null, previous: [],
};

function activeFilters() {
  return [state.scope !== "all", state.layer, state.type, state.status, state.tags, state.after,
    state.before, state.sector, state.minScore].filter(Boolean).length;
}

function scopeChoices(me) {
  const out = [`user:${me.user.id}`];
  for (const team of Object.keys(me.teams)) out.push(`team:${team}`);
  for (const p of me.personas) out.push(`persona:${p}`, `persona_user:${p}/${me.user.id}`);
  out.push(`org:${me.org.id}`);
  return out;
}

/** A local date (yyyy-mm-dd) as the ISO instant of its midnight. */
function dayStart(day) {
  return day ? new Date(`${day}T00:00:00`).toISOString() : undefined;
}

// -- shared pieces -----------------------------------------------------------------------

const LAYER_CLASS = { personal: "layer-personal", shared: "layer-shared", organization: "layer-org" };

/** Badges and facts for a memory in a list. */
export function metaLine(m) {
  return h("div", { class: "meta" },
    badge(m.layer, LAYER_CLASS[m.layer] || ""),
    h("span", { class: "mono small" }, m.scope),
    badge(m.memory_type),
    m.status !== "active" ? badge(m.status.replace("_", " "), `status-${m.status}`) : null,
    m.tags.map((t) => h("span", { class: "tag" }, `#${t}`)),
    h("span", { class: "muted small" }, "created ", time(m.created_at)),
    h("span", { class: "muted small" }, `confidence ${num(m.confidence)}`));
}

function meter(value, max = 1) {
  const fill = h("span", { class: "fill" });
  const v = Math.max(0, Math.min(1, (Number(value) || 0) / max));
  fill.style.width = `${(v * 100).toFixed(1)}%`;
  return h("span", { class: "meter", "aria-hidden": "true" }, fill);
}

/** The priority terms every hit has; the recall signals (``explain.signals``) sit
 * between the candidate scores and these, so a new signal shows here with no edit:
 * graph and layer boost always (as before there were signals), any other signal
 * when it added something to the hit. */
const HEAD = [["dense", "Dense"], ["keyword", "Keyword"]];
const TAIL = [
  ["relevance", "Relevance"], ["confidence", "Confidence"], ["temporal", "Temporal"],
  ["strength", "Strength"],
];
const ALWAYS = new Set(["graph", "layer"]);
const SIGNAL_LABELS = { layer: "Layer boost", persona: "Persona boost" };

function signalLabel(name) {
  const words = name.replace(/_/g, " ");
  return SIGNAL_LABELS[name] || words.charAt(0).toUpperCase() + words.slice(1);
}

/** [key, label, value] cells of one breakdown (an older server sends no ``signals``:
 * its graph and layer boost fields stand in). "Learned" is the learned model's raw
 * reading of the evidence (when it ran), "Relevance" the normalised relevance the
 * priority read; "Final" is the ranking value (the priority); "Score" the hit's
 * calibrated score (0-1, the same scale in every query). */
function cells(explain, score) {
  const signals = explain.signals || { graph: explain.graph, layer: explain.layer_boost };
  const shown = Object.entries(signals).filter(([name, value]) => ALWAYS.has(name) || value);
  const learned = explain.learned == null ? [] : [["learned", "Learned", explain.learned]];
  return [
    ...HEAD.map(([key, label]) => [key, label, explain[key]]),
    ...shown.map(([name, value]) => [name, signalLabel(name), value]),
    ...learned,
    ...TAIL.map(([key, label]) => [key, label, explain[key]]),
    ["final", "Final (priority)", explain.final],
    ["score", "Score (calibrated)", score],
  ];
}

/** A hit's score breakdown (recall with explain); ``scale`` sets a bar's full length
 * per part (keyword scores are raw BM25, so their bars are relative to the best hit;
 * the learned score's bars run from the lowest hit's, ``learnedLow``, over ``learnedSpan``). */
function breakdown(explain, score, scale = {}) {
  return h("dl", { class: "breakdown", "aria-label": "Score breakdown" },
    cells(explain, score).map(([key, label, value]) => h("div", {
      class: key === "final" ? "metric final" : "metric",
      dataset: { part: key },
    },
    h("dt", {}, label), h("dd", {}, h("span", { class: "value" }, num(value, 3)),
      key === "learned" ? meter(value - (scale.learnedLow || 0), scale.learnedSpan || 1)
        : meter(value, scale[key] || 1)))));
}

function hitCard(hit, scale) {
  const m = hit.memory;
  return h("li", { class: "card result", dataset: { id: m.id } },
    h("div", { class: "result-main" },
      h("a", { class: "result-title", href: memoryHref(m.id) }, cut(m.content, 300)),
      metaLine(m)),
    hit.explain ? breakdown(hit.explain, hit.score, scale)
      : h("div", { class: "score" }, h("span", { class: "muted small" }, "score"), num(hit.score, 3)));
}

function memoryCard(m) {
  return h("li", { class: "card result", dataset: { id: m.id } },
    h("div", { class: "result-main" },
      h("a", { class: "result-title", href: memoryHref(m.id) }, cut(m.content, 300)),
      metaLine(m)));
}

// -- the browser -------------------------------------------------------------------------

/** #/memories: search (recall with explain) or list, with filters. */
export async function renderMemories(root, { me }) {
  const q = h("input", { type: "search", name: "q", value: state.q,
    placeholder: "What do you want to find? e.g. “where does Alice keep her bike”" });
  const scope = h("input", { type: "text", value: state.scope === "all" ? "" : state.scope,
    list: "scope-choices", placeholder: "all I may read", class: "mono" });
  const layer = select([["", "any"], ...LAYERS], state.layer);
  const type = select([["", "any"], ...TYPES], state.type);
  const status = select([["", "default"], ...STATUSES.map((s) => [s, s.replace("_", " ")])],
    state.status);
  const tags = h("input", { type: "text", value: state.tags, placeholder: "e.g. travel, work" });
  const after = h("input", { type: "date", value: state.after });
  const before = h("input", { type: "date", value: state.before });
  const sector = select([["", "any"]], state.sector);
  const k = select([5, 10, 20, 50], state.k);
  const minScore = select([["", "server default"], ["0", "none"], ["0.1", "0.1"], ["0.2", "0.2"],
    ["0.3", "0.3"], ["0.5", "0.5"], ["0.7", "0.7"]], state.minScore);
  const results = h("section", { class: "results", "aria-label": "Results" });

  function read() {
    Object.assign(state, {
      q: q.value.trim(), scope: scope.value.trim() || "all", layer: layer.value, type: type.value,
      status: status.value, tags: tags.value, after: after.value, before: before.value,
      sector: sector.value, k: Number(k.value), minScore: minScore.value,
    });
  }

  const form = h("form", { class: "search card", role: "search", method: "post",
    onsubmit: (event) => {
      event.preventDefault();
      read();
      state.cursor = null;
      state.previous = [];
      load();
    } },
  h("div", { class: "search-row" },
    h("label", { for: "q", class: "visually-hidden" }, "Search memories"),
    Object.assign(q, { id: "q" }),
    h("button", { type: "submit", class: "primary" }, "Search"),
    h("button", { type: "button", class: "secondary", onclick: () => {
      q.value = "";
      read();
      state.cursor = null;
      state.previous = [];
      load();
    } }, "List all")),
  h("details", { class: "filters", open: activeFilters() > 0 },
    h("summary", {}, "Filters", activeFilters() ? ` (${activeFilters()} active)` : ""),
    h("div", { class: "filter-grid" },
      field("Scope", scope),
      field("Layer", layer), field("Type", type), field("Status", status),
      field("Tags (all of)", tags), field("Created after", after),
      field("Created before", before), field("Sector", sector), field("Results", k),
      field("Minimum score", minScore)),
    h("datalist", { id: "scope-choices" }, scopeChoices(me).map((s) => h("option", { value: s }))),
    h("div", { class: "row end" }, h("button", { type: "button", class: "ghost", onclick: () => {
      Object.assign(state, { scope: "all", layer: "", type: "", status: "", tags: "", after: "",
        before: "", sector: "", minScore: "" });
      for (const el of [scope, tags, after, before]) el.value = "";
      for (const el of [layer, type, status, sector, minScore]) el.value = "";
      say("Filters reset");
    } }, "Reset filters"))));

  put(root, pageHeader("Memories",
    "Search what your agents remember about you and your teams, or list it newest first."),
  form, results);

  api("GET", "/v1/sectors").then((sectors) => {
    for (const s of sectors) {
      put(sector, h("option", { value: s.id, selected: s.id === state.sector },
        `${s.name} (${s.size})`));
    }
    if (!sectors.length) sector.disabled = true;
  }).catch(() => { sector.disabled = true; });

  async function load(quiet = false) {
    put(clear(results), loading(state.q ? "Searching…" : "Loading memories…"));
    try {
      if (state.q) await search(results, quiet);
      else await list(results, quiet);
    } catch (err) {
      put(clear(results), inlineError(err));
      showError(err);
    }
  }
  await load(true);
}

function filters() {
  const f = {};
  if (state.type) f.types = [state.type];
  if (state.status) f.statuses = [state.status];
  const tags = tagList(state.tags);
  if (tags.length) f.tags_all = tags;
  if (state.after) f.created_after = dayStart(state.after);
  if (state.before) f.created_before = dayStart(state.before);
  return f;
}

async function search(results, quiet = false) {
  const f = filters();
  const body = {
    query: state.q, k: state.k, explain: true,
    scopes: state.scope === "all" ? "all" : [state.scope],
    layers: state.layer ? [state.layer] : undefined,
    sector: state.sector || undefined,
    filters: Object.keys(f).length ? f : undefined,
    min_score: state.minScore === "" ? undefined : Number(state.minScore),
  };
  const r = await api("POST", "/v1/recall", { body });
  clear(results);
  const total = r.timings_ms.total;
  put(results, h("div", { class: "results-head" },
    h("h2", {}, `${r.hits.length} result${r.hits.length === 1 ? "" : "s"} for “${state.q}”`),
    h("p", { class: "muted small" },
      total !== undefined ? `recall took ${num(total, 1)} ms` : "",
      r.candidates && Object.keys(r.candidates).length
        ? ` · candidates: ${Object.entries(r.candidates).map(([a, b]) => `${a} ${b}`).join(", ")}`
        : "",
      r.dropped_terms.length ? ` · ignored terms: ${r.dropped_terms.join(", ")}` : "")));
  if (!r.hits.length && r.abstained) {
    put(results, empty("No memory answers this.",
      "None of the hits reached the server's abstention threshold (retrieval.abstain_below)."));
  } else if (!r.hits.length) {
    put(results, empty("Nothing found.",
      "Try other words, widen the filters or lower the minimum score."));
  } else {
    const scale = { keyword: Math.max(1, ...r.hits.map((x) => (x.explain && x.explain.keyword) || 0)) };
    // the learned score is raw (any sign): its bars run from the lowest of these hits
    const learned = r.hits.map((x) => x.explain && x.explain.learned).filter((v) => v != null);
    if (learned.length) {
      scale.learnedLow = Math.min(...learned);
      scale.learnedSpan = Math.max(...learned) - scale.learnedLow || 1;
    }
    put(results, h("ol", { class: "result-list" }, r.hits.map((x) => hitCard(x, scale))));
  }
  if (!quiet) say(`${r.hits.length} result${r.hits.length === 1 ? "" : "s"}`);
}

async function list(results, quiet = false) {
  const page = await api("GET", "/v1/memories", { params: {
    scope: state.scope, layer: state.layer, type: state.type, status: state.status,
    tag: tagList(state.tags), created_after: dayStart(state.after),
    created_before: dayStart(state.before), sector_id: state.sector, limit: PAGE_SIZE,
    cursor: state.cursor,
  } });
  clear(results);
  const pageNo = state.previous.length + 1;
  put(results, h("div", { class: "results-head" },
    h("h2", {}, "Memories, newest first"),
    h("p", { class: "muted small" }, `page ${pageNo} · ${page.items.length} shown`)));
  if (!page.items.length) {
    put(results, empty(pageNo === 1 ? "No memories here yet." : "No more memories.",
      pageNo === 1 ? "Agents add memories through the API, the SDK or MCP; "
        + "widen the filters to see more." : ""));
  } else {
    put(results, h("ol", { class: "result-list" }, page.items.map(memoryCard)));
  }
  const prev = h("button", { type: "button", class: "secondary", disabled: !state.previous.length,
    onclick: async () => {
      state.cursor = state.previous.pop() ?? null;
      await act(prev, () => list(results));
    } }, "← Previous");
  const next = h("button", { type: "button", class: "secondary", disabled: !page.next_cursor,
    onclick: async () => {
      state.previous.push(state.cursor);
      state.cursor = page.next_cursor;
      await act(next, () => list(results));
    } }, "Next →");
  put(results, h("nav", { class: "pager", "aria-label": "Pages" }, prev,
    h("span", { class: "muted small" }, `Page ${pageNo}`), next));
  if (!quiet) say(`Page ${pageNo}: ${page.items.length} memories`);
}

// -- the detail page -------------------------------------------------------------------------

function dl(pairs) {
  return h("dl", { class: "facts" }, pairs.filter(Boolean).map(([k, v]) => [
    h("dt", {}, k), h("dd", {}, v === null || v === undefined || v === "" ? h("span", { class: "muted" }, "—") : v),
  ]));
}

function changeText(changes) {
  return Object.entries(changes || {}).map(([k, v]) => {
    if (Array.isArray(v) && v.length === 2) {
      return `${k}: ${cut(JSON.stringify(v[0]), 60)} → ${cut(JSON.stringify(v[1]), 60)}`;
    }
    return `${k}: ${cut(JSON.stringify(v), 80)}`;
  }).join("; ");
}

function historyTable(entries) {
  if (!entries.length) return empty("No history.");
  return h("div", { class: "table-wrap" }, h("table", { class: "table", id: "history" },
    h("caption", { class: "visually-hidden" }, "Changes to this memory, oldest first"),
    h("thead", {}, h("tr", {}, ["#", "Change", "By", "When", "Version", "Content or changes"]
      .map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, entries.map((e) => h("tr", {},
      h("td", {}, String(e.seq)), h("td", {}, badge(e.op, `op-${e.op}`)),
      h("td", {}, e.actor || "—"), h("td", {}, time(e.at)),
      h("td", {}, e.version ?? "—"),
      h("td", { class: "wrap" }, e.content ? h("div", {}, cut(e.content, 400)) : null,
        Object.keys(e.changes || {}).length
          ? h("div", { class: "muted small" }, changeText(e.changes)) : null))))));
}

function relatedList(neighbours) {
  if (!neighbours.length) return empty("No linked memories.", "Links come from reconcile, conversations and POST /v1/graph/links.");
  return h("ul", { class: "plain-list" }, neighbours.map((n) => h("li", {},
    n.edge ? badge(`${n.edge.relation} ${num(n.edge.weight)}`, "edge") : null, " ",
    h("a", { href: memoryHref(n.memory.id) }, cut(n.memory.content, 160)))));
}

function entityChips(entities) {
  if (!entities.length) return empty("No entities or topics found in this memory.");
  return h("ul", { class: "chips" }, entities.map((e) => h("li", {},
    h("a", { class: `chip ${e.kind}`, href: graphHref("entity", e.label),
      title: `${e.kind}${e.entity_type ? ` · ${e.entity_type}` : ""} · ${e.mentions} mention(s)` },
    e.label, e.entity_type ? h("span", { class: "chip-type" }, e.entity_type) : null))));
}

function accessTable(entries) {
  if (!entries.length) return empty("Not accessed yet.", "Recalls and reinforcements appear here.");
  return h("div", { class: "table-wrap" }, h("table", { class: "table" },
    h("thead", {}, h("tr", {}, ["When", "Access", "Query", "Strength"].map((c) => h("th", { scope: "col" }, c)))),
    h("tbody", {}, entries.slice().reverse().map((a) => h("tr", {},
      h("td", {}, time(a.at)), h("td", {}, a.access_type), h("td", { class: "wrap" }, a.query || "—"),
      h("td", {}, `${num(a.strength_before)} → ${num(a.strength_after)}`))))));
}

function notFound(root, id) {
  put(root, h("nav", { class: "crumbs" }, h("a", { href: "#/memories" }, "← Memories")),
    pageHeader("Memory not found"),
    h("div", { class: "card notice-card" },
      h("p", {}, "No memory ", h("code", {}, id), " exists that you may read."),
      h("p", { class: "muted" }, "It may have been deleted, or it belongs to someone else.")));
}

/** #/memory/ID: one memory with everything about it. */
export async function renderDetail(root, ctx) {
  const id = ctx.parts[1];
  put(root, loading());
  let m;
  try {
    m = await api("GET", `/v1/memories/${encodeURIComponent(id)}`);
  } catch (err) {
    clear(root);
    if (err instanceof ApiError && err.status === 404) {
      notFound(root, id);
      return;
    }
    throw err;
  }
  const path = `/v1/memories/${encodeURIComponent(id)}`;
  const [hist, related, ents, access] = await Promise.allSettled([
    api("GET", `${path}/history`),
    api("GET", "/v1/graph/neighbours", { params: { memory_id: id, limit: 20 } }),
    api("GET", `${path}/entities`),
    api("GET", `${path}/access-log`, { params: { limit: 50 } }),
  ]);
  clear(root);
  const refresh = () => ctx.rerender();
  const editor = h("div", { class: "editor", hidden: true });
  const editBtn = h("button", { type: "button", class: "primary", "aria-expanded": "false",
    onclick: () => {
      const open = editor.hidden;
      editor.hidden = !open;
      editBtn.setAttribute("aria-expanded", String(open));
      if (open) editForm(editor, m, refresh, () => { editor.hidden = true; editBtn.setAttribute("aria-expanded", "false"); });
    } }, "Edit");
  const post = (what, body) => api("POST", `${path}/${what}`, { body: body || {} });
  const archive = m.status === "archived" || m.status === "superseded"
    ? h("button", { type: "button", class: "secondary", onclick: (e) => act(e.currentTarget, async () => {
      await post("restore");
      say("Memory restored");
      await refresh();
    }) }, "Restore")
    : h("button", { type: "button", class: "secondary", disabled: m.status === "pending_review",
      onclick: (e) => act(e.currentTarget, async () => {
        await post("archive");
        say("Memory archived: it no longer appears in recall");
        await refresh();
      }) }, "Archive");
  const del = h("button", { type: "button", class: "danger", onclick: async () => {
    const ok = await confirmDialog({ title: "Delete this memory?", confirm: "Delete memory",
      danger: true, text: "It is removed from every index at once and cannot be restored. "
        + "The history keeps that it was deleted, and by whom, but not what it said." });
    if (!ok) return;
    await act(del, async () => {
      await api("DELETE", path);
      say("Memory deleted");
      location.hash = "#/memories";
    });
  } }, "Delete");
  const feedback = (kind, label, done) => h("button", { type: "button", class: "ghost",
    onclick: (e) => act(e.currentTarget, async () => {
      const after = await post("feedback", { kind });
      say(`${done}: confidence now ${num(after.confidence)}`);
      await refresh();
    }) }, label);

  put(root, 
    h("nav", { class: "crumbs" }, h("a", { href: "#/memories" }, "← Memories")),
    pageHeader("Memory", "", h("a", { class: "button secondary", href: graphHref("memory", m.id) }, "Show in graph")),
    h("article", { class: "card memory" },
      h("blockquote", { class: "content", id: "memory-content" }, m.content),
      metaLine(m),
      h("div", { class: "toolbar", role: "group", "aria-label": "Correct this memory" },
        editBtn, archive, del,
        h("span", { class: "divider", "aria-hidden": "true" }),
        h("span", { class: "muted small" }, "Feedback:"),
        feedback("upvote", "▲ Upvote", "Upvoted"), feedback("downvote", "▼ Downvote", "Downvoted"),
        feedback("validate", "✓ Validate", "Validated")),
      editor),
    h("div", { class: "two-col" },
      h("section", { class: "card", "aria-labelledby": "prov-h" },
        h("h2", { id: "prov-h" }, "Provenance"),
        dl([
          ["Scope", h("span", { class: "mono" }, m.scope)], ["Layer", m.layer],
          ["Source", m.source], ["Source channel", m.source_channel_id], ["Agent", m.agent_id],
          ["Session", m.session_id], ["Episode", m.episode_id], ["Created by", m.created_by],
          ["Created", time(m.created_at)], ["Updated", time(m.updated_at)],
          ["Event time", time(m.event_at)], ["Valid from", time(m.valid_from)],
          ["Valid until", time(m.valid_to)], ["Key", m.key],
          m.supersedes ? ["Supersedes", h("a", { href: memoryHref(m.supersedes) }, m.supersedes)] : null,
          m.superseded_by ? ["Superseded by", h("a", { href: memoryHref(m.superseded_by) }, m.superseded_by)] : null,
          ["Memory id", h("span", { class: "mono" }, m.id)],
        ])),
      h("section", { class: "card", "aria-labelledby": "state-h" },
        h("h2", { id: "state-h" }, "State"),
        dl([
          ["Status", m.status.replace("_", " ")], ["Type", m.memory_type],
          ["Version", String(m.version)], ["Confidence", num(m.confidence)],
          ["Importance", `${m.importance} of 5`], ["Strength", num(m.strength, 3)],
          ["Decay rate", num(m.decay_rate, 3)], ["Accesses", String(m.access_count)],
          ["Reinforcements", String(m.reinforcement_count)], ["Last accessed", time(m.last_accessed)],
          ["Sector", m.sector_id], ["Tags", m.tags.length ? m.tags.join(", ") : null],
          ["Metadata", Object.keys(m.metadata).length
            ? h("pre", { class: "json" }, JSON.stringify(m.metadata, null, 2)) : null],
        ]))),
    section("History", "history-h", hist, historyTable),
    h("div", { class: "two-col" },
      section("Related memories", "related-h", related, relatedList),
      section("Entities and topics", "entities-h", ents, entityChips)),
    section("Access log", "access-h", access, accessTable));
}

function section(title, id, settled, render) {
  return h("section", { class: "card", "aria-labelledby": id },
    h("h2", { id }, title),
    settled.status === "fulfilled" ? render(settled.value) : inlineError(settled.reason));
}

function editForm(box, m, refresh, close) {
  const content = h("textarea", { rows: 4, required: true }, m.content);
  const tags = h("input", { type: "text", value: m.tags.join(", ") });
  const type = select(TYPES, m.memory_type);
  const importance = select([1, 2, 3, 4, 5], m.importance);
  const confidence = h("input", { type: "number", min: 0, max: 1, step: 0.01, value: m.confidence });
  const problem = h("div", { class: "form-problem", role: "alert" });
  const save = h("button", { type: "submit", class: "primary" }, "Save changes");
  const form = h("form", { class: "stack", method: "post", onsubmit: async (event) => {
    event.preventDefault();
    problem.replaceChildren();
    const changes = {};
    if (content.value.trim() !== m.content) changes.content = content.value.trim();
    const newTags = tagList(tags.value);
    if (newTags.join(",") !== m.tags.join(",")) changes.tags = newTags;
    if (type.value !== m.memory_type) changes.memory_type = type.value;
    if (Number(importance.value) !== m.importance) changes.importance = Number(importance.value);
    if (Number(confidence.value) !== m.confidence) changes.confidence = Number(confidence.value);
    if (!Object.keys(changes).length) {
      say("Nothing changed");
      return;
    }
    save.disabled = true;
    try {
      const after = await api("PATCH", `/v1/memories/${encodeURIComponent(m.id)}`,
        { body: { ...changes, expected_version: m.version } });
      say(`Saved: version ${after.version}`);
      await refresh();
    } catch (err) {
      save.disabled = false;
      if (err instanceof ApiError && err.status === 409) {
        problem.replaceChildren(h("p", {}, h("strong", {}, "Not saved: someone changed this memory "
          + "since you opened it. "), err.message, ". Reload to see the current version, then "
          + "make your change again."),
        h("button", { type: "button", class: "secondary", onclick: refresh }, "Reload"));
      }
      showError(err);
    }
  } },
  field("Content", content),
  h("div", { class: "filter-grid" }, field("Tags", tags, "comma-separated"), field("Type", type),
    field("Importance", importance), field("Confidence", confidence)),
  problem,
  h("div", { class: "row" }, save,
    h("button", { type: "button", class: "ghost", onclick: close }, "Cancel"),
    h("span", { class: "muted small" }, `Editing version ${m.version}; a concurrent change is refused, not overwritten.`)));
  put(clear(box), h("h2", { class: "h3" }, "Edit memory"), form);
  content.focus();
}
