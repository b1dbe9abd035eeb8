// InterceptService, TypedDecisionService and HarnessService against a running ahp-server with its
// default policy, over every transport in the matrix.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Verdict } from "../gen/ahp/v1/decision_pb.js";
import { EventSchema, EventType } from "../gen/ahp/v1/event_pb.js";
import { RateLimitKind } from "../gen/ahp/v1/typed_pb.js";
import { InterceptStreamRequestSchema, type InterceptStreamRequest } from "../gen/ahp/v1/service_pb.js";
import type { AhpClient } from "../src/index.js";
import { CALL_TIMEOUT_MS, SOURCE, TEST_TIMEOUT_MS, clientFor, shellEvent, transports, uid } from "./helpers.js";

const call = { timeoutMs: CALL_TIMEOUT_MS };
const bounded = { timeout: TEST_TIMEOUT_MS };

for (const tc of transports) {
  describe(`intercept over ${tc.name}`, () => {
    let ahp: AhpClient;
    before(() => {
      ahp = clientFor(tc);
    });
    after(() => ahp.close());

    it("denies rm -rf / with the default policy's rule", bounded, async () => {
      const event = shellEvent("rm -rf /");
      const { decision } = await ahp.intercept.intercept({ event }, call);
      assert.ok(decision, "a decision");
      assert.equal(decision.verdict, Verdict.DENY);
      assert.match(decision.decisionId, /\S/);
      assert.deepEqual(decision.matchedRuleIds, ["deny-rm-rf-root"]);
      assert.equal(decision.replayed, false);
      assert.equal(decision.effects.length, 1);
      const effect = decision.effects[0]!;
      assert.equal(effect.ruleId, "deny-rm-rf-root");
      assert.equal(effect.effect.case, "deny");
      assert.equal(effect.effect.value.code, "dev.ahpgateway.policy.destructive");
      assert.match(effect.effect.value.reason, /filesystem root/);
    });

    it("allows ls with no effects", bounded, async () => {
      const { decision } = await ahp.intercept.intercept({ event: shellEvent("ls -la") }, call);
      assert.ok(decision);
      assert.equal(decision.verdict, Verdict.ALLOW);
      assert.match(decision.decisionId, /\S/);
      assert.deepEqual(decision.matchedRuleIds, []);
      assert.deepEqual(decision.effects, []);
    });

    it("replays the decision for a retried event", bounded, async () => {
      const event = shellEvent("rm -rf ~/");
      const first = await ahp.intercept.intercept({ event }, call);
      const retry = await ahp.intercept.intercept({ event }, call);
      assert.equal(first.decision?.replayed, false);
      assert.equal(retry.decision?.replayed, true);
      assert.equal(retry.decision?.decisionId, first.decision?.decisionId);
      assert.equal(retry.decision?.verdict, Verdict.DENY);
    });

    it("rejects an event without an id: invalid_argument naming event.id", bounded, async () => {
      const event = create(EventSchema, { source: SOURCE, type: EventType.TOOL_BEFORE });
      await assert.rejects(ahp.intercept.intercept({ event }, call), (err: unknown) => {
        const ce = ConnectError.from(err);
        assert.equal(ce.code, Code.InvalidArgument, ce.message);
        assert.match(ce.rawMessage, /event\.id/);
        return true;
      });
    });

    it("rejects an event of unspecified type: invalid_argument naming event.type", bounded, async () => {
      const event = create(EventSchema, { id: uid("untyped"), source: SOURCE });
      await assert.rejects(ahp.intercept.intercept({ event }, call), (err: unknown) => {
        const ce = ConnectError.from(err);
        assert.equal(ce.code, Code.InvalidArgument, ce.message);
        assert.match(ce.rawMessage, /event\.type/);
        return true;
      });
    });

    it("answers a typed rate_limit event with retry", bounded, async () => {
      const event = create(EventSchema, {
        id: uid("rate-limit"),
        source: SOURCE,
        body: {
          case: "rateLimit",
          value: {
            sessionId: uid("session"),
            limitType: { type: { case: "known", value: RateLimitKind.LLM_TOKEN_LIMIT } },
            retryAfterMs: 1500n,
            currentUsage: "95000/100000 tokens",
          },
        },
      });
      const { decision } = await ahp.typed.handleRateLimit({ event }, call);
      assert.equal(decision?.typed.case, "rateLimit");
      const rl = decision?.typed.value;
      assert.equal(rl?.decision.case, "retry");
      assert.ok((rl?.decision.value.retryAfterMs ?? 0n) > 0n, "retry_after_ms > 0");
    });

    it("reports its capabilities", bounded, async () => {
      const caps = await ahp.harness.getCapabilities({}, call);
      assert.equal(caps.harnessProtocolVersion, "2.4");
      assert.ok(caps.interceptableEventTypes.includes(EventType.TOOL_BEFORE));
    });

    it("decides a bidi InterceptStream, answers keyed by event id", { ...bounded, skip: !tc.clientStreams && "bidi streams need HTTP/2" }, async () => {
      const session = uid("session");
      const want = new Map<string, Verdict>();
      const requests: InterceptStreamRequest[] = [];
      for (const [command, verdict] of [["rm -rf /", Verdict.DENY], ["ls", Verdict.ALLOW], ["git status", Verdict.ALLOW]] as const) {
        const event = shellEvent(command, session);
        want.set(event.id, verdict);
        requests.push(create(InterceptStreamRequestSchema, { event }));
      }
      async function* send() {
        yield* requests;
      }
      const got = new Map<string, Verdict>();
      for await (const res of ahp.intercept.interceptStream(send(), call)) {
        assert.equal(res.error, undefined, `no per-event error for ${res.eventId}`);
        got.set(res.eventId, res.decision?.verdict ?? Verdict.UNSPECIFIED);
      }
      assert.deepEqual(got, want);
    });
  });
}
