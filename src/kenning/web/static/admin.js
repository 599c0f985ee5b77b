// Admin (organization admins only; the API enforces it, this page only hides
// itself): organization settings and switches, users (export, erase), teams and
// members, personas and grants, API keys.

import {
  act, api, ApiError, badge, clear, confirmDialog, empty, field, h, inlineError, isAdmin,
  loading, pageHeader, say, secretDialog, select, session, time, put,
} from "./ui.js";

const TABS = [
  ["org", "Organization"], ["users", "Users"], ["teams", "Teams"], ["personas", "Personas"],
  ["keys", "API keys"],
];
const ROLES = ["member", "team_lead", "admin"];
const TEAM_ROLES = ["reader", "member", "lead"];
const MODES = [
  ["org", "org: personal, team and organization memory"],
  ["org_no_global", "org_no_global: personal and team memory, no organization layer"],
  ["personal", "personal: each user's own memory only"],
];

const slug = (v) => v.trim();

/** #/admin/TAB */
export async function renderAdmin(root, ctx) {
  const tab = ctx.parts[1] || "org";
  put(root, pageHeader("Admin", "Your organization's settings, people, teams, personas and keys."));
  if (!isAdmin(ctx.me)) {
    put(root, h("div", { class: "card notice-card", id: "not-allowed" },
      h("p", {}, h("strong", {}, "Not allowed. "), "The admin pages are for organization admins."),
      h("p", { class: "muted" }, "Ask an admin of ", ctx.me.org.name, " if you need a change.")));
    return;
  }
  put(root, h("nav", { class: "tabs", "aria-label": "Admin sections" }, h("ul", {},
    TABS.map(([id, label]) => h("li", {}, h("a", { href: `#/admin/${id}`,
      "aria-current": id === tab ? "page" : null }, label))))));
  const body = h("div", { class: "admin-body" }, loading());
  put(root, body);
  const pages = { org: orgTab, users: usersTab, teams: teamsTab, personas: personasTab, keys: keysTab };
  const render = pages[tab] || orgTab;
  try {
    await render(body, ctx);
  } catch (err) {
    put(clear(body), inlineError(err));
    throw err;
  }
}

function check(checked, props = {}) {
  return h("input", { type: "checkbox", checked: Boolean(checked), ...props });
}

// -- organization ------------------------------------------------------------------------

async function orgTab(body, ctx) {
  const me = await api("GET", "/v1/me");
  const org = me.org;
  const name = h("input", { type: "text", value: org.name, required: true });
  const mode = select(MODES, org.mode);
  const memory = check(org.memory_enabled);
  const review = check(org.review);
  const save = h("button", { type: "submit", class: "primary" }, "Save organization");
  put(clear(body), h("form", { class: "card stack narrow", method: "post", "aria-label": "Organization settings",
    onsubmit: (event) => {
      event.preventDefault();
      act(save, async () => {
        await api("PATCH", "/v1/admin/org", { body: { name: name.value.trim(), mode: mode.value,
          memory_enabled: memory.checked, review: review.checked } });
        session.me = await api("GET", "/v1/me");
        say("Organization saved");
        await ctx.rerender();
      });
    } },
  h("h2", {}, `Organization ${org.id}`),
  field("Name", name),
  field("Recall mode", mode, "What a recall reaches when the caller names no scopes."),
  field("Memory on", memory, "Off: members are refused; admins keep access to govern."),
  field("Review organization memory", review,
    "On: new organization-layer memories wait for an admin's approval."),
  h("div", { class: "row" }, save)));
}

// -- users -----------------------------------------------------------------------------------

async function usersTab(body, ctx) {
  const users = await api("GET", "/v1/admin/users");
  const id = h("input", { type: "text", required: true, pattern: "[A-Za-z0-9._@-]+", placeholder: "e.g. carol" });
  const name = h("input", { type: "text", placeholder: "Carol Jones" });
  const role = select(ROLES, "member");
  const create = h("button", { type: "submit", class: "primary" }, "Create user");
  put(clear(body), 
    h("form", { class: "card row wrap", method: "post", "aria-label": "Create a user", onsubmit: (event) => {
      event.preventDefault();
      act(create, async () => {
        await api("PUT", `/v1/admin/users/${encodeURIComponent(slug(id.value))}`,
          { body: { name: name.value.trim() || undefined, role: role.value } });
        say(`User ${slug(id.value)} saved`);
        await ctx.rerender();
      });
    } }, h("h2", { class: "h3 full" }, "New user"), field("User id", id), field("Name", name),
    field("Role", role), create),
    h("section", { class: "card", "aria-labelledby": "users-h" }, h("h2", { id: "users-h" }, `Users (${users.length})`),
      h("div", { class: "table-wrap" }, h("table", { class: "table", id: "users-table" },
        h("thead", {}, h("tr", {}, ["User", "Role", "Teams", "Personas", "Disabled", ""]
          .map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, users.map((u) => userRow(u, ctx)))))));
}

function userRow(u, ctx) {
  const role = select(ROLES.map((r) => [r, r.replace("_", " ")]), u.role, { "aria-label": `Role of ${u.id}` });
  const disabled = check(u.disabled, { "aria-label": `${u.id} disabled` });
  const save = h("button", { type: "button", class: "secondary small", onclick: () => act(save, async () => {
    await api("PUT", `/v1/admin/users/${encodeURIComponent(u.id)}`,
      { body: { role: role.value, disabled: disabled.checked } });
    say(`User ${u.id} saved`);
    await ctx.rerender();
  }) }, "Save");
  const path = `/v1/admin/users/${encodeURIComponent(u.id)}`;
  const exportButton = h("button", { type: "button", class: "ghost small", onclick: () => act(exportButton, async () => {
    await download(`${path}/export`, `kenning-export-${u.id}.jsonl`);
    say(`Export of ${u.id} downloaded`);
  }) }, "Export");
  const erase = u.id === ctx.me.user.id ? null : h("button", { type: "button", class: "danger small", onclick: async () => {
    const ok = await confirmDialog({ title: `Erase user ${u.id}?`, confirm: "Erase for good", danger: true,
      text: `Deletes ${u.id}'s personal memories, record, team memberships, persona grants and API keys; `
        + "it cannot be undone. Memories they wrote in shared scopes (teams, personas, the organization) "
        + "stay, their author replaced by “(erased)”. History keeps who and when; the audit log records it." });
    if (!ok) return;
    await act(erase, async () => {
      const done = await api("POST", `${path}/erase`, { body: {} });
      say(`User ${u.id} erased: ${done.memories} memories deleted, ${done.shared_detached} shared kept`);
      await ctx.rerender();
    });
  } }, "Erase");
  return h("tr", { dataset: { user: u.id } },
    h("th", { scope: "row" }, h("div", {}, u.name), h("div", { class: "mono small muted" }, u.id)),
    h("td", {}, role),
    h("td", {}, Object.entries(u.teams).map(([t, r]) => `${t} (${r})`).join(", ") || "—"),
    h("td", {}, [...u.personas.map((p) => u.persona_leads.includes(p) ? `${p} (lead)` : p)].join(", ") || "—"),
    h("td", {}, disabled, u.disabled ? badge("disabled", "status-archived") : null),
    h("td", { class: "row" }, save, exportButton, erase));
}

/** Fetch ``path`` with the session's key and save the answer as ``filename``. */
async function download(path, filename) {
  const response = await fetch(path, { headers: { Authorization: `Bearer ${session.key}` },
    cache: "no-store", credentials: "omit" });
  if (!response.ok) {
    const data = await response.json().catch(() => null);
    throw new ApiError(response.status, (data && data.error) || { message: response.statusText });
  }
  const url = URL.createObjectURL(await response.blob());
  const link = h("a", { href: url, download: filename, hidden: true });
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// -- teams -----------------------------------------------------------------------------------

async function teamsTab(body, ctx) {
  const [teams, users] = await Promise.all([api("GET", "/v1/admin/teams"), api("GET", "/v1/admin/users")]);
  const members = await Promise.all(teams.map((t) => api("GET", `/v1/admin/teams/${encodeURIComponent(t.id)}/members`)));
  put(clear(body), groupForm("team", ctx),
    teams.length ? teams.map((t, i) => teamCard(t, members[i], users, ctx))
      : empty("No teams yet.", "Create one above; members share its memory."));
}

function groupForm(kind, ctx) {
  const id = h("input", { type: "text", required: true, pattern: "[A-Za-z0-9._@-]+", placeholder: kind === "team" ? "e.g. eng" : "e.g. helpdesk" });
  const name = h("input", { type: "text", placeholder: kind === "team" ? "Engineering" : "Helpdesk" });
  const memory = check(true);
  const review = check(false);
  const create = h("button", { type: "submit", class: "primary" }, `Create ${kind}`);
  return h("form", { class: "card row wrap", method: "post", "aria-label": `Create a ${kind}`,
    onsubmit: (event) => {
      event.preventDefault();
      act(create, async () => {
        await api("PUT", `/v1/admin/${kind}s/${encodeURIComponent(slug(id.value))}`, { body: {
          name: name.value.trim() || undefined, memory_enabled: memory.checked, review: review.checked } });
        say(`${kind === "team" ? "Team" : "Persona"} ${slug(id.value)} saved`);
        await ctx.rerender();
      });
    } },
  h("h2", { class: "h3 full" }, `New ${kind}`), field(`${kind === "team" ? "Team" : "Persona"} id`, id),
  field("Name", name), field("Memory on", memory), field("Review writes", review), create);
}

function switches(kind, group, ctx) {
  const memory = check(group.memory_enabled, { id: `${kind}-${group.id}-memory` });
  const review = check(group.review, { id: `${kind}-${group.id}-review` });
  const save = h("button", { type: "button", class: "secondary small", onclick: () => act(save, async () => {
    await api("PUT", `/v1/admin/${kind}s/${encodeURIComponent(group.id)}`,
      { body: { memory_enabled: memory.checked, review: review.checked } });
    say(`Switches of ${group.id} saved`);
    await ctx.rerender();
  }) }, "Save switches");
  return h("div", { class: "row switches", role: "group", "aria-label": `Switches of ${group.id}` },
    field("Memory on", memory), field(kind === "team" ? "Writes wait for a lead" : "Writes wait for a lead", review), save);
}

function teamCard(team, members, users, ctx) {
  const entries = Object.entries(members);
  const user = select(users.filter((u) => !(u.id in members)).map((u) => [u.id, `${u.name} (${u.id})`]), "",
    { "aria-label": `User to add to ${team.id}` });
  const role = select(TEAM_ROLES, "member", { "aria-label": `Role in ${team.id}` });
  const add = h("button", { type: "submit", class: "secondary" }, "Add member");
  const del = h("button", { type: "button", class: "danger small", onclick: async () => {
    if (!(await confirmDialog({ title: `Delete team ${team.id}?`, confirm: "Delete team", danger: true,
      text: "Its memberships are removed; its memories stay." }))) return;
    await act(del, async () => {
      await api("DELETE", `/v1/admin/teams/${encodeURIComponent(team.id)}`);
      say(`Team ${team.id} deleted`);
      await ctx.rerender();
    });
  } }, "Delete team");
  return h("section", { class: "card", "aria-labelledby": `team-${team.id}`, dataset: { team: team.id } },
    h("div", { class: "card-head" }, h("h2", { id: `team-${team.id}`, class: "h3" }, `${team.name} `,
      h("span", { class: "mono muted small" }, team.id)), del),
    switches("team", team, ctx),
    entries.length ? h("div", { class: "table-wrap" }, h("table", { class: "table compact" },
      h("thead", {}, h("tr", {}, ["Member", "Role in team", ""].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, entries.map(([uid, r]) => memberRow(team, uid, r, ctx)))))
      : empty("No members yet."),
    user.options.length ? h("form", { class: "row", method: "post", "aria-label": `Add a member to ${team.id}`,
      onsubmit: (event) => {
        event.preventDefault();
        act(add, async () => {
          await api("PUT", `/v1/admin/teams/${encodeURIComponent(team.id)}/members/${encodeURIComponent(user.value)}`,
            { body: { role: role.value } });
          say(`${user.value} added to ${team.id}`);
          await ctx.rerender();
        });
      } }, field("User", user), field("Role", role), add) : null);
}

function memberRow(team, uid, role, ctx) {
  const sel = select(TEAM_ROLES, role, { "aria-label": `Role of ${uid} in ${team.id}` });
  const base = `/v1/admin/teams/${encodeURIComponent(team.id)}/members/${encodeURIComponent(uid)}`;
  const save = h("button", { type: "button", class: "secondary small", onclick: () => act(save, async () => {
    await api("PUT", base, { body: { role: sel.value } });
    say(`${uid} is now ${sel.value} of ${team.id}`);
  }) }, "Save");
  const remove = h("button", { type: "button", class: "ghost small", onclick: () => act(remove, async () => {
    await api("DELETE", base);
    say(`${uid} removed from ${team.id}`);
    await ctx.rerender();
  }) }, "Remove");
  return h("tr", {}, h("th", { scope: "row" }, uid), h("td", {}, sel), h("td", { class: "row" }, save, remove));
}

// -- personas ---------------------------------------------------------------------------------

async function personasTab(body, ctx) {
  const [personas, users] = await Promise.all([api("GET", "/v1/admin/personas"), api("GET", "/v1/admin/users")]);
  put(clear(body), groupForm("persona", ctx),
    personas.length ? personas.map((p) => personaCard(p, users, ctx))
      : empty("No personas yet.", "A persona is an agent identity users can act as, with its own memory."));
}

function personaCard(p, users, ctx) {
  const holders = users.filter((u) => u.personas.includes(p.id) || u.persona_leads.includes(p.id));
  const user = select(users.map((u) => [u.id, `${u.name} (${u.id})`]), "", { "aria-label": `User for ${p.id}` });
  const use = check(true, { id: `grant-${p.id}-use` });
  const lead = check(false, { id: `grant-${p.id}-lead` });
  const grant = h("button", { type: "submit", class: "secondary" }, "Grant");
  const put = (uid, body) => api("PUT", `/v1/admin/personas/${encodeURIComponent(p.id)}/users/${encodeURIComponent(uid)}`, { body });
  return h("section", { class: "card", "aria-labelledby": `persona-${p.id}`, dataset: { persona: p.id } },
    h("h2", { id: `persona-${p.id}`, class: "h3" }, `${p.name} `, h("span", { class: "mono muted small" }, p.id)),
    switches("persona", p, ctx),
    holders.length ? h("div", { class: "table-wrap" }, h("table", { class: "table compact" },
      h("thead", {}, h("tr", {}, ["User", "May use", "Lead", ""].map((c) => h("th", { scope: "col" }, c)))),
      h("tbody", {}, holders.map((u) => {
        const revoke = h("button", { type: "button", class: "ghost small", onclick: () => act(revoke, async () => {
          await put(u.id, { use: false, lead: false });
          say(`${u.id} may no longer use ${p.id}`);
          await ctx.rerender();
        }) }, "Revoke");
        return h("tr", {}, h("th", { scope: "row" }, u.id), h("td", {}, u.personas.includes(p.id) ? "yes" : "no"),
          h("td", {}, u.persona_leads.includes(p.id) ? "yes" : "no"), h("td", {}, revoke));
      }))))
      : empty("Nobody may use this persona yet."),
    h("form", { class: "row", method: "post", "aria-label": `Grant ${p.id}`, onsubmit: (event) => {
      event.preventDefault();
      act(grant, async () => {
        await put(user.value, { use: use.checked, lead: lead.checked });
        say(`Grant for ${user.value} on ${p.id} saved`);
        await ctx.rerender();
      });
    } }, field("User", user), field("May use", use), field("Lead (curates its memory)", lead), grant));
}

// -- API keys ---------------------------------------------------------------------------------

async function keysTab(body, ctx) {
  const [keys, users, personas] = await Promise.all([api("GET", "/v1/keys"),
    api("GET", "/v1/admin/users"), api("GET", "/v1/admin/personas")]);
  const name = h("input", { type: "text", required: true, placeholder: "e.g. laptop, ci, claude-desktop", id: "key-name" });
  const user = select(users.map((u) => [u.id, `${u.name} (${u.id})`]), ctx.me.user.id, { id: "key-user" });
  const persona = select([["", "none"], ...personas.map((p) => [p.id, p.name])], "", { id: "key-persona" });
  const create = h("button", { type: "submit", class: "primary" }, "Create key");
  const active = keys.filter((k) => !k.revoked_at).length;
  put(clear(body), 
    h("form", { class: "card row wrap", method: "post", "aria-label": "Create an API key", onsubmit: (event) => {
      event.preventDefault();
      act(create, async () => {
        const key = await api("POST", "/v1/keys", { body: { name: name.value.trim(), user_id: user.value,
          persona: persona.value || undefined } });
        await secretDialog(key);
        say(`Key ${key.id} created`);
        await ctx.rerender();
      });
    } }, h("h2", { class: "h3 full" }, "New API key"), field("Name", name), field("For user", user),
    field("Default persona", persona), create,
    h("p", { class: "hint full" }, "The secret is shown once, right after creation; only its hash is stored.")),
    h("section", { class: "card", "aria-labelledby": "keys-h" },
      h("h2", { id: "keys-h" }, `API keys (${active} active, ${keys.length - active} revoked)`),
      keys.length ? h("div", { class: "table-wrap" }, h("table", { class: "table", id: "keys-table" },
        h("thead", {}, h("tr", {}, ["Name", "Key id", "User", "Persona", "Created", "Status", ""]
          .map((c) => h("th", { scope: "col" }, c)))),
        h("tbody", {}, keys.map((k) => keyRow(k, ctx)))))
        : empty("No keys.")));
}

function keyRow(k, ctx) {
  const current = k.id === ctx.me.key_id;
  const revoke = k.revoked_at ? null : h("button", { type: "button", class: "danger small", onclick: async () => {
    const ok = await confirmDialog({ title: `Revoke key “${k.name}”?`, confirm: "Revoke key", danger: true,
      text: current ? "This is the key you are signed in with: you will be signed out."
        : `Anything using key ${k.id} of ${k.user_id} stops working at once.` });
    if (!ok) return;
    await act(revoke, async () => {
      await api("DELETE", `/v1/keys/${encodeURIComponent(k.id)}`);
      say(`Key ${k.id} revoked`);
      await ctx.rerender();
    });
  } }, "Revoke");
  return h("tr", { dataset: { key: k.id } },
    h("th", { scope: "row" }, k.name, current ? h("span", { class: "muted small" }, " (this session)") : null),
    h("td", { class: "mono" }, k.id), h("td", {}, k.user_id), h("td", {}, k.persona || "—"),
    h("td", {}, time(k.created_at)),
    h("td", {}, k.revoked_at ? h("span", {}, badge("revoked", "status-archived"), " ", time(k.revoked_at))
      : badge("active", "status-active")),
    h("td", {}, revoke));
}
