// The graph view: a memory's or an entity's neighbourhood as hand-drawn SVG
// (typed, weighted edges; click or press Enter on a node to walk to it), and
// the strongest paths between two memories.

import {
  act, api, ApiError, clear, cut, empty, field, graphHref, h, inlineError, loading, memoryHref,
  num, pageHeader, say, select, svg, put,
} from "./ui.js";

const W = 960;
const H = 500;
const COLORS = {
  causes: "#c2410c", elaborates: "#1d4ed8", same_series: "#7c3aed", contrasts: "#b45309",
  temporal_next: "#047857", co_occurs: "#0e7490", episode: "#4d7c0f", related: "#475569",
  reference: "#6d28d9", contradiction: "#b91c1c", semantic_neighbor: "#64748b",
  mentions: "#94a3b8", "co-mentioned": "#94a3b8",
};
const color = (relation) => COLORS[relation] || "#475569";

/** #/graph?memory=ID | ?entity=NAME | ?a=ID&b=ID */
export async function renderGraph(root, { params }) {
  const memory = params.get("memory");
  const entity = params.get("entity");
  const kind = select([["memory", "Memory id"], ["entity", "Entity or topic name"]],
    entity ? "entity" : "memory");
  const start = h("input", { type: "text", value: memory || entity || "", required: true,
    placeholder: "a memory id, or a name like “Priya Raman”" });
  const a = h("input", { type: "text", value: params.get("a") || memory || "", required: true,
    class: "mono", placeholder: "memory id" });
  const b = h("input", { type: "text", value: params.get("b") || "", required: true,
    class: "mono", placeholder: "memory id" });
  const hops = select([1, 2, 3, 4, 5, 6], params.get("hops") || 3);
  const pathsBox = h("div", { class: "paths", "aria-live": "polite" });
  const findPaths = h("button", { type: "submit", class: "secondary" }, "Find paths");
  put(root,
    pageHeader("Graph", "How memories connect: links between memories, and the people, places "
      + "and topics they mention. Click a node to walk to it."),
    h("form", { class: "card row graph-start", method: "post", "aria-label": "Explore a neighbourhood",
      onsubmit: (event) => {
        event.preventDefault();
        const value = start.value.trim();
        if (value) location.hash = graphHref(kind.value, value);
      } },
    field("Start from", kind), field("Id or name", start),
    h("button", { type: "submit", class: "primary" }, "Show")));
  const view = h("section", { class: "card graph-card", "aria-labelledby": "graph-h" });
  put(root, view,
    h("section", { class: "card", "aria-labelledby": "paths-h" },
      h("h2", { id: "paths-h" }, "Paths between two memories"),
      h("form", { class: "row", method: "post", "aria-label": "Paths between two memories",
        onsubmit: (event) => {
          event.preventDefault();
          act(findPaths, () => showPaths(pathsBox, a.value.trim(), b.value.trim(), Number(hops.value)));
        } },
      field("From", a), field("To", b), field("Max hops", hops), findPaths),
      pathsBox));
  if (memory) await memoryGraph(view, memory);
  else if (entity) await entityGraph(view, entity);
  else await starters(view);
  if (params.get("a") && params.get("b")) {
    await showPaths(pathsBox, params.get("a"), params.get("b"), Number(hops.value));
  }
}

async function starters(view) {
  put(view, h("h2", { id: "graph-h" }, "Where to start"));
  put(view, loading());
  try {
    const page = await api("GET", "/v1/memories", { params: { scope: "all", limit: 8 } });
    view.lastChild.remove();
    if (!page.items.length) {
      put(view, empty("No memories yet.", "The graph grows as memories are written."));
      return;
    }
    put(view, h("p", { class: "muted" }, "Pick a recent memory, or type an entity name above."),
      h("ul", { class: "plain-list" }, page.items.map((m) => h("li", {},
        h("a", { href: graphHref("memory", m.id) }, cut(m.content, 140))))));
  } catch (err) {
    view.lastChild.remove();
    put(view, inlineError(err));
  }
}

async function memoryGraph(view, id) {
  put(view, loading("Loading the neighbourhood…"));
  let center;
  try {
    center = await api("GET", `/v1/memories/${encodeURIComponent(id)}`);
  } catch (err) {
    put(clear(view), h("h2", { id: "graph-h" }, "Memory not found"),
      err instanceof ApiError && err.status === 404
        ? empty("No memory with this id that you may read.") : inlineError(err));
    return;
  }
  const [links, entities] = await Promise.all([
    api("GET", "/v1/graph/neighbours", { params: { memory_id: id, limit: 16 } }),
    api("GET", `/v1/memories/${encodeURIComponent(id)}/entities`),
  ]);
  const nodes = [
    ...links.map((n) => ({
      kind: "memory", id: n.memory.id, label: n.memory.content, href: graphHref("memory", n.memory.id),
      relation: n.edge ? n.edge.relation : "related", weight: n.edge ? n.edge.weight : 0.5,
      forward: n.edge ? n.edge.src === id : true,
    })),
    ...entities.slice(0, 14).map((e) => ({
      kind: e.kind === "topic" ? "topic" : "entity", id: e.id, label: e.label,
      detail: e.entity_type, href: graphHref("entity", e.label), relation: "mentions", weight: 0.4,
    })),
  ];
  put(clear(view), 
    h("div", { class: "graph-head" },
      h("h2", { id: "graph-h" }, "Around a memory"),
      h("a", { href: memoryHref(id), class: "small" }, "Open the memory")),
    h("p", { class: "center-label" }, center.content),
    drawGraph({ label: center.content, kind: "memory" }, nodes),
    legend(nodes), textList(nodes));
  say(`${links.length} linked memories, ${entities.length} entities`);
}

async function entityGraph(view, name) {
  put(view, loading("Loading the neighbourhood…"));
  let found;
  try {
    found = await api("GET", `/v1/graph/entities/${encodeURIComponent(name)}`);
  } catch (err) {
    put(clear(view), h("h2", { id: "graph-h" }, "Entity not found"),
      err instanceof ApiError && err.status === 404
        ? empty(`No entity or topic “${name}” in the memories you may read.`) : inlineError(err));
    return;
  }
  const max = Math.max(1, ...found.related.map((r) => r.co_mentions));
  const nodes = [
    ...found.memories.slice(0, 12).map((m) => ({
      kind: "memory", id: m.id, label: m.content, href: graphHref("memory", m.id),
      relation: "mentions", weight: 0.5, forward: false,
    })),
    ...found.related.slice(0, 10).map((r) => ({
      kind: r.entity.kind === "topic" ? "topic" : "entity", id: r.entity.id, label: r.entity.label,
      detail: r.entity.entity_type, href: graphHref("entity", r.entity.label),
      relation: "co-mentioned", weight: r.co_mentions / max, count: r.co_mentions,
    })),
  ];
  const e = found.entity;
  put(clear(view), 
    h("div", { class: "graph-head" },
      h("h2", { id: "graph-h" }, `Around ${e.kind === "topic" ? "the topic" : "the entity"} “${e.label}”`),
      h("span", { class: "muted small" }, [e.entity_type, `${e.mentions} mention(s)`].filter(Boolean).join(" · "))),
    drawGraph({ label: e.label, kind: e.kind === "topic" ? "topic" : "entity" }, nodes),
    legend(nodes), textList(nodes));
  say(`${found.memories.length} memories mention ${e.label}`);
}

function boxWidth(text, max) {
  return Math.min(max, Math.max(60, text.length * 7.1 + 28));
}

/** The neighbourhood as SVG: the centre, the neighbours on an ellipse around it. */
function drawGraph(center, nodes) {
  const cx = W / 2;
  const cy = H / 2;
  const n = nodes.length;
  const edges = svg("g", { class: "edges" });
  const labels = svg("g", { class: "edge-labels" });
  const group = svg("g", { class: "nodes" });
  nodes.forEach((node, i) => {
    const angle = -Math.PI / 2 + (2 * Math.PI * i) / Math.max(n, 1);
    const rx = n > 10 ? 370 : 330;
    const ry = n > 10 ? 205 : 185;
    const x = cx + rx * Math.cos(angle);
    const y = cy + ry * Math.sin(angle);
    const stroke = color(node.relation);
    const dashed = node.relation === "mentions" || node.relation === "co-mentioned";
    put(edges, svg("line", { x1: cx, y1: cy, x2: x, y2: y, stroke,
      "stroke-width": (1.2 + 4 * node.weight).toFixed(2), "stroke-dasharray": dashed ? "5 4" : null,
      "stroke-linecap": "round", opacity: 0.85 }));
    if (!dashed || node.count) {
      const text = node.count ? `×${node.count}` : `${node.relation.replace("_", " ")} ${num(node.weight)}`;
      const lx = cx + (x - cx) * 0.5;
      const ly = cy + (y - cy) * 0.5;
      const w = text.length * 6.2 + 12;
      put(labels, svg("g", { class: "edge-label" },
        svg("rect", { x: lx - w / 2, y: ly - 9, width: w, height: 18, rx: 9, fill: "#fff", stroke }),
        svg("text", { x: lx, y: ly + 4, "text-anchor": "middle", fill: stroke }, text)));
    }
    const label = cut(node.label, node.kind === "memory" ? 30 : 24);
    const w = boxWidth(label, 230);
    const title = node.kind === "memory" ? node.label : `${node.label}${node.detail ? ` (${node.detail})` : ""}`;
    put(group, svg("a", { href: node.href, class: `node ${node.kind}`,
      "aria-label": `${node.kind}: ${cut(node.label, 80)} (${node.relation})` },
    svg("title", {}, title),
    svg("rect", { x: x - w / 2, y: y - 16, width: w, height: 32, rx: node.kind === "memory" ? 6 : 16 }),
    svg("text", { x, y: y + 4.5, "text-anchor": "middle" }, label)));
  });
  const label = cut(center.label, 34);
  const w = Math.min(320, label.length * 8.3 + 36);
  const middle = svg("g", { class: `node center ${center.kind}` },
    svg("title", {}, center.label),
    svg("rect", { x: cx - w / 2, y: cy - 22, width: w, height: 44, rx: center.kind === "memory" ? 8 : 22 }),
    svg("text", { x: cx, y: cy + 5, "text-anchor": "middle" }, label));
  const graph = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "graph", role: "group",
    "aria-label": `Graph around ${cut(center.label, 80)}: ${n} neighbours` },
  edges, labels, group, middle);
  if (!n) {
    put(graph, svg("text", { x: cx, y: cy + 60, "text-anchor": "middle", class: "graph-empty" },
      "No links or entities yet"));
  }
  return h("div", { class: "graph-wrap" }, graph);
}

function legend(nodes) {
  const relations = [...new Set(nodes.map((n) => n.relation))];
  if (!relations.length) return null;
  return h("ul", { class: "legend", "aria-label": "Edge types" },
    relations.map((r) => {
      const swatch = h("span", { class: r === "mentions" || r === "co-mentioned" ? "swatch dashed" : "swatch", "aria-hidden": "true" });
      swatch.style.borderColor = color(r);
      return h("li", {}, swatch, r.replace("_", " "));
    }),
    h("li", {}, h("span", { class: "swatch node-memory", "aria-hidden": "true" }), "memory"),
    h("li", {}, h("span", { class: "swatch node-entity", "aria-hidden": "true" }), "entity / topic"),
    h("li", { class: "muted" }, "thicker = heavier link"));
}

function textList(nodes) {
  if (!nodes.length) {
    return empty("Nothing connects here yet.", "Links appear as memories are reconciled, "
      + "ingested from conversations or linked through the API.");
  }
  return h("details", { class: "graph-list" },
    h("summary", {}, `Neighbours as a list (${nodes.length})`),
    h("ul", { class: "plain-list" }, nodes.map((n) => h("li", {},
      h("span", { class: "badge edge" }, n.count ? `co-mentioned ×${n.count}` : `${n.relation} ${num(n.weight)}`), " ",
      h("a", { href: n.href }, `${n.kind}: ${cut(n.label, 140)}`)))));
}

async function showPaths(box, a, b, hops) {
  put(clear(box), loading("Finding paths…"));
  let paths;
  try {
    paths = await api("GET", "/v1/graph/paths", { params: { a, b, max_hops: hops, limit: 5 } });
  } catch (err) {
    clear(box);
    throw err;
  }
  const ids = [...new Set(paths.flatMap((p) => p.nodes))];
  const got = await Promise.allSettled(ids.map((id) => api("GET", `/v1/memories/${encodeURIComponent(id)}`)));
  const text = Object.fromEntries(ids.map((id, i) => [id,
    got[i].status === "fulfilled" ? got[i].value.content : id]));
  put(clear(box), h("div", { class: "paths-result" },
    h("h2", { class: "h3" }, paths.length ? `${paths.length} path${paths.length === 1 ? "" : "s"} between the two memories` : "No path"),
    paths.length ? h("ol", { class: "path-list" }, paths.map((p) => h("li", {},
      h("p", { class: "muted small" }, `strength ${num(p.strength, 3)} · ${p.relations.length} hop(s)`),
      h("ol", { class: "path" }, p.nodes.map((id, i) => [
        h("li", { class: "path-node" }, h("a", { href: graphHref("memory", id) }, cut(text[id], 90))),
        i < p.relations.length ? h("li", { class: "path-hop", "aria-label": `${p.relations[i]} link` },
          p.forward[i] === false ? `← ${p.relations[i]}` : `${p.relations[i]} →`) : null,
      ])))))
      : empty("These memories are not connected within that many hops.")));
  say(paths.length ? `${paths.length} path(s) found` : "No path found");
}
