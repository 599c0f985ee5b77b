// The kenning web UI: sign-in, the header (who you are, persona switcher), the
// hash router and the pages. No framework, no build step; see ui.js for the
// helpers every page uses.

import { renderAdmin } from "./admin.js";
import { renderGraph } from "./graph.js";
import { renderInsight } from "./insight.js";
import { renderDetail, renderMemories } from "./memories.js";
import { renderReview } from "./review.js";
import {
  api, ApiError, canReview, clear, clearError, empty, field, h, isAdmin, loading, say,
  session, showError, put,
} from "./ui.js";

const NAV = [
  { id: "memories", label: "Memories", href: "#/memories" },
  { id: "review", label: "Review", href: "#/review", show: canReview },
  { id: "graph", label: "Graph", href: "#/graph" },
  { id: "insight", label: "Insight", href: "#/insight" },
  { id: "admin", label: "Admin", href: "#/admin", show: isAdmin },
];

const PAGES = {
  memories: renderMemories,
  memory: renderDetail,
  review: renderReview,
  graph: renderGraph,
  insight: renderInsight,
  admin: renderAdmin,
};

const main = document.getElementById("main");
const topbar = document.getElementById("topbar");
let renderSeq = 0;

/** The current route: "#/memory/ID?x=1" → {parts: ["memory", "ID"], params}. */
function route() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, search = ""] = raw.split("?", 2);
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  return { parts, params: new URLSearchParams(search) };
}

// -- sign-in -------------------------------------------------------------------------------

function renderSignIn(message = "") {
  topbar.hidden = true;
  const input = h("input", { id: "api-key", type: "password", name: "api-key", required: true,
    autocomplete: "off", spellcheck: "false", placeholder: "kn_…", class: "mono" });
  const button = h("button", { type: "submit", class: "primary wide" }, "Sign in");
  const form = h("form", { class: "stack", method: "post", "aria-describedby": "signin-help",
    onsubmit: async (event) => {
      event.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      button.disabled = true;
      clearError();
      try {
        const me = await api("GET", "/v1/me", { key });
        session.key = key;
        session.persona = "";
        session.me = me;
        input.value = "";
        if (!location.hash || location.hash === "#/signin") location.hash = "#/memories";
        await render();
        say(`Signed in as ${me.user.name || me.user.id}`);
      } catch (err) {
        showError(err instanceof ApiError && err.status === 401
          ? new ApiError(401, { code: "unauthenticated", message: `This key was not accepted: ${err.message}` })
          : err);
        input.focus();
      } finally {
        button.disabled = false;
      }
    } },
  field("API key", input), button);
  put(clear(main), h("section", { class: "signin card", "aria-labelledby": "signin-title" },
    h("div", { class: "brand-mark big", "aria-hidden": "true" }, "k"),
    h("h1", { id: "signin-title", tabindex: "-1" }, "Sign in to kenning"),
    h("p", { class: "lead" }, "Long-term memory for your AI agents: see what they remember, "
      + "correct it, review it."),
    message ? h("p", { class: "notice" }, message) : null,
    form,
    h("p", { id: "signin-help", class: "hint" },
      "Use an API key (kn_…); `make run` prints one for the local admin. The key stays in this "
      + "browser tab only (session storage) and is sent to the API in the Authorization header. "
      + "Closing the tab or signing out forgets it.")));
  input.focus();
}

function signOut(message = "") {
  session.clear();
  clearError();
  history.replaceState(null, "", location.pathname + location.search);
  renderSignIn(message);
  say(message || "Signed out");
}

// -- header --------------------------------------------------------------------------------

function renderHeader(me, current) {
  topbar.hidden = false;
  const nav = document.getElementById("nav");
  put(clear(nav), h("ul", {}, NAV.filter((n) => !n.show || n.show(me)).map((n) => h("li", {},
    h("a", { href: n.href, "aria-current": n.id === current ? "page" : null }, n.label)))));
  const account = document.getElementById("account");
  const personaBox = me.personas.length ? personaSwitcher(me) : null;
  const teams = Object.entries(me.teams);
  put(clear(account),
    personaBox,
    h("details", { class: "whoami" },
      h("summary", {}, h("span", { class: "avatar", "aria-hidden": "true" },
        (me.user.name || me.user.id).slice(0, 1).toUpperCase()),
      h("span", { class: "who" }, h("span", { class: "who-name" }, me.user.name || me.user.id),
        h("span", { class: "who-org" }, `${me.org.name} · ${me.user.role.replace("_", " ")}`))),
      h("div", { class: "whoami-panel" },
        h("dl", { class: "facts" },
          h("dt", {}, "User"), h("dd", {}, `${me.user.name} (${me.user.id})`),
          h("dt", {}, "Organization"), h("dd", {}, `${me.org.name} (${me.org.id})`),
          h("dt", {}, "Role"), h("dd", {}, me.roles.join(", ").replaceAll("_", " ")),
          h("dt", {}, "Teams"), h("dd", {}, teams.length
            ? teams.map(([t, r]) => `${t} (${r})`).join(", ") : "none"),
          h("dt", {}, "Personas"), h("dd", {}, me.personas.length ? me.personas.join(", ") : "none"),
          h("dt", {}, "Active persona"), h("dd", {}, me.active_persona || "none"),
          h("dt", {}, "Recall mode"), h("dd", {}, me.mode.replaceAll("_", " ")),
          h("dt", {}, "Organization memory"), h("dd", {}, me.org.memory_enabled ? "on" : "off"),
          h("dt", {}, "API key"), h("dd", { class: "mono" }, me.key_id || "token")),
        h("a", { href: "/docs", class: "small" }, "API documentation"))),
    h("button", { type: "button", class: "secondary", onclick: () => signOut() }, "Sign out"));
}

function personaSwitcher(me) {
  const sel = h("select", { id: "persona-select", onchange: async () => {
    const previous = session.persona;
    session.persona = sel.value;
    try {
      session.me = await api("GET", "/v1/me");
      say(sel.value ? `Acting as persona ${sel.value}` : "No persona active");
      await render();
    } catch (err) {
      session.persona = previous;
      showError(err);
    }
  } }, h("option", { value: "" }, "None"),
  me.personas.map((p) => h("option", { value: p, selected: p === session.persona }, p)));
  return h("div", { class: "persona" }, h("label", { for: "persona-select" }, "Persona"), sel);
}

// -- the router ----------------------------------------------------------------------------

async function render() {
  const seq = ++renderSeq;
  if (!session.key) {
    renderSignIn();
    return;
  }
  if (!session.me) {
    put(clear(main), loading("Signing in…"));
    try {
      session.me = await api("GET", "/v1/me");
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) return; // signed out by the event
      topbar.hidden = true;
      put(clear(main), h("section", { class: "signin card" },
        h("h1", { tabindex: "-1" }, "The server did not answer"),
        h("p", {}, "Your key is kept; try again in a moment."),
        h("button", { type: "button", class: "primary", onclick: () => render() }, "Try again"),
        h("button", { type: "button", class: "secondary", onclick: () => signOut() }, "Sign out")));
      showError(err);
      return;
    }
  }
  if (seq !== renderSeq) return;
  const { parts, params } = route();
  const page = parts[0] || "memories";
  renderHeader(session.me, page === "memory" ? "memories" : page);
  const view = h("div", { class: "view" });
  put(clear(main), view);
  const handler = PAGES[page];
  if (!handler) {
    put(view, h("h1", { tabindex: "-1" }, "Page not found"),
      empty("There is no page here.", "Use the navigation above."));
    return;
  }
  main.setAttribute("aria-busy", "true");
  try {
    await handler(view, { me: session.me, parts, params, rerender });
  } catch (err) {
    if (seq === renderSeq) showError(err);
  } finally {
    if (seq === renderSeq) main.removeAttribute("aria-busy");
  }
}

/** After a navigation or a refresh, focus moves to the page's heading. */
function focusHeading(preventScroll = false) {
  const heading = main.querySelector("h1");
  if (heading) heading.focus({ preventScroll });
}

/** Render the page again after a change, keeping the reader's place. */
async function rerender() {
  const y = window.scrollY;
  await render();
  focusHeading(true);
  window.scrollTo(0, y);
}

window.addEventListener("hashchange", async () => {
  clearError();
  await render();
  focusHeading();
});

window.addEventListener("kenning:unauthenticated", (event) => {
  signOut(`You were signed out: ${event.detail.message}`);
});

document.getElementById("skip").addEventListener("click", (event) => {
  event.preventDefault();
  const heading = main.querySelector("h1");
  (heading || main).focus();
});

render().catch(showError);
