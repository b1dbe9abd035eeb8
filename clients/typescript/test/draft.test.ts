// Events only the Agent Hooks Protocol "draft" has, with their typed catalogue fields, against a
// running ahp-server with its default policy, over every transport in the matrix.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Verdict } from "../gen/ahp/v1/decision_pb.js";
import { Dialect, EventSchema, EventType } from "../gen/ahp/v1/event_pb.js";
import type { AhpClient } from "../src/index.js";
import { CALL_TIMEOUT_MS, SOURCE, TEST_TIMEOUT_MS, clientFor, transports, uid } from "./helpers.js";

const call = { timeoutMs: CALL_TIMEOUT_MS };
const bounded = { timeout: TEST_TIMEOUT_MS };

for (const tc of transports) {
  describe(`hooks draft events over ${tc.name}`, () => {
    let ahp: AhpClient;
    before(() => {
      ahp = clientFor(tc);
    });
    after(() => ahp.close());

    it("intercepts a turn.start with its catalogue fields", bounded, async () => {
      const event = create(EventSchema, {
        id: uid("turn"),
        source: SOURCE,
        type: EventType.TURN_START,
        origin: { dialect: Dialect.HOOKS, protocolVersion: "draft", eventType: "turn.start" },
        catalogue: { turn: { id: "turn-1" }, trigger: "user" },
      });
      const { decision } = await ahp.intercept.intercept({ event }, call);
      assert.ok(decision, "a decision");
      assert.equal(decision.verdict, Verdict.ALLOW);
      assert.match(decision.decisionId, /\S/);
    });

    it("refuses to intercept the observe-only file.changed", bounded, async () => {
      const event = create(EventSchema, { id: uid("file"), source: SOURCE, type: EventType.FILE_CHANGED });
      await assert.rejects(ahp.intercept.intercept({ event }, call), (err: unknown) => {
        const ce = ConnectError.from(err);
        return ce.code === Code.InvalidArgument && /observe-only/.test(ce.rawMessage);
      });
    });
  });
}
