// Small helpers: building DOM nodes (text only, never HTML strings), naming enums, and formatting
// times in the viewer's time zone.

// h builds an element: h("a", {href: "#/x", class: "y"}, "text", child, ...). Attributes go
// through setAttribute (event handlers with on: {click: fn}); children are nodes or text.
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "on") for (const [ev, fn] of Object.entries(v)) el.addEventListener(ev, fn);
    else if (k === "class") el.className = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

// svg builds an SVG element the same way.
export function svg(tag, attrs, ...children) {
  const el = document.createElementNS("http://www.w3.org/2000/svg", tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) el.setAttribute(k, String(v));
  for (const c of children) if (c !== undefined && c !== null) el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  return el;
}

let eventTypeNames = {};

// setEventTypeNames takes the server's table of EventType JSON names to canonical names.
export function setEventTypeNames(table) { eventTypeNames = table || {}; }

// eventType names an event type as the protocols do (tool.before).
export function eventType(jsonName) {
  if (!jsonName) return "unknown";
  return eventTypeNames[jsonName] || jsonName.replace(/^EVENT_TYPE_/, "").toLowerCase();
}

export function allEventTypes() { return Object.values(eventTypeNames).sort(); }

// verdict names a verdict (VERDICT_DENY -> deny); an item without a decision is "observed".
export function verdict(item) {
  const v = item && item.decision ? item.decision.verdict : "";
  if (!item || !item.decision) return "observed";
  return v ? v.replace(/^VERDICT_/, "").toLowerCase() : "unspecified";
}

export function verdictBadge(v) {
  return h("span", { class: "badge v-" + v }, v);
}

const timeFmt = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
const dateTimeFmt = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "medium" });
export const timeZone = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";

// clock is a time of day in the viewer's zone, with milliseconds.
export function clock(iso) {
  const d = new Date(iso);
  if (isNaN(d)) return "—";
  return timeFmt.format(d) + "." + String(d.getMilliseconds()).padStart(3, "0");
}

// dateTime is a full date and time in the viewer's zone.
export function dateTime(iso) {
  const d = new Date(iso);
  return isNaN(d) ? "—" : dateTimeFmt.format(d);
}

// timeEl is a <time> element: the local rendering, the exact instant as its datetime and title.
export function timeEl(iso, full) {
  const d = new Date(iso);
  const text = full ? dateTime(iso) : clock(iso);
  return h("time", { datetime: isNaN(d) ? "" : d.toISOString(), title: isNaN(d) ? "" : dateTime(iso) + " (" + timeZone + ")" }, text);
}

// ago says how long ago an instant was.
export function ago(iso, now = Date.now()) {
  const s = Math.round((now - new Date(iso).getTime()) / 1000);
  if (!isFinite(s)) return "";
  if (s < 5) return "just now";
  if (s < 90) return s + " s ago";
  if (s < 5400) return Math.round(s / 60) + " min ago";
  if (s < 129600) return Math.round(s / 3600) + " h ago";
  return Math.round(s / 86400) + " d ago";
}

// agentOf is the agent an event names (Hooks session.agent.id or Harness agent_id).
export function agentOf(ev) {
  return (ev && ev.session && ev.session.agent && ev.session.agent.id) || (ev && ev.harness && ev.harness.agentId) || "";
}

export function sessionOf(ev) { return (ev && ev.session && ev.session.id) || ""; }

export function toolOf(ev) { return (ev && ev.tool && ev.tool.name) || ""; }

// effectKind names an effect's kind (its one set field besides ruleId).
export function effectKind(eff) {
  if (!eff) return "none";
  return Object.keys(eff).find((k) => k !== "ruleId") || "none";
}

// effectText says what an effect does in a few words.
export function effectText(eff) {
  const k = effectKind(eff);
  const body = (eff && eff[k]) || {};
  switch (k) {
    case "deny": return body.reason + (body.code ? " (" + body.code + ")" : "");
    case "ask": case "allow": return body.reason || "";
    case "escalate": return (body.reason || "") + (body.target ? " → " + body.target : "");
    case "defer": return (body.reason || "") + (body.retryAfterMs ? " (retry after " + body.retryAfterMs + " ms)" : "");
    case "message": return body.text || "";
    case "modify": return (body.reason || "") + " " + JSON.stringify(body.value ?? null);
    default: return JSON.stringify(body);
  }
}

// itemKey identifies an item across the backfill and the live stream.
export function itemKey(item) {
  if (item.decision && item.decision.decisionId) return "d:" + item.decision.decisionId;
  return "e:" + (item.event && item.event.id) + "@" + item.time;
}

export function plural(n, one, many) { return n + " " + (n === 1 ? one : many || one + "s"); }

// fill replaces root's children with nodes and text, skipping null, undefined and false and
// flattening arrays (replaceChildren itself would print "null").
export function fill(root, ...children) {
  root.replaceChildren();
  append(root, children);
}
