// Policy: the running policy's source, revision and digest, each rule's hit and dry-run counts,
// and the last reload result.

import { fill, h, timeEl, ago } from "../format.js";
import { getJSON } from "../api.js";

export async function mount(root, ctx, focusRule) {
  fill(root, h("h1", {}, "Policy"), h("p", { class: "muted", role: "status" }, "Loading…"));
  let p;
  try {
    p = await getJSON("api/policy");
  } catch (e) {
    if (e.unauthenticated || e.forbidden) return ctx.refused(e);
    fill(root, h("h1", {}, "Policy"), h("div", { class: "error", role: "alert" }, "Could not load the policy: " + e.message));
    return;
  }
  const rel = p.reload || {};
  const last = rel.last;
  const reloadText = !rel.from_file ? "The built-in policy is in force; it is never reloaded. Start the server with -policy FILE to edit rules without a restart." :
    !last ? "No reload yet: the policy file has not changed since the server started (" + rel.reloads + " reloads, " + rel.failures + " failures)." : null;
  const counts = ctx.info.features && ctx.info.features.rule_counts;
  fill(root, 
    h("h1", {}, "Policy ", h("span", { class: "muted" }, p.name)),
    h("section", { class: "panel" }, h("dl", { class: "kv" },
      h("dt", {}, "Source"), h("dd", { class: "mono" }, p.source),
      h("dt", {}, "Digest"), h("dd", { class: "mono", id: "policy-digest" }, p.digest),
      h("dt", {}, "Revision"), h("dd", {}, String(p.revision.revision), h("span", { class: "muted" }, " — the " + ordinal(p.revision.revision) + " policy this server has had in force, since "), timeEl(p.revision.since, true)),
      h("dt", {}, "Last reload"), h("dd", { id: "reload-result" }, reloadText ? reloadText : [
        h("span", { class: "badge " + (last.ok ? "v-allow" : "v-deny") }, last.ok ? "succeeded" : "failed"), " ", timeEl(last.time, true), " (" + ago(last.time) + ")",
        last.error ? h("pre", {}, last.error) : null,
        h("div", { class: "muted" }, rel.reloads + " reloads, " + rel.failures + " failures since start" + (last.ok ? "" : "; the previous policy stays in force")),
      ]),
    )),
    h("h2", {}, "Rules (" + p.rules.length + ")"),
    counts ? null : h("div", { class: "notice" }, "Rule match counts are not kept on this server (metrics are off)."),
    p.rules.length ? h("div", { class: "panel scroll" }, h("table", { id: "rules" },
      h("caption", { class: "sr-only" }, "Rules in evaluation order with their match counts since the server started"),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Rule"), h("th", { scope: "col" }, "Effect"), h("th", { scope: "col", class: "hide-narrow" }, "On"),
        h("th", { scope: "col", class: "num" }, "Hits"), h("th", { scope: "col", class: "num" }, "Dry-run hits"), h("th", { scope: "col", class: "hide-narrow" }, "Line"))),
      h("tbody", {}, p.rules.map((r) => h("tr", { id: "rule-" + r.id, class: r.id === focusRule ? "target" : null },
        h("th", { scope: "row" }, h("code", {}, r.id), r.dry_run ? [" ", h("span", { class: "badge v-dry" }, "dry-run")] : null, r.description ? h("div", { class: "muted" }, r.description) : null),
        h("td", {}, r.effect, r.fallback ? h("div", { class: "muted" }, "fallback: " + r.fallback) : null),
        h("td", { class: "mono hide-narrow" }, r.on && r.on.length ? r.on.join(", ") : "every event"),
        h("td", { class: "num" }, r.hits === undefined ? "—" : String(r.hits)),
        h("td", { class: "num" }, r.dry_run_hits === undefined ? "—" : String(r.dry_run_hits)),
        h("td", { class: "num hide-narrow" }, r.line ? String(r.line) : ""),
      ))),
    )) : h("div", { class: "empty" }, h("strong", {}, "The policy has no rules."), "Every event is allowed. Add rules to the policy file; the server reloads it when it changes."),
    h("h2", {}, "Source"),
    p.redacted ? h("div", { class: "notice" }, "Parts of the source that look like secrets are masked.") : null,
    h("pre", { id: "policy-source", tabindex: "0", "aria-label": "Policy source" }, p.text),
    p.history && p.history.length > 1 ? [h("h2", {}, "Revisions seen"), h("ul", { class: "plain panel" }, p.history.slice().reverse().map((r) =>
      h("li", {}, "revision " + r.revision + " · " + r.name + " · ", h("code", {}, r.digest), " · since ", timeEl(r.since, true))))] : null,
  );
  if (focusRule) {
    const row = document.getElementById("rule-" + focusRule);
    if (row) row.scrollIntoView({ block: "center" });
  }
}

function ordinal(n) {
  const s = ["th", "st", "nd", "rd"], v = n % 100;
  return n + (s[(v - 20) % 10] || s[v] || s[0]);
}
