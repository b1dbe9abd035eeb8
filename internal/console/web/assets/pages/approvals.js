// Approvals: calls that ask and escalate rules with an `approval:` block hold until a person
// decides. Pending ones with a countdown to the end of their hold, approve and deny with a
// comment, and the history with approver, outcome and latency. The page reads the server's
// read-only ApprovalService view under api/approvals/ (the watch scope: List, then Watch as a
// Connect server stream) and decides through the API's ApprovalService/Decide, which needs the
// approve scope; the deciding principal is whoever the token authenticates, never the page.

import { fill, h, timeEl, ago } from "../format.js";
import { callJSON, ApiError } from "../api.js";
import { serverStream } from "../watch.js";
import { store } from "../store.js";

const VIEW = "api/approvals/ahp.v1.ApprovalService/";
const DECIDE = "/ahp.v1.ApprovalService/Decide";
const DOCS = "https://github.com/ahp-gateway/ahp/blob/main/docs/approvals.md";
const MAX_KEPT = 500; // decided approvals kept on the page
const MAX_COMMENT = 1024;

// canDecide reports whether the signed-in credential may decide: it has the approve scope, or
// the server has no authentication at all (then anyone reaching it on loopback may).
export function canDecide(info) {
  return !info.auth || (info.scopes || []).includes("approve");
}

export function stateName(a) {
  return (a.state || "").replace(/^APPROVAL_STATE_/, "").toLowerCase() || "unknown";
}

// latency says how long a decision took, from request to decision or expiry.
export function latency(ms) {
  const n = Number(ms || 0);
  if (n < 1000) return n + " ms";
  if (n < 60000) return (n / 1000).toFixed(1) + " s";
  const m = Math.floor(n / 60000), s = Math.round((n % 60000) / 1000);
  if (m < 60) return m + " min " + s + " s";
  return Math.floor(m / 60) + " h " + (m % 60) + " min";
}

// remaining says how long until a hold ends (by the server's clock).
export function remaining(iso, nowMs) {
  const left = Math.max(0, Math.floor((new Date(iso).getTime() - nowMs) / 1000));
  const hh = Math.floor(left / 3600), mm = Math.floor((left % 3600) / 60), ss = left % 60;
  const pad = (x) => String(x).padStart(2, "0");
  return { left, text: (hh ? hh + ":" + pad(mm) : String(mm)) + ":" + pad(ss) };
}

export function mount(root, ctx, focusId) {
  if (!ctx.info.features || !ctx.info.features.approvals) {
    fill(root, h("h1", {}, "Approvals"), h("div", { class: "empty", id: "approvals-empty" },
      h("strong", {}, "This server holds no approvals."),
      h("p", {}, "Rules with an ask or escalate effect get their fallback (a denial by default) instead of waiting for a person."),
      h("p", {}, "See ", h("a", { href: DOCS, rel: "noreferrer" }, "docs/approvals.md"), " to configure approvals.")));
    return;
  }
  const decide = canDecide(ctx.info);
  const byId = new Map();
  const cards = new Map(); // pending approval id -> its card, kept across updates (comments, focus)
  const abort = new AbortController();

  const stateEl = h("span", { class: "state", id: "approvals-state", role: "status" });
  const pendingList = h("ul", { class: "plain approvals", id: "pending", "aria-label": "Pending approvals" });
  const pendingHead = h("h2", { id: "pending-head" }, "Pending");
  const pendingEmpty = h("div", { class: "empty", id: "pending-empty" },
    h("strong", {}, "Nothing is waiting for a decision."),
    h("p", {}, "A call that an ask or escalate rule with an ", h("code", {}, "approval:"), " block holds appears here at once. ",
      "Which rules hold calls, who may decide and how long a hold lasts: ", h("a", { href: DOCS, rel: "noreferrer" }, "docs/approvals.md"), "."));
  const historyBody = h("tbody", { id: "history-rows" });
  const historyEmpty = h("p", { class: "muted", id: "history-empty" }, "No approval has been decided or has expired yet.");
  const detail = h("div", { id: "approval-detail-slot" });

  fill(root,
    h("h1", {}, "Approvals"),
    decide ? null : h("div", { class: "notice", id: "approve-scope-note", role: "note" },
      h("strong", {}, "View only: "), "this token has no approve scope, so it can watch approvals but not decide them. ",
      "Sign in with a token that has both the watch and the approve scope to approve or deny."),
    h("div", { class: "toolbar" }, stateEl, h("span", { class: "muted" }, "Updates live; times in your time zone.")),
    detail,
    pendingHead, pendingEmpty, pendingList,
    h("h2", {}, "History"),
    historyEmpty,
    h("div", { class: "scroll panel", id: "history-wrap" }, h("table", { id: "history" },
      h("caption", { class: "sr-only" }, "Decided and expired approvals, newest first"),
      h("thead", {}, h("tr", {},
        h("th", { scope: "col" }, "Decided"), h("th", { scope: "col" }, "Outcome"), h("th", { scope: "col" }, "Call"),
        h("th", { scope: "col" }, "Approver"), h("th", { scope: "col" }, "Comment"),
        h("th", { scope: "col", class: "num" }, "Latency"))),
      historyBody)));

  function setState(s, err) {
    stateEl.className = "state " + (s === "live" ? "live" : s === "down" ? "down" : "");
    stateEl.textContent = s === "live" ? "live" : s === "down" ? "reconnecting: " + (err ? err.message : "") : "connecting…";
  }
  setState("connecting");

  // put records an approval, keeping the newest revision of each.
  function put(a) {
    if (!a || !a.id) return;
    const old = byId.get(a.id);
    if (old && Number(old.revision || 0) > Number(a.revision || 0)) return;
    byId.set(a.id, a);
    if (byId.size > MAX_KEPT + 1000) {
      const decided = [...byId.values()].filter((x) => stateName(x) !== "pending").sort(newestFirst);
      for (const x of decided.slice(MAX_KEPT)) byId.delete(x.id);
    }
  }

  function render() {
    const all = [...byId.values()];
    const pending = all.filter((a) => stateName(a) === "pending").sort((a, b) => (a.createdAt < b.createdAt ? -1 : 1));
    const done = all.filter((a) => stateName(a) !== "pending").sort(newestFirst).slice(0, MAX_KEPT);
    pendingHead.textContent = "Pending (" + pending.length + ")";
    pendingEmpty.hidden = pending.length > 0;
    const keep = new Set(pending.map((a) => a.id));
    for (const [id, card] of cards) if (!keep.has(id)) { card.el.remove(); cards.delete(id); }
    let prev = null;
    for (const a of pending) {
      let card = cards.get(a.id);
      if (!card) { card = pendingCard(a); cards.set(a.id, card); }
      card.update(a);
      if (prev ? prev.nextSibling !== card.el : pendingList.firstChild !== card.el) {
        pendingList.insertBefore(card.el, prev ? prev.nextSibling : pendingList.firstChild);
      }
      prev = card.el;
    }
    historyEmpty.hidden = done.length > 0;
    historyBody.replaceChildren(...done.map(historyRow));
    if (focusId) renderDetail();
    tick();
  }

  function renderDetail() {
    const a = byId.get(focusId);
    if (!a) {
      detail.replaceChildren(h("div", { class: "notice", id: "approval-detail" }, "Approval ", h("code", {}, focusId), " is not known to this server (any more): decided approvals are kept for a day."));
      return;
    }
    detail.replaceChildren(h("section", { class: "panel", id: "approval-detail", "aria-label": "Approval " + a.id },
      h("h2", {}, "Approval ", h("span", { class: "badge v-" + outcomeBadge(a) }, stateName(a))),
      facts(a, true)));
  }

  function pendingCard(a) {
    const id = a.id;
    const countdown = h("span", { class: "countdown", "data-hold": "", "aria-label": "time left in the hold" });
    const body = h("div", {});
    const status = h("div", { class: "decide-status", role: "status", "aria-live": "polite" });
    let form = null;
    if (decide) {
      const comment = h("input", { id: "comment-" + id, name: "comment", type: "text", maxlength: MAX_COMMENT, autocomplete: "off",
        placeholder: "Why (optional; the agent sees it)" });
      const approveBtn = h("button", { type: "submit", class: "primary approve", value: "approve" }, "Approve");
      const denyBtn = h("button", { type: "submit", class: "deny", value: "deny" }, "Deny");
      form = h("form", { class: "decide", "aria-label": "Decide approval " + id },
        h("label", { for: "comment-" + id }, "Comment", comment),
        h("div", { class: "buttons" }, approveBtn, denyBtn));
      // Enter in the comment does not decide (a form's implicit submission would approve):
      // deciding takes a deliberate press of Approve or Deny.
      comment.addEventListener("keydown", (e) => { if (e.key === "Enter") e.preventDefault(); });
      form.addEventListener("submit", async (e) => {
        e.preventDefault();
        if (!e.submitter) return; // only a press of one of the two buttons decides
        const approve = e.submitter.value === "approve";
        const text = comment.value.trim();
        if (new TextEncoder().encode(text).length > MAX_COMMENT) {
          status.className = "decide-status error";
          status.textContent = "The comment is longer than " + MAX_COMMENT + " bytes.";
          return;
        }
        approveBtn.disabled = denyBtn.disabled = comment.disabled = true;
        status.className = "decide-status";
        status.textContent = approve ? "Approving…" : "Denying…";
        try {
          const r = await callJSON(DECIDE, { id, approve, comment: text }, { signal: abort.signal });
          put(r.approval);
          render();
        } catch (err) {
          if (err.name === "AbortError") return;
          if (err.unauthenticated) return ctx.refused(err);
          approveBtn.disabled = denyBtn.disabled = comment.disabled = false;
          status.className = "decide-status error";
          status.textContent = decideError(err);
        }
      });
    }
    const el = h("li", { class: "approval panel", "data-approval": id },
      h("div", { class: "approval-head" },
        h("span", { class: "badge v-ask" }, a.kind || "ask"), " ",
        h("strong", {}, a.tool || a.eventType || "call"),
        h("span", { class: "hold" }, "hold ends in ", countdown)),
      body, form || h("p", { class: "muted can-not-decide" }, "Deciding needs a token with the approve scope."), status);
    return {
      el,
      update(x) {
        countdown.dataset.hold = x.holdUntil || "";
        body.replaceChildren(facts(x, false));
      },
    };
  }

  // tick updates every countdown (by the server's clock).
  function tick() {
    const now = Date.now() + (store.skewMs || 0);
    for (const el of pendingList.querySelectorAll(".countdown")) {
      if (!el.dataset.hold) { el.textContent = "—"; continue; }
      const r = remaining(el.dataset.hold, now);
      el.textContent = r.left > 0 ? r.text : "0:00 (expiring)";
      el.classList.toggle("soon", r.left < 60);
    }
  }
  const timer = setInterval(tick, 1000);

  async function load() {
    const r = await callJSON(VIEW + "List", { limit: 200 }, { signal: abort.signal });
    for (const a of r.approvals || []) put(a);
    if (focusId && !byId.has(focusId)) {
      try {
        const g = await callJSON(VIEW + "Get", { id: focusId }, { signal: abort.signal });
        put(g.approval);
      } catch (e) {
        if (e.code !== "not_found" && e.code !== "invalid_argument") throw e;
      }
    }
    render();
  }

  async function loop() {
    let retry = 0;
    while (!abort.signal.aborted) {
      try {
        await load();
        await serverStream(VIEW + "Watch", {}, {
          signal: abort.signal,
          onOpen: () => { retry = 0; setState("live"); },
          onItem: (m) => { put(m.approval); render(); },
        });
      } catch (e) {
        if (abort.signal.aborted || e.name === "AbortError") return;
        if (e.unauthenticated || (e.forbidden && e.status !== 200)) return ctx.refused(e);
        setState("down", e);
        retry = Math.min(retry + 1, 6);
        await new Promise((r) => setTimeout(r, 500 * 2 ** retry));
      }
    }
  }
  loop();

  return () => { abort.abort(); clearInterval(timer); };
}

function newestFirst(a, b) {
  const x = a.decidedAt || a.createdAt || "", y = b.decidedAt || b.createdAt || "";
  return x < y ? 1 : x > y ? -1 : 0;
}

function outcomeBadge(a) {
  return { approved: "allow", denied: "deny", expired: "observed", pending: "ask" }[stateName(a)] || "observed";
}

function facts(a, full) {
  const kv = (pairs) => h("dl", { class: "kv" }, pairs.filter(([, v]) => v !== undefined && v !== null && v !== "" && !(Array.isArray(v) && !v.length))
    .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
  const approvers = (a.approvers || []).map((l) => (l.approvers || []).join(" or ")).filter(Boolean);
  return kv([
    ["Reason", a.reason],
    ["Target", a.target],
    ["Input", a.inputSummary ? h("pre", { class: "input" }, a.inputSummary) : null],
    ["Agent", a.agentId ? h("code", {}, a.agentId) : null],
    ["Session", a.sessionId ? h("code", {}, a.sessionId) : null],
    ["Caller", a.principal ? h("code", {}, a.principal) : null],
    ["Rules", (a.ruleIds || []).map((r, i) => [i ? ", " : "", h("a", { href: "#/policy/" + encodeURIComponent(r), class: "mono" }, r)])],
    ["Approvers", approvers.length ? approvers.join("; and ") : "anyone with the approve scope"],
    ["Requested", a.createdAt ? [timeEl(a.createdAt, true), " · ", ago(a.createdAt)] : null],
    ["If nobody decides", a.onTimeoutDeny ? "denied when the hold ends" : "the other rules decide when the hold ends"],
    full ? ["Decided", a.decidedAt ? [timeEl(a.decidedAt, true), a.decidedBy ? [" by ", h("strong", {}, a.decidedBy)] : null, " · after ", latency(a.latencyMs)] : null] : null,
    full ? ["Comment", a.comment] : null,
    full ? ["Grant", a.grantExpiresAt ? (a.consumedAt ? ["used ", timeEl(a.consumedAt, true)] : ["usable once until ", timeEl(a.grantExpiresAt, true)]) : null] : null,
    full ? ["Event", a.eventId ? [a.eventType || "", " ", h("code", {}, a.eventId)] : null] : null,
    ["Approval id", h("a", { href: "#/approvals/" + encodeURIComponent(a.id), class: "mono" }, a.id)],
  ].filter(Boolean));
}

// cell is a history cell: its content in one box, so that the phone layout can put the column's
// label beside it.
function cell(attrs, ...children) {
  return h("td", attrs, h("div", {}, ...children));
}

function historyRow(a) {
  const s = stateName(a);
  return h("tr", { "data-approval": a.id, "data-state": s },
    cell({ "data-label": "Decided" }, a.decidedAt ? timeEl(a.decidedAt) : "—"),
    cell({ "data-label": "Outcome" }, h("a", { href: "#/approvals/" + encodeURIComponent(a.id), "aria-label": s + ": details of approval " + a.id },
      h("span", { class: "badge v-" + outcomeBadge(a) }, s)), a.abandoned ? h("span", { class: "muted" }, " (caller gone)") : null),
    cell({ "data-label": "Call" }, h("strong", {}, a.tool || a.eventType || "call"), a.agentId ? [" · ", h("code", {}, a.agentId)] : null,
      a.inputSummary ? h("div", { class: "muted mono clip" }, a.inputSummary) : null),
    cell({ class: "approver", "data-label": "Approver" }, a.decidedBy || (s === "expired" ? "nobody (hold ended)" : "—")),
    cell({ class: "comment", "data-label": "Comment" }, a.comment || ""),
    cell({ class: "num", "data-label": "Latency" }, latency(a.latencyMs)));
}

function decideError(err) {
  if (!(err instanceof ApiError)) return "The decision failed: " + err.message;
  switch (err.code) {
    case "permission_denied":
      return /scope/.test(err.message) ? "This token may not decide: it lacks the approve scope." : "You are not an approver of this approval: " + err.message;
    case "failed_precondition": return "Too late: " + err.message + " (the first decision stands).";
    case "not_found": return "This approval is not known any more.";
    case "invalid_argument": return "The server refused the comment: " + err.message;
    default: return "The decision failed: " + err.message;
  }
}
