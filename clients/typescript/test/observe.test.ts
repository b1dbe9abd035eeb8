// ObservationService against a running ahp-server: ObserveStream (client stream) and Watch (server
// stream), over every transport in the matrix.

import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { Verdict } from "../gen/ahp/v1/decision_pb.js";
import { EventType } from "../gen/ahp/v1/event_pb.js";
import { ObserveStreamRequestSchema, type ObserveStreamRequest, type WatchResponse } from "../gen/ahp/v1/service_pb.js";
import { openWatch, type AhpClient } from "../src/index.js";
import { CALL_TIMEOUT_MS, TEST_TIMEOUT_MS, clientFor, shellEvent, toolAfterEvent, transports, uid } from "./helpers.js";

const call = { timeoutMs: CALL_TIMEOUT_MS };
const bounded = { timeout: TEST_TIMEOUT_MS };

for (const tc of transports) {
  describe(`observation over ${tc.name}`, () => {
    let ahp: AhpClient;
    before(() => {
      ahp = clientFor(tc);
    });
    after(() => ahp.close());

    it("records an ObserveStream and counts accepted and duplicate events", { ...bounded, skip: !tc.clientStreams && "client streams need HTTP/2" }, async () => {
      const session = uid("session");
      const events = Array.from({ length: 5 }, () => toolAfterEvent(session));
      const requests: ObserveStreamRequest[] = events.map((event) => create(ObserveStreamRequestSchema, { event }));
      requests.push(create(ObserveStreamRequestSchema, { event: events[0] })); // a resend: a duplicate
      async function* send() {
        yield* requests;
      }
      const summary = await ahp.observation.observeStream(send(), call);
      assert.equal(summary.accepted, 5n);
      assert.equal(summary.duplicates, 1n);
    });

    it("watches a session: sees the decision and the observation, then stops on abort", bounded, async () => {
      const session = uid("session");
      // The watch carries its own deadline as well, so a lost item cannot hang the test.
      const watch = await openWatch(ahp, { sessionId: session }, { timeoutMs: TEST_TIMEOUT_MS - 2_000 });

      const denied = shellEvent("rm -rf /", session);
      const { decision } = await ahp.intercept.intercept({ event: denied }, call);
      const observed = toolAfterEvent(session);
      await ahp.observation.observe({ event: observed }, call);
      // Outside the watched session: must not show up.
      await ahp.observation.observe({ event: toolAfterEvent(uid("other-session")) }, call);

      const items: WatchResponse[] = [];
      while (items.length < 2) {
        const r = await watch.next();
        assert.equal(r.done, false, "the watch ended early");
        if (!r.done) items.push(r.value);
      }
      const byId = new Map(items.map((it) => [it.event?.id, it]));
      const d = byId.get(denied.id);
      assert.ok(d, `watch saw the intercepted event (got ${[...byId.keys()].join(", ")})`);
      assert.equal(d.event?.type, EventType.TOOL_BEFORE);
      assert.equal(d.decision?.verdict, Verdict.DENY);
      assert.equal(d.decision?.decisionId, decision?.decisionId);
      assert.match(d.time, /^\d{4}-\d\d-\d\dT/);
      const o = byId.get(observed.id);
      assert.ok(o, "watch saw the observation");
      assert.equal(o.event?.type, EventType.TOOL_AFTER);
      assert.equal(o.decision, undefined);

      watch.close();
      await assert.rejects(watch.next(), (err: unknown) => {
        assert.equal(ConnectError.from(err).code, Code.Canceled);
        return true;
      });
    });

    it("filters a watch by event type and decisions_only; iterates with for await", bounded, async () => {
      const session = uid("session");
      const abort = new AbortController();
      const watch = await openWatch(
        ahp,
        { sessionId: session, eventTypes: [EventType.TOOL_BEFORE], decisionsOnly: true },
        { signal: abort.signal, timeoutMs: TEST_TIMEOUT_MS - 2_000 },
      );

      await ahp.observation.observe({ event: toolAfterEvent(session) }, call); // filtered out
      const allowed = shellEvent("ls", session);
      await ahp.intercept.intercept({ event: allowed }, call);
      const denied = shellEvent("rm -rf /", session);
      await ahp.intercept.intercept({ event: denied }, call);

      const seen: string[] = [];
      await assert.rejects(
        (async () => {
          for await (const item of watch) {
            assert.ok(item.decision, "decisions only");
            seen.push(item.event?.id ?? "");
            if (seen.length === 2) abort.abort(); // the caller's own signal ends the watch too
          }
        })(),
        (err: unknown) => ConnectError.from(err).code === Code.Canceled,
      );
      assert.deepEqual(seen, [allowed.id, denied.id]);
    });

  });
}
