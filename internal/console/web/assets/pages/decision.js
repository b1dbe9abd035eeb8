// Decision detail: the redacted event, the effects sent, fallbacks, matched rules (dry-run ones
// marked), the policy in force, timing, and for a synthetic decision why it was synthetic.

import { fill, h, verdict, verdictBadge, eventType, timeEl, agentOf, sessionOf, toolOf, effectKind, effectText, ago } from "../format.js";
import { getJSON } from "../api.js";
import { store } from "../store.js";

export async function mount(root, ctx, id) {
  fill(root, h("h1", {}, "Decision"), h("p", { class: "muted", role: "status" }, "Loading…"));
  let item = null, policy = null, note = null;
  try {
    const r = await fetchDecision(id);
    item = r.item;
    policy = r.policy;
  } catch (e) {
    if (e.unauthenticated || e.forbidden) return ctx.refused(e);
    item = store.find(id) || null;
    if (!item) {
      fill(root, h("h1", {}, "Decision"), h("div", { class: "empty" },
        h("strong", {}, "This decision is not remembered any more."),
        "The console keeps only the most recent decisions (" + e.message + "). Find it in the audit log by its id ",
        h("code", {}, id), ", or go back to ", h("a", { href: "#/live" }, "Live"), "."));
      return;
    }
    note = "The server no longer remembers this decision; shown from what this page received.";
  }
  render(root, item, policy, note);
}

// fetchDecision asks the server for one decision. The console records decisions from the same
// Watch machinery as Live, a moment after they are answered, so a link followed at once (a
// decision id from an API answer) may arrive first: a 404 is asked again a few times, for about
// two seconds, before the page says the decision is not remembered.
async function fetchDecision(id) {
  for (let wait = 100; ; wait *= 2) {
    try {
      return await getJSON("api/decisions/" + encodeURIComponent(id));
    } catch (e) {
      if (e.status !== 404 || wait > 1600) throw e;
      await new Promise((resolve) => setTimeout(resolve, wait));
    }
  }
}

function render(root, item, policy, note) {
  const d = item.decision || {};
  const ev = item.event || {};
  const v = verdict(item);
  const dry = new Map((d.dryRuns || []).map((x) => [x.ruleId, x.wouldBe]));
  const kv = (pairs) => h("dl", { class: "kv" }, pairs.filter(([, val]) => val !== undefined && val !== null && val !== "").map(([k, val]) => [h("dt", {}, k), h("dd", {}, val)]));
  const origin = ev.origin || {};
  fill(root, 
    h("h1", {}, "Decision ", verdictBadge(v), d.synthetic ? [" ", h("span", { class: "badge v-synthetic" }, "synthetic")] : null),
    note ? h("div", { class: "notice" }, note) : null,
    d.synthetic ? h("div", { class: "error", id: "synthetic-reason" },
      h("strong", {}, "Synthetic: "), "the system made this decision, not a policy rule. ",
      syntheticReason(d)) : null,
    h("section", { class: "panel" }, kv([
      ["Decision id", h("code", {}, d.decisionId)],
      ["Time", [timeEl(item.time, true), " · ", ago(item.time)]],
      ["Event", [eventType(ev.type), " ", h("code", {}, ev.id)]],
      ["Event time", ev.time ? [timeEl(ev.time, true), h("span", { class: "muted" }, " as the sender wrote it")] : null],
      ["Tool", toolOf(ev) ? h("code", {}, toolOf(ev)) : null],
      ["Session", sessionOf(ev) ? h("code", {}, sessionOf(ev)) : null],
      ["Agent", agentOf(ev) ? h("code", {}, agentOf(ev)) : null],
      ["Source", ev.source],
      ["Dialect", origin.dialect ? origin.dialect.replace(/^DIALECT_/, "").toLowerCase() + (origin.protocolVersion ? " " + origin.protocolVersion : "") + (origin.eventType ? " (" + origin.eventType + ")" : "") : null],
      ["Evaluation time", d.latencyUs !== undefined ? d.latencyUs + " µs" : "under 1 µs"],
      ["Replayed", d.replayed ? "yes: the answer remembered for this event id was sent again" : null],
      ["Policy", policy && policy.digest ? [policy.name + " · revision " + policy.revision + " · ", h("code", {}, policy.digest),
        h("div", { class: "muted" }, "the policy in force when the console recorded this decision")] : "not known (the decision was not recorded by the server's console)"],
      ["Approval", d.approvalId ? h("a", { href: "#/approvals/" + encodeURIComponent(d.approvalId), id: "approval-link", class: "mono" }, d.approvalId)
        : v === "ask" || v === "escalate" ? "none: no rule that matched has an approval: block, so the caller was told to ask (or got the rule's fallback)" : null],
    ])),
    h("h2", {}, "Effects sent"),
    list(d.effects, (e) => [h("span", { class: "badge v-" + badgeFor(effectKind(e)) }, effectKind(e)), " ", effectText(e), e.ruleId ? [" · rule ", ruleLink(e.ruleId)] : " · built-in"],
      "No effects: the caller was told nothing objects (allow)."),
    h("h2", {}, "Fallbacks"),
    list(d.fallbacks, (f) => [ruleLink(f.ruleId), ": wanted ", h("strong", {}, effectKind(f.wanted)), ", sent ", h("strong", {}, f.sent ? effectKind(f.sent) : "nothing"), " — ", f.reason],
      "None: the caller could express every effect."),
    h("h2", {}, "Matched rules"),
    list(d.matchedRuleIds, (r) => [ruleLink(r), dry.has(r) ? [" ", h("span", { class: "badge v-dry" }, "dry-run"), " would have: ", effectKind(dry.get(r)), " ", effectText(dry.get(r))] : ""],
      "No rule matched."),
    h("h2", {}, "Event (redacted)"),
    h("pre", { id: "event-json" }, JSON.stringify(ev, null, 2)),
    h("h2", {}, "Decision"),
    h("pre", { id: "decision-json" }, JSON.stringify(d, null, 2)),
  );
}

function syntheticReason(d) {
  const deny = (d.effects || []).find((e) => e.deny);
  if (deny) return [deny.deny.reason, deny.deny.code ? [" (", h("code", {}, deny.deny.code), ")"] : null];
  if ((d.fallbacks || []).length) return "A fallback: " + d.fallbacks.map((f) => f.reason).join("; ");
  return "The decision does not say why.";
}

function badgeFor(kind) {
  return ["allow", "deny", "ask", "modify", "defer", "escalate"].includes(kind) ? kind : "observed";
}

function ruleLink(id) {
  return h("a", { href: "#/policy/" + encodeURIComponent(id), class: "mono" }, id);
}

function list(xs, render, empty) {
  if (!xs || !xs.length) return h("p", { class: "muted" }, empty);
  return h("ul", { class: "plain panel" }, xs.map((x) => h("li", {}, render(x))));
}
