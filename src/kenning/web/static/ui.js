// What every page of the kenning web UI shares: DOM builders (text only, never
// HTML strings), the API client, the session, messages and dialogs.
//
// Anything that came from memory content or the directory is inserted as text
// nodes; nothing here or in the pages parses strings as HTML (a test checks).

const SVG_NS = "http://www.w3.org/2000/svg";
const PROPS = new Set(["value", "checked", "disabled", "selected", "hidden", "indeterminate",
  "required", "readOnly", "multiple"]);

function append(el, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** An HTML element: h("a", {href: "#/", class: "x", onclick: fn}, "text", child). */
export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(props || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else if (name === "class") {
      el.className = value;
    } else if (name === "text") {
      el.textContent = String(value);
    } else if (name === "dataset") {
      Object.assign(el.dataset, value);
    } else if (PROPS.has(name)) {
      el[name] = value;
    } else {
      el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

/** An SVG element; attributes are set as given (text children become text nodes). */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      el.addEventListener(name.slice(2), value);
    } else {
      el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/** Append children to ``el`` (arrays flattened, null/false skipped; strings as text). */
export function put(el, ...children) {
  append(el, children);
  return el;
}

/** Remove every child of ``el`` (and return it). */
export function clear(el) {
  el.replaceChildren();
  return el;
}

// -- formatting -----------------------------------------------------------------------

const DATE = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });
const DAY = new Intl.DateTimeFormat(undefined, { dateStyle: "medium" });

/** A <time> element for an ISO timestamp (or an em dash). */
export function time(iso, dayOnly = false) {
  if (!iso) return h("span", { class: "muted" }, "—");
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return h("span", {}, String(iso));
  return h("time", { datetime: iso, title: iso }, (dayOnly ? DAY : DATE).format(d));
}

/** A number with ``digits`` decimals (or an em dash). */
export function num(value, digits = 2) {
  if (value === null || value === undefined || Number.isNaN(value)) return "—";
  return Number(value).toFixed(digits);
}

/** ``text`` cut to ``n`` characters with an ellipsis. */
export function cut(text, n) {
  const s = String(text ?? "");
  return s.length > n ? `${s.slice(0, n - 1).trimEnd()}…` : s;
}

/** A small label; ``kind`` picks its colour (status-active, layer-personal, ...). */
export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}`.trim() }, text);
}

/** The hash link to a memory's detail page. */
export function memoryHref(id) {
  return `#/memory/${encodeURIComponent(id)}`;
}

/** The hash link to the graph around a memory or an entity. */
export function graphHref(kind, value) {
  return `#/graph?${new URLSearchParams({ [kind]: value })}`;
}

// -- the session ------------------------------------------------------------------------

const KEY = "kenning.key";
const PERSONA = "kenning.persona";

/** The API key and active persona live in sessionStorage only (this tab). */
export const session = {
  me: null,
  get key() { return sessionStorage.getItem(KEY); },
  set key(value) {
    if (value) sessionStorage.setItem(KEY, value); else sessionStorage.removeItem(KEY);
  },
  get persona() { return sessionStorage.getItem(PERSONA) || ""; },
  set persona(value) {
    if (value) sessionStorage.setItem(PERSONA, value); else sessionStorage.removeItem(PERSONA);
  },
  clear() {
    sessionStorage.removeItem(KEY);
    sessionStorage.removeItem(PERSONA);
    this.me = null;
  },
};

/** Roles, from GET /v1/me. */
export function isAdmin(me) {
  return Boolean(me && me.roles.includes("admin"));
}

export function canReview(me) {
  if (!me) return false;
  return isAdmin(me) || me.roles.includes("team_lead")
    || Object.values(me.teams).includes("lead") || me.persona_leads.length > 0;
}

// -- the API client ---------------------------------------------------------------------

/** An error answer of the API: {"error": {"code", "message", "field", "request_id"}}. */
export class ApiError extends Error {
  constructor(status, error) {
    super(error.message || `HTTP ${status}`);
    this.status = status;
    this.code = error.code || `http_${status}`;
    this.field = error.field || null;
    this.requestId = error.request_id || null;
  }
}

function query(params) {
  const q = new URLSearchParams();
  for (const [name, value] of Object.entries(params || {})) {
    if (value === null || value === undefined || value === "") continue;
    for (const v of Array.isArray(value) ? value : [value]) {
      if (v !== null && v !== undefined && v !== "") q.append(name, String(v));
    }
  }
  const s = q.toString();
  return s ? `?${s}` : "";
}

/**
 * Call the API: ``await api("GET", "/v1/me")``. The key goes in the Authorization
 * header (never in a URL); the active persona in X-Kenning-Persona. Error answers
 * throw an ApiError; a 401 signs the tab out.
 */
export async function api(method, path, { body, params, key } = {}) {
  const secret = key || session.key;
  const headers = { Accept: "application/json" };
  if (secret) headers.Authorization = `Bearer ${secret}`;
  if (session.persona && !key) headers["X-Kenning-Persona"] = session.persona;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path + query(params), {
      method, headers, cache: "no-store", credentials: "omit",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (exc) {
    throw new ApiError(0, { code: "network", message: `The server did not answer (${exc.message})` });
  }
  if (response.status === 204) return null;
  let data = null;
  try {
    data = await response.json();
  } catch {
    data = null;
  }
  if (!response.ok) {
    const error = new ApiError(response.status, (data && data.error) || {
      code: `http_${response.status}`, message: response.statusText || "request failed" });
    if (response.status === 401 && !key) {
      window.dispatchEvent(new CustomEvent("kenning:unauthenticated", { detail: error }));
    }
    throw error;
  }
  return data;
}

// -- messages -----------------------------------------------------------------------------

let statusTimer = 0;

/** A polite status message (aria-live), e.g. "Saved". */
export function say(text) {
  const box = document.getElementById("status");
  clearTimeout(statusTimer);
  box.replaceChildren(h("span", { class: "toast" }, text));
  statusTimer = setTimeout(() => box.replaceChildren(), 8000);
}

/** Show an error (an ApiError or any Error) in the alert region. */
export function showError(err) {
  const box = document.getElementById("error");
  const title = err instanceof ApiError && err.status
    ? `${err.status} ${err.code.replaceAll("_", " ")}` : "Error";
  box.replaceChildren(h("div", { class: "alert" },
    h("div", { class: "alert-body" },
      h("strong", {}, title), ": ", err.message || String(err),
      err.requestId ? h("span", { class: "muted small" }, ` (request ${err.requestId})`) : null),
    h("button", { type: "button", class: "ghost small", onclick: clearError }, "Dismiss")));
}

export function clearError() {
  document.getElementById("error").replaceChildren();
}

/** Run ``fn`` (an async action); API errors are shown, the button is busy meanwhile. */
export async function act(button, fn) {
  if (button) { button.disabled = true; button.setAttribute("aria-busy", "true"); }
  clearError();
  try {
    return await fn();
  } catch (err) {
    showError(err);
    return undefined;
  } finally {
    if (button) { button.disabled = false; button.removeAttribute("aria-busy"); }
  }
}

/** A loading placeholder. */
export function loading(text = "Loading…") {
  return h("p", { class: "loading" }, h("span", { class: "spinner", "aria-hidden": "true" }), text);
}

/** An empty state: a title and a hint. */
export function empty(title, hint = "") {
  return h("div", { class: "empty" }, h("p", { class: "empty-title" }, title),
    hint ? h("p", { class: "muted" }, hint) : null);
}

/** An inline error for a section that failed to load (the page goes on). */
export function inlineError(err) {
  const status = err instanceof ApiError && err.status ? `${err.status}: ` : "";
  return h("p", { class: "inline-error" }, `${status}${err.message || err}`);
}

// -- dialogs ------------------------------------------------------------------------------

function modal(labelId, children, onClose) {
  const dialog = h("dialog", { class: "dialog", "aria-labelledby": labelId }, ...children);
  dialog.addEventListener("close", () => { onClose(dialog.returnValue); dialog.remove(); });
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

/** Ask before something irreversible; resolves to true when confirmed. */
export function confirmDialog({ title, text, confirm = "Confirm", danger = false }) {
  return new Promise((resolve) => {
    const id = `dlg-${Math.random().toString(36).slice(2)}`;
    const cancel = h("button", { type: "button", class: "secondary",
      onclick: () => dialog.close("cancel") }, "Cancel");
    const ok = h("button", { type: "button", class: danger ? "danger" : "primary",
      onclick: () => dialog.close("ok") }, confirm);
    const dialog = modal(id, [
      h("h2", { id }, title), h("p", {}, text),
      h("div", { class: "dialog-actions" }, cancel, ok),
    ], (value) => resolve(value === "ok"));
    cancel.focus();
  });
}

/** Show a new API key's secret once, with a copy button. */
export function secretDialog(key) {
  return new Promise((resolve) => {
    const id = "dlg-secret";
    const field = h("input", { id: "secret-value", class: "mono", type: "text", readOnly: true,
      value: key.secret, "aria-describedby": "secret-help", spellcheck: "false" });
    const copied = h("span", { class: "muted small", role: "status" });
    const copy = h("button", { type: "button", class: "primary", onclick: async () => {
      field.select();
      try {
        await navigator.clipboard.writeText(key.secret);
        copied.textContent = "Copied to the clipboard.";
      } catch {
        copied.textContent = "Selected: press Ctrl+C (⌘C) to copy.";
      }
    } }, "Copy key");
    const dialog = modal(id, [
      h("h2", { id }, `New API key “${key.name}” for ${key.user_id}`),
      h("p", { id: "secret-help" }, "Copy the key now: it is shown this once and cannot be "
        + "recovered. Store it like a password."),
      h("label", { for: "secret-value" }, "Secret"),
      h("div", { class: "row" }, field, copy), copied,
      h("div", { class: "dialog-actions" },
        h("button", { type: "button", class: "secondary", onclick: () => dialog.close("done") },
          "I have copied it")),
    ], () => { field.value = ""; resolve(); });
    field.focus();
    field.select();
  });
}

// -- forms --------------------------------------------------------------------------------

let fieldSeq = 0;

/** A labelled form control: field("Name", h("input", {...})) → <div class=field>. */
export function field(label, control, hint = "") {
  if (!control.id) control.id = `f${++fieldSeq}`;
  const hintId = hint ? `${control.id}-hint` : null;
  if (hintId) control.setAttribute("aria-describedby", hintId);
  const isCheck = control.type === "checkbox" || control.type === "radio";
  const lab = h("label", { for: control.id }, label);
  return h("div", { class: isCheck ? "field check" : "field" },
    isCheck ? [control, lab] : [lab, control],
    hint ? h("p", { class: "hint", id: hintId }, hint) : null);
}

/** A <select> with options [value, label] (or plain strings). */
export function select(options, value = "", props = {}) {
  return h("select", props, options.map((o) => {
    const [v, label] = Array.isArray(o) ? o : [o, o];
    return h("option", { value: v, selected: String(v) === String(value) }, label);
  }));
}

/** Comma-separated tags → a clean list. */
export function tagList(text) {
  return String(text || "").split(",").map((t) => t.trim()).filter(Boolean);
}

/** A page header: an h1 the router focuses after navigation, with an optional lead. */
export function pageHeader(title, lead = "", ...extra) {
  return h("header", { class: "page-header" },
    h("div", {}, h("h1", { tabindex: "-1" }, title), lead ? h("p", { class: "lead" }, lead) : null),
    extra.length ? h("div", { class: "page-actions" }, ...extra) : null);
}
