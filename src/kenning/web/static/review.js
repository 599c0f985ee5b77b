// The review queue: pending memories for admins, team leads and persona leads;
// approve (optionally edited), reject with a reason, or many at once.

import {
  act, api, badge, canReview, clear, cut, empty, field, h, loading, memoryHref, pageHeader,
  say, showError, tagList, time, put,
} from "./ui.js";

const PAGE_SIZE = 25;

/** #/review */
export async function renderReview(root, { me }) {
  put(root, pageHeader("Review queue",
    "New memories wait here when review is on for their team, persona or the organization. "
    + "Approving makes them recallable; rejecting deletes them (the audit log keeps your reason)."));
  if (!canReview(me)) {
    put(root, h("p", { class: "notice" }, "Team, persona and organization reviews are for "
      + "admins and leads; you see the pending memories of your own personal scopes."));
  }
  const list = h("div", { class: "review" });
  put(root, list);
  await loadPage(list, { cursor: null, previous: [] });
}

async function loadPage(box, pager) {
  put(clear(box), loading("Loading the queue…"));
  let page;
  try {
    page = await api("GET", "/v1/review", { params: { limit: PAGE_SIZE, cursor: pager.cursor } });
  } catch (err) {
    clear(box);
    showError(err);
    return;
  }
  clear(box);
  if (!page.items.length && !pager.previous.length) {
    put(box, empty("Nothing waits for review.", "Pending memories you may review appear here."));
    return;
  }
  const rows = new Map();
  const selected = () => [...rows.entries()].filter(([, r]) => r.check.checked).map(([id]) => id);
  const count = h("span", { class: "muted small", "aria-live": "polite" }, "0 selected");
  const update = () => {
    const n = selected().length;
    count.textContent = `${n} selected`;
    approveAll.disabled = rejectAll.disabled = n === 0;
    all.checked = n > 0 && n === rows.size;
    all.indeterminate = n > 0 && n < rows.size;
  };
  const all = h("input", { type: "checkbox", id: "select-all", onchange: () => {
    for (const r of rows.values()) r.check.checked = all.checked;
    update();
  } });
  const reason = h("input", { type: "text", id: "bulk-reason", placeholder: "optional" });
  const bulk = async (button, action) => {
    const ids = selected();
    await act(button, async () => {
      const r = await api("POST", "/v1/review/bulk", { body: {
        ids, action, reason: action === "reject" ? reason.value.trim() || undefined : undefined } });
      const done = Object.keys(r.done);
      const failed = Object.entries(r.failed);
      for (const id of done) {
        rows.get(id)?.item.remove();
        rows.delete(id);
      }
      update();
      say(`${done.length} ${action === "approve" ? "approved" : "rejected"}`
        + (failed.length ? `, ${failed.length} failed` : ""));
      if (failed.length) {
        showError(new Error(failed.map(([id, why]) => `${id}: ${why}`).join("; ")));
      }
      if (!rows.size) await loadPage(box, { cursor: null, previous: [] });
    });
  };
  const approveAll = h("button", { type: "button", class: "primary", disabled: true,
    onclick: () => bulk(approveAll, "approve") }, "Approve selected");
  const rejectAll = h("button", { type: "button", class: "danger", disabled: true,
    onclick: () => bulk(rejectAll, "reject") }, "Reject selected");
  put(box, h("div", { class: "card bulkbar", role: "group", "aria-label": "Bulk actions" },
    field("Select all on this page", all), count, approveAll,
    h("div", { class: "field inline" }, h("label", { for: "bulk-reason" }, "Reason"), reason),
    rejectAll));
  const ul = h("ul", { class: "review-list" });
  for (const m of page.items) {
    const row = reviewItem(m, () => {
      rows.delete(m.id);
      update();
    }, update);
    rows.set(m.id, row);
    put(ul, row.item);
  }
  put(box, ul);
  const prev = h("button", { type: "button", class: "secondary", disabled: !pager.previous.length,
    onclick: () => loadPage(box, { cursor: pager.previous.at(-1), previous: pager.previous.slice(0, -1) }) },
  "← Previous");
  const next = h("button", { type: "button", class: "secondary", disabled: !page.next_cursor,
    onclick: () => loadPage(box, { cursor: page.next_cursor, previous: [...pager.previous, pager.cursor] }) },
  "Next →");
  put(box, h("nav", { class: "pager", "aria-label": "Pages" }, prev,
    h("span", { class: "muted small" }, `Page ${pager.previous.length + 1}`), next));
}

function reviewItem(m, gone, changed) {
  const check = h("input", { type: "checkbox", id: `sel-${m.id}`, onchange: changed });
  const panel = h("div", { class: "review-panel", hidden: true });
  const done = (text) => {
    say(text);
    item.remove();
    gone();
  };
  const approve = h("button", { type: "button", class: "primary", onclick: () => act(approve, async () => {
    await api("POST", `/v1/review/${encodeURIComponent(m.id)}/approve`, { body: {} });
    done("Approved: the memory is now active");
  }) }, "Approve");
  const edit = h("button", { type: "button", class: "secondary", onclick: () => {
    const content = h("textarea", { rows: 3 }, m.content);
    const tags = h("input", { type: "text", value: m.tags.join(", ") });
    const go = h("button", { type: "submit", class: "primary" }, "Approve with edits");
    panel.hidden = false;
    put(clear(panel), h("form", { class: "stack", method: "post", onsubmit: (event) => {
      event.preventDefault();
      act(go, async () => {
        const changes = {};
        if (content.value.trim() !== m.content) changes.content = content.value.trim();
        const t = tagList(tags.value);
        if (t.join(",") !== m.tags.join(",")) changes.tags = t;
        await api("POST", `/v1/review/${encodeURIComponent(m.id)}/approve`,
          { body: Object.keys(changes).length ? { changes } : {} });
        done("Approved with edits");
      });
    } }, field("Content", content), field("Tags", tags, "comma-separated"),
    h("div", { class: "row" }, go, h("button", { type: "button", class: "ghost",
      onclick: () => { panel.hidden = true; } }, "Cancel"))));
    content.focus();
  } }, "Edit and approve");
  const reject = h("button", { type: "button", class: "danger", onclick: () => {
    const why = h("input", { type: "text", placeholder: "e.g. duplicate, not agreed, wrong" });
    const go = h("button", { type: "submit", class: "danger" }, "Reject memory");
    panel.hidden = false;
    put(clear(panel), h("form", { class: "stack", method: "post", onsubmit: (event) => {
      event.preventDefault();
      act(go, async () => {
        await api("POST", `/v1/review/${encodeURIComponent(m.id)}/reject`,
          { body: { reason: why.value.trim() || undefined } });
        done("Rejected: the memory was deleted");
      });
    } }, field("Reason for rejecting", why, "Kept in the audit log; the memory is deleted."),
    h("div", { class: "row" }, go, h("button", { type: "button", class: "ghost",
      onclick: () => { panel.hidden = true; } }, "Cancel"))));
    why.focus();
  } }, "Reject");
  const item = h("li", { class: "card review-item", dataset: { id: m.id } },
    h("div", { class: "review-check" }, check,
      h("label", { for: check.id, class: "visually-hidden" }, `Select “${cut(m.content, 60)}”`)),
    h("div", { class: "review-body" },
      h("p", { class: "content" }, m.content),
      h("div", { class: "meta" },
        badge(m.layer), h("span", { class: "mono small" }, m.scope), badge(m.memory_type),
        m.tags.map((t) => h("span", { class: "tag" }, `#${t}`))),
      h("p", { class: "muted small" }, "by ", h("strong", {}, m.created_by || "unknown"),
        " via ", m.source, m.agent_id ? ` · agent ${m.agent_id}` : "",
        m.session_id ? ` · session ${m.session_id}` : "", " · ", time(m.created_at), " · ",
        h("a", { href: memoryHref(m.id) }, "details")),
      h("div", { class: "row" }, approve, edit, reject),
      panel));
  return { item, check };
}
