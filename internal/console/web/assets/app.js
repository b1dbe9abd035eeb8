// The console's entry point: signing in, the router and the page frame.

import { fill, h, setEventTypeNames, timeZone } from "./format.js";
import { getJSON, token, setToken } from "./api.js";
import { store } from "./store.js";
import * as live from "./pages/live.js";
import * as decision from "./pages/decision.js";
import * as policy from "./pages/policy.js";
import * as sessions from "./pages/sessions.js";
import * as approvals from "./pages/approvals.js";

const main = document.getElementById("main");
const who = document.getElementById("who");
const nav = document.getElementById("nav");
const foot = document.getElementById("foot");

const pages = {
  live: (root, ctx, _arg, params) => { live.setFilters(params); return live.mount(root, ctx); },
  decision: (root, ctx, arg) => decision.mount(root, ctx, arg),
  policy: (root, ctx, arg) => policy.mount(root, ctx, arg),
  sessions: (root, ctx) => sessions.mount(root, ctx),
  approvals: (root, ctx, arg) => approvals.mount(root, ctx, arg),
};

const ctx = { info: null, refused };
let unmount = null;
let firstRoute = true;

function parseHash() {
  const raw = location.hash.replace(/^#\/?/, "");
  const [path, query] = raw.split("?");
  const [page, ...rest] = path.split("/");
  return { page: pages[page] ? page : "live", arg: rest.length ? decodeURIComponent(rest.join("/")) : "", params: Object.fromEntries(new URLSearchParams(query || "")) };
}

function route() {
  if (!ctx.info) return;
  const { page, arg, params } = parseHash();
  for (const a of nav.querySelectorAll("a")) {
    if (a.dataset.page === page || (page === "decision" && a.dataset.page === "live")) a.setAttribute("aria-current", "page");
    else a.removeAttribute("aria-current");
  }
  if (typeof unmount === "function") unmount();
  unmount = null;
  document.title = page.charAt(0).toUpperCase() + page.slice(1) + " · ahp console";
  const r = pages[page](main, ctx, arg, params);
  if (r && typeof r.then === "function") r.then((u) => { if (typeof u === "function") unmount = u; });
  else unmount = r;
  if (!firstRoute) main.focus();
  firstRoute = false;
}

// refused is what every page calls when the server refuses its credential: back to sign-in.
function refused(err) {
  store.stop();
  ctx.info = null;
  signIn(err);
}

function signIn(err) {
  nav.hidden = true;
  who.replaceChildren();
  if (typeof unmount === "function") unmount();
  unmount = null;
  const had = token() !== "";
  const input = h("input", { id: "token", name: "token", type: "password", autocomplete: "off", required: true, spellcheck: "false", "aria-describedby": "token-help" });
  const msg = err ? (err.forbidden && !err.unauthenticated ? (err.message.includes("scope") ? "This token does not have the watch scope: " + err.message : err.message)
    : had ? "The server refused the token: " + err.message : "This server needs a token to show the console.") : "";
  const form = h("form", { id: "signin" },
    h("label", { for: "token" }, "Access token with the watch scope", input),
    h("p", { class: "muted", id: "token-help" }, "The same bearer token as for the Watch API. It is kept only in this browser tab (sessionStorage) and sent only to this server."),
    h("div", {}, h("button", { class: "primary", type: "submit" }, "Sign in")));
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    setToken(input.value.trim());
    boot();
  });
  fill(main, h("section", { class: "signin panel" },
    h("h1", {}, "Sign in"),
    msg ? h("div", { class: "error", role: "alert", id: "signin-error" }, msg) : null,
    form));
  setToken("");
  input.focus();
}

async function boot() {
  let info;
  try {
    info = await getJSON("api/info");
  } catch (e) {
    if (e.unauthenticated || (e.forbidden && e.message.includes("scope"))) return signIn(e);
    nav.hidden = true;
    fill(main, h("div", { class: "error", role: "alert", id: "boot-error" }, "The console cannot start: " + e.message));
    return;
  }
  ctx.info = info;
  store.skewMs = new Date(info.server_time).getTime() - Date.now() || 0;
  setEventTypeNames(info.event_types);
  nav.hidden = false;
  who.replaceChildren(...[
    info.auth ? h("span", {}, "Signed in as ", h("strong", { id: "principal" }, info.principal || "?")) : h("span", {}, "No authentication (loopback only)"),
    info.auth ? h("button", { type: "button", id: "signout", on: { click: () => { setToken(""); store.reset(); ctx.info = null; signIn(null); } } }, "Sign out") : null,
  ].filter(Boolean));
  foot.textContent = "ahp-server " + (info.version || "") + " · times in " + timeZone;
  store.onRefused = refused;
  store.start();
  route();
}

window.addEventListener("hashchange", route);
boot();
