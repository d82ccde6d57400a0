// The memory browser: routes (#/…) to views, the shared dialogs and the notice line.

import * as api from "./api.js";
import { h, put } from "./dom.js";
import * as views from "./views.js";
import { memoryView } from "./memory.js";

const main = document.getElementById("main");
const notice = document.getElementById("notice");

/** Shows a message under the header (`kind`: "ok" or "error"). */
export function say(message, kind = "ok") {
  put(notice, message ? h("p", { class: kind }, message) : null);
}

let flashed = "";

/** Shows `message` once the next view is drawn (after an action that changes the view). */
export function flash(message) {
  flashed = message;
}

/** Asks to confirm an action; resolves to true when confirmed. */
export function confirmAction(message, okLabel = "Confirm") {
  const dialog = document.getElementById("confirm");
  document.getElementById("confirm-message").textContent = message;
  const ok = document.getElementById("confirm-ok");
  ok.textContent = okLabel;
  return new Promise((resolve) => {
    const done = (answer) => {
      dialog.removeEventListener("close", onClose);
      ok.onclick = null;
      document.getElementById("confirm-cancel").onclick = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    const onClose = () => done(false);
    dialog.addEventListener("close", onClose);
    ok.onclick = () => done(true);
    document.getElementById("confirm-cancel").onclick = () => done(false);
    dialog.showModal();
    ok.focus();
  });
}

/** Asks for the token; resolves to true when one was given. */
function askToken() {
  const dialog = document.getElementById("token-dialog");
  const form = document.getElementById("token-form");
  const input = document.getElementById("token-input");
  input.value = api.token();
  return new Promise((resolve) => {
    const done = (answer) => {
      form.onsubmit = null;
      dialog.onclose = null;
      if (dialog.open) dialog.close();
      resolve(answer);
    };
    form.onsubmit = (e) => {
      e.preventDefault();
      api.setToken(input.value.trim());
      done(Boolean(input.value.trim()));
    };
    dialog.onclose = () => done(false);
    document.getElementById("token-cancel").onclick = () => done(false);
    dialog.showModal();
    input.focus();
  });
}

api.onUnauthorized(askToken);

let overview = null;

/** The store's status and the page settings (fetched once, refreshed after a change). */
export async function getOverview(fresh = false) {
  if (!overview || fresh) {
    overview = await api.get("status");
    document.getElementById("nav-soul").hidden = !overview.soul;
    // The token can be changed only where one is needed.
    document.getElementById("token-button").hidden = !overview.token_required;
  }
  return overview;
}

const WING_KEY = "mira.wing";

/** The wing being browsed: the last one a view was filtered by or a memory's page showed. */
export function browsedWing() {
  return sessionStorage.getItem(WING_KEY) || "";
}

/** Remembers `wing` as the one being browsed. */
export function browsing(wing) {
  if (wing) sessionStorage.setItem(WING_KEY, wing);
}

/** Forgets the cached status (after a change). */
export function changed() {
  overview = null;
}

const routes = {
  "": views.wingsView,
  search: views.searchView,
  timeline: views.timelineView,
  store: views.storeView,
  health: views.healthView,
  soul: views.soulView,
  memory: memoryView,
};

/** Renders the view named by the location's hash. */
async function route() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  const [name, ...rest] = path.split("/");
  const params = new URLSearchParams(query || "");
  browsing(params.get("wing"));
  const view = routes[name] || views.wingsView;
  for (const a of document.querySelectorAll("nav a")) {
    const current = a.dataset.view === (name || "wings");
    if (current) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  say(flashed);
  flashed = "";
  try {
    const ov = await getOverview();
    const content = await view({ params, arg: decodeURIComponent(rest.join("/")), overview: ov });
    put(main, content);
  } catch (e) {
    put(main, h("section", {}, h("h1", {}, "Cannot show this page"), h("p", { class: "error" }, e.message)));
  }
  // The new view takes the focus: its first field when it has one, else the view itself.
  (main.querySelector("[autofocus]") || main).focus({ preventScroll: true });
  document.body.dataset.view = name || "wings";
  document.body.dataset.renders = String(Number(document.body.dataset.renders || 0) + 1);
}

/** Goes to `hash`, re-rendering even when it is the current one. */
export function go(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
}

window.addEventListener("hashchange", route);
document.getElementById("token-button").addEventListener("click", async () => {
  if (await askToken()) {
    changed();
    route();
  }
});
document.addEventListener("keydown", (e) => {
  const typing = /^(INPUT|TEXTAREA|SELECT)$/.test(document.activeElement.tagName);
  if (e.key === "/" && !typing && !document.querySelector("dialog[open]")) {
    e.preventDefault();
    go("#/search");
  }
});
route();
