// Approvals: held ask/escalate decisions waiting for a person. The page has data only on a server
// that keeps approvals (info.features.approvals); until then it says what is missing.

import { fill, h } from "../format.js";

export function mount(root, ctx) {
  if (!ctx.info.features || !ctx.info.features.approvals) {
    fill(root, h("h1", {}, "Approvals"), h("div", { class: "empty", id: "approvals-empty" },
      h("strong", {}, "Approvals are not configured on this server."),
      h("p", {}, "Rules with an ask or escalate effect get their fallback (a denial by default) instead of waiting for a person. " +
        "When this server holds approvals, pending ones appear here to approve or deny."),
      h("p", {}, "See the policy's rules with ", h("a", { href: "#/policy" }, "ask or escalate effects"), ".")));
    return;
  }
  // A server that announces approvals provides this page's data; this build has no client for it.
  fill(root, h("h1", {}, "Approvals"), h("div", { class: "notice" }, "This server keeps approvals, but this console build cannot show them yet."));
}
