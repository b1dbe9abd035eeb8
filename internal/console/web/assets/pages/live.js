// Live: decisions and observations as they happen, filtered, with counters and a rate chart.

import { fill, h, svg, verdict, verdictBadge, eventType, allEventTypes, timeEl, agentOf, sessionOf, toolOf, itemKey, plural, timeZone } from "../format.js";
import { store } from "../store.js";
import * as chart from "../chart.js";

const MAX_ROWS = 300;
const VERDICTS = ["allow", "deny", "ask", "modify", "defer", "escalate", "observed"];

// Filters outlive a visit to another page, within this tab.
const filters = { verdict: "", type: "", agent: "", session: "", rule: "", q: "" };
let paused = false;
let frozen = null; // the items shown while paused
let frozenAt = 0;

const searchText = new WeakMap();

function haystack(item) {
  let s = searchText.get(item);
  if (s === undefined) {
    s = JSON.stringify(item).toLowerCase();
    searchText.set(item, s);
  }
  return s;
}

export function matches(item, f) {
  if (f.verdict && verdict(item) !== f.verdict) return false;
  if (f.type && eventType(item.event && item.event.type) !== f.type) return false;
  if (f.agent && !agentOf(item.event).toLowerCase().includes(f.agent.toLowerCase())) return false;
  if (f.session && !sessionOf(item.event).toLowerCase().includes(f.session.toLowerCase())) return false;
  if (f.rule) {
    const rules = (item.decision && item.decision.matchedRuleIds) || [];
    if (!rules.some((r) => r.toLowerCase().includes(f.rule.toLowerCase()))) return false;
  }
  if (f.q && !haystack(item).includes(f.q.toLowerCase())) return false;
  return true;
}

export function mount(root, ctx) {
  const field = (name, label, input) => h("label", { for: "f-" + name }, label, input);
  const text = (name, placeholder) => {
    const el = h("input", { id: "f-" + name, name, type: "search", value: filters[name], placeholder, autocomplete: "off", spellcheck: "false" });
    el.addEventListener("input", () => { filters[name] = el.value.trim(); schedule(); });
    return el;
  };
  const select = (name, options) => {
    const el = h("select", { id: "f-" + name, name }, h("option", { value: "" }, "any"), options.map((o) => h("option", { value: o }, o)));
    el.value = filters[name];
    el.addEventListener("change", () => { filters[name] = el.value; schedule(); });
    return el;
  };
  const typeSelect = select("type", allEventTypes());
  const verdictSelect = select("verdict", VERDICTS);
  const inputs = {
    q: text("q", "any text in the event or decision"), agent: text("agent", "agent id"), session: text("session", "session id"), rule: text("rule", "rule id"),
  };
  const pauseBtn = h("button", { type: "button", id: "pause", "aria-pressed": "false", "aria-keyshortcuts": "p" }, "Pause");
  const clearBtn = h("button", { type: "button", id: "clear-filters" }, "Clear filters");
  const stateEl = h("span", { class: "state", id: "stream-state", role: "status" });
  const countersEl = h("dl", { class: "counters", id: "counters" });
  const chartEl = svg("svg", { class: "chart", viewBox: chart.viewBox(), role: "img", id: "rate-chart" });
  const tbody = h("tbody", { id: "live-rows" });
  const summary = h("p", { class: "muted", id: "live-summary", "aria-live": "polite" });
  const emptyEl = h("div", { id: "live-empty" });

  fill(root, 
    h("h1", {}, "Live"),
    h("section", { class: "panel", "aria-label": "Filters" },
      h("div", { class: "filters" },
        h("div", { class: "wide" }, field("q", "Search", inputs.q)),
        field("verdict", "Verdict", verdictSelect),
        field("type", "Event type", typeSelect),
        field("agent", "Agent", inputs.agent),
        field("session", "Session", inputs.session),
        field("rule", "Rule", inputs.rule),
      ),
    ),
    h("div", { class: "toolbar" }, pauseBtn, clearBtn, stateEl, h("span", { class: "muted" }, "Times in " + timeZone + ". Keys: / search, p pause, j/k move between decisions.")),
    h("section", { class: "panel grid2", "aria-label": "Counters and rates" },
      countersEl,
      h("div", {}, chartEl, h("div", { class: "legend" }, h("span", { class: "k1" }, "decisions/s (5 s buckets)"), h("span", { class: "k2" }, "share denied"))),
    ),
    h("section", { class: "panel", "aria-label": "Items" },
      summary,
      emptyEl,
      h("div", { class: "scroll" },
        h("table", { id: "live-table" },
          h("caption", { class: "sr-only" }, "Decisions and observations, newest first"),
          h("thead", {}, h("tr", {},
            h("th", { scope: "col" }, "Time"), h("th", { scope: "col" }, "Verdict"), h("th", { scope: "col" }, "Event"),
            h("th", { scope: "col" }, "Tool"), h("th", { scope: "col", class: "hide-narrow" }, "Agent"),
            h("th", { scope: "col", class: "hide-narrow" }, "Session"), h("th", { scope: "col", class: "hide-narrow" }, "Rules"))),
          tbody,
        ),
      ),
    ),
  );

  pauseBtn.addEventListener("click", () => togglePause());
  clearBtn.addEventListener("click", () => {
    for (const k of Object.keys(filters)) filters[k] = "";
    for (const [k, el] of Object.entries(inputs)) el.value = filters[k];
    verdictSelect.value = ""; typeSelect.value = "";
    schedule();
  });

  function togglePause() {
    paused = !paused;
    frozen = paused ? store.items.slice() : null;
    frozenAt = store.counts.received;
    schedule();
  }

  const onKey = (e) => {
    if (e.target.matches("input, select, textarea") || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === "/") { e.preventDefault(); inputs.q.focus(); }
    if (e.key === "p") { e.preventDefault(); togglePause(); }
    // j/k or the arrow keys move between the decisions' links; Enter opens one.
    const down = e.key === "j" || e.key === "ArrowDown", up = e.key === "k" || e.key === "ArrowUp";
    if (down || up) {
      const links = [...tbody.querySelectorAll("a")];
      if (!links.length) return;
      const i = links.indexOf(document.activeElement);
      if (i < 0 && !down) return;
      e.preventDefault();
      links[Math.max(0, Math.min(links.length - 1, i < 0 ? 0 : i + (down ? 1 : -1)))].focus();
    }
  };
  document.addEventListener("keydown", onKey);

  let pending = false;
  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; draw(); });
  }

  function draw() {
    const items = paused && frozen ? frozen : store.items;
    const shown = [];
    let matching = 0;
    for (const it of items) {
      if (!matches(it, filters)) continue;
      matching++;
      if (shown.length < MAX_ROWS) shown.push(it);
    }
    tbody.replaceChildren(...shown.map(row));
    const c = store.counts;
    const newWhilePaused = paused ? c.received - frozenAt : 0;
    pauseBtn.textContent = paused ? "Resume" + (newWhilePaused ? " (" + newWhilePaused + " new)" : "") : "Pause";
    pauseBtn.setAttribute("aria-pressed", String(paused));
    stateEl.className = "state " + (paused ? "paused" : store.state === "live" ? "live" : store.state === "connecting" ? "" : "down");
    stateEl.textContent = paused ? "paused" : store.state === "live" ? "live" : store.state === "connecting" ? "connecting…" :
      store.state === "refused" ? "refused: " + (store.error && store.error.message) : "reconnecting: " + (store.error ? store.error.message : "");
    const denyRate = c.decisions ? Math.round((c.denies / c.decisions) * 100) + "%" : "—";
    countersEl.replaceChildren(...[
      ["Received", c.received], ["Decisions", c.decisions], ["Denied", c.denies], ["Deny rate", denyRate],
      ["Observations", c.observations], ["Synthetic", c.synthetic], ["Matching", matching],
    ].map(([k, v]) => h("div", {}, h("dt", {}, k), h("dd", {}, String(v)))));
    chart.render(chartEl, store.rates, store.nowSec());
    summary.textContent = items.length ? (matching > shown.length ? "Showing the newest " + shown.length + " of " + matching + " matching items." : plural(matching, "matching item") + ".") +
      " The console keeps the newest " + store.items.length + " of what it received." : "";
    fill(emptyEl);
    if (!items.length) emptyEl.append(emptyState());
    else if (!matching) emptyEl.append(h("div", { class: "empty" }, h("strong", {}, "Nothing matches the filters."), "Change or ", h("button", { type: "button", on: { click: () => clearBtn.click() } }, "clear the filters"), "."));
  }

  function emptyState() {
    const cmd = "curl -s " + location.origin + "/ahp.v1.InterceptService/Intercept -H 'Content-Type: application/json'" +
      (ctx.info.auth ? " -H \"Authorization: Bearer $AHP_AGENT_TOKEN\"" : "") +
      " -d '{\"event\":{\"id\":\"e1\",\"type\":\"EVENT_TYPE_TOOL_BEFORE\",\"session\":{\"id\":\"s1\"},\"tool\":{\"name\":\"Bash\",\"kind\":\"TOOL_KIND_SHELL\",\"input\":{\"command\":\"rm -rf /\"}}}}'";
    return h("div", { class: "empty" },
      h("strong", {}, "No decisions or observations yet."),
      h("p", {}, "They appear here as soon as an agent, the bridge or a client calls this server. To see one now, send an intercept:"),
      h("pre", {}, cmd));
  }

  const unsub = store.subscribe(() => schedule());
  const tick = setInterval(() => schedule(), 2000); // the chart's time axis moves
  draw();
  return () => { unsub(); clearInterval(tick); document.removeEventListener("keydown", onKey); };
}

function row(item) {
  const v = verdict(item);
  const d = item.decision;
  const rules = (d && d.matchedRuleIds) || [];
  const dry = new Set(((d && d.dryRuns) || []).map((x) => x.ruleId));
  const time = timeEl(item.time);
  const first = d ? h("a", { href: "#/decision/" + encodeURIComponent(d.decisionId), "aria-label": "Decision " + v + " at " + time.textContent + ": details" }, time) : time;
  return h("tr", { "data-key": itemKey(item), "data-verdict": v, "data-decision": d ? d.decisionId : null },
    h("td", { class: "mono" }, first),
    h("td", {}, verdictBadge(v), d && d.synthetic ? [" ", h("span", { class: "badge v-synthetic", title: "decided by the system, not a policy rule" }, "synthetic")] : null),
    h("td", {}, eventType(item.event && item.event.type)),
    h("td", { class: "mono" }, toolOf(item.event)),
    h("td", { class: "mono hide-narrow" }, agentOf(item.event)),
    h("td", { class: "mono hide-narrow" }, sessionOf(item.event)),
    h("td", { class: "mono hide-narrow" }, rules.map((r, i) => [i ? ", " : "", r, dry.has(r) ? h("span", { class: "badge v-dry", title: "dry-run: would have applied" }, "dry-run") : null])),
  );
}

// setFilters sets filters from a link's query (#/live?session=s1); an empty query keeps them.
export function setFilters(params) {
  if (!params) return;
  for (const k of Object.keys(filters)) if (params[k] !== undefined) filters[k] = String(params[k]).slice(0, 256);
}
