// Sessions: recent sessions with their counters and last events.

import { fill, h, timeEl, ago, verdictBadge, plural } from "../format.js";
import { getJSON } from "../api.js";

export async function mount(root, ctx) {
  fill(root, h("h1", {}, "Sessions"), h("p", { class: "muted", role: "status" }, "Loading…"));
  let r;
  try {
    r = await getJSON("api/sessions");
  } catch (e) {
    if (e.unauthenticated || e.forbidden) return ctx.refused(e);
    fill(root, h("h1", {}, "Sessions"), h("div", { class: "error", role: "alert" }, "Could not load sessions: " + e.message));
    return;
  }
  const t = r.tracker || {};
  const note = h("p", { class: "muted" }, "Sessions seen since ", timeEl(t.since, true), ", most recently active first" +
    (t.gaps ? "; the console fell behind " + plural(t.gaps, "time") + " and missed what was published meanwhile" : "") + ".",
    t.paused && t.paused.to ? [" Nothing was recorded from ", timeEl(t.paused.from, true), " to ", timeEl(t.paused.to, true), ", while no console was open."] : null);
  const refresh = h("button", { type: "button", on: { click: () => mount(root, ctx) } }, "Refresh");
  if (!r.sessions.length) {
    fill(root, h("h1", {}, "Sessions"), note, h("div", { class: "empty" },
      h("strong", {}, "No sessions yet."),
      "A session appears once an event naming its session id reaches the server (Agent Hooks session.id, Agent Harness session_id). ",
      refresh));
    return;
  }
  fill(root, 
    h("h1", {}, "Sessions"),
    h("div", { class: "toolbar" }, refresh, note),
    h("div", { class: "panel scroll" }, h("table", { id: "sessions" },
      h("caption", { class: "sr-only" }, "Recent sessions"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Session"), h("th", { scope: "col", class: "hide-narrow" }, "Agent"), h("th", { scope: "col" }, "Last active"),
        h("th", { scope: "col", class: "num" }, "Events"), h("th", { scope: "col", class: "num" }, "Decisions"), h("th", { scope: "col", class: "num" }, "Denied"),
        h("th", { scope: "col", class: "num hide-narrow" }, "Tool calls"), h("th", { scope: "col", class: "num hide-narrow" }, "Errors"), h("th", { scope: "col" }, "Last events"))),
      h("tbody", {}, r.sessions.map((s) => h("tr", { "data-session": s.id },
        h("th", { scope: "row" }, h("a", { href: "#/live?session=" + encodeURIComponent(s.id), class: "mono", title: "Show this session on Live" }, s.id)),
        h("td", { class: "mono hide-narrow" }, s.agent || ""),
        h("td", {}, timeEl(s.last_seen), h("div", { class: "muted" }, ago(s.last_seen))),
        h("td", { class: "num" }, String(s.events)), h("td", { class: "num" }, String(s.decisions)), h("td", { class: "num" }, String(s.denies)),
        h("td", { class: "num hide-narrow" }, String(s.tool_calls)), h("td", { class: "num hide-narrow" }, String(s.errors)),
        h("td", {}, h("ul", { class: "plain" }, (s.last_events || []).slice(0, 5).map((e) => h("li", {},
          timeEl(e.time), " ", e.type, e.tool ? [" ", h("code", {}, e.tool)] : null, " ",
          e.decision_id ? h("a", { href: "#/decision/" + encodeURIComponent(e.decision_id) }, verdictBadge(e.verdict)) : verdictBadge("observed"))))),
      ))),
    )),
  );
}
