// The helpers that need no server: toolEvent, readDecision, credentialsInterceptor.

import assert from "node:assert/strict";
import { test } from "node:test";
import { create } from "@bufbuild/protobuf";
import { DecisionSchema, Verdict } from "../gen/ahp/v1/decision_pb.js";
import { EventType, ToolKind } from "../gen/ahp/v1/event_pb.js";
import { credentialsInterceptor, readDecision, toolEvent } from "../src/index.js";

test("toolEvent fills a tool.before with a fresh id and a call id", () => {
  const a = toolEvent({ name: "Bash", kind: ToolKind.SHELL, input: { command: "ls" }, sessionId: "s1" });
  const b = toolEvent({ name: "Bash" });
  assert.equal(a.type, EventType.TOOL_BEFORE);
  assert.equal(a.tool?.callId, `call-${a.id}`);
  assert.deepEqual(a.tool?.input, { command: "ls" });
  assert.equal(a.session?.id, "s1");
  assert.equal(b.session, undefined);
  assert.equal(b.tool?.kind, ToolKind.OTHER);
  assert.notEqual(a.id, b.id);
});

test("readDecision reads the first deny, ask or escalate effect", () => {
  const d = create(DecisionSchema, {
    decisionId: "d1",
    verdict: Verdict.DENY,
    effects: [
      { effect: { case: "message", value: { text: "note" } }, ruleId: "r0" },
      { effect: { case: "deny", value: { reason: "no", code: "c" } }, ruleId: "r1" },
      { effect: { case: "ask", value: { reason: "later" } }, ruleId: "r2" },
    ],
  });
  assert.deepEqual(readDecision(d), { allowed: false, verdict: Verdict.DENY, reason: "no", code: "c", ruleId: "r1", decisionId: "d1" });
  assert.equal(readDecision(create(DecisionSchema, { verdict: Verdict.ALLOW })).allowed, true);
  assert.throws(() => readDecision(undefined), /no decision/);
});

test("credentialsInterceptor sends one credential and refuses two or an empty one", async () => {
  assert.equal(credentialsInterceptor({}), undefined);
  assert.throws(() => credentialsInterceptor({ token: "a", apiKey: "b" }), /not both/);
  assert.throws(() => credentialsInterceptor({ token: "" }), /empty/);
  for (const [creds, name, value] of [
    [{ token: "t0ken" }, "Authorization", "Bearer t0ken"],
    [{ apiKey: "k3y" }, "X-API-Key", "k3y"],
  ] as const) {
    const header = new Headers();
    const next = credentialsInterceptor(creds)!(async (req) => req as never);
    await next({ header } as never);
    assert.equal(header.get(name), value);
  }
});
