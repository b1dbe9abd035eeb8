"""The Python client against a running ahp-server (default policy) over gRPC on real h2c.

Run with Debian's interpreter, which sees python3-grpcio and python3-protobuf, either on the source
tree or on the installed ahp-client package (then without PYTHONPATH):
    AHP_SERVER_URL=http://127.0.0.1:8080 PYTHONPATH=clients/python:clients/python/gen \
        /usr/bin/python3 -m unittest discover -s clients/python/tests -v
scripts/test-clients.sh starts a server and does both.
"""

from __future__ import annotations

import os
import threading
import unittest
import uuid

import grpc
from google.protobuf import struct_pb2

from ahp_client import (
    AhpClient,
    catalogue_pb2,
    decision_pb2,
    event_pb2,
    harness_pb2,
    service_pb2,
    struct,
    typed_pb2,
)

# Deadline of every call, in seconds; streams get STREAM_TIMEOUT. Together they bound each test.
CALL_TIMEOUT = 5.0
STREAM_TIMEOUT = 10.0
SOURCE = "urn:ahp:clients:python-test"

client: AhpClient


def setUpModule() -> None:
    global client
    url = os.environ.get("AHP_SERVER_URL")
    if not url:
        raise RuntimeError("AHP_SERVER_URL is not set: run scripts/test-clients.sh, or start ahp-server and export its URL")
    client = AhpClient(url)
    client.wait_ready(timeout=10)


def tearDownModule() -> None:
    client.close()


def uid(prefix: str) -> str:
    """A fresh id: the server replays the decision for a repeated (source, id, content), and one
    server serves every run of the suite."""
    return f"py-{prefix}-{uuid.uuid4()}"


def shell_event(command: str, session_id: str | None = None) -> event_pb2.Event:
    event_id = uid("shell")
    return event_pb2.Event(
        id=event_id,
        source=SOURCE,
        type=event_pb2.EVENT_TYPE_TOOL_BEFORE,
        session=event_pb2.Session(id=session_id or uid("session"), cwd="/tmp/project"),
        tool=event_pb2.Tool(
            call_id="call-" + event_id,
            name="Bash",
            kind=event_pb2.TOOL_KIND_SHELL,
            input=struct({"command": command}),
        ),
    )


def tool_after_event(session_id: str) -> event_pb2.Event:
    event_id = uid("after")
    return event_pb2.Event(
        id=event_id,
        source=SOURCE,
        type=event_pb2.EVENT_TYPE_TOOL_AFTER,
        session=event_pb2.Session(id=session_id),
        tool=event_pb2.Tool(call_id="call-" + event_id, name="Bash", kind=event_pb2.TOOL_KIND_SHELL),
    )


class InterceptTest(unittest.TestCase):
    def test_denies_rm_rf_root(self) -> None:
        reply = client.intercept.Intercept(service_pb2.InterceptRequest(event=shell_event("rm -rf /")), timeout=CALL_TIMEOUT)
        d = reply.decision
        self.assertEqual(d.verdict, decision_pb2.VERDICT_DENY)
        self.assertTrue(d.decision_id)
        self.assertEqual(list(d.matched_rule_ids), ["deny-rm-rf-root"])
        self.assertFalse(d.replayed)
        self.assertEqual(len(d.effects), 1)
        effect = d.effects[0]
        self.assertEqual(effect.WhichOneof("effect"), "deny")
        self.assertEqual(effect.rule_id, "deny-rm-rf-root")
        self.assertEqual(effect.deny.code, "dev.ahpgateway.policy.destructive")
        self.assertIn("filesystem root", effect.deny.reason)

    def test_allows_ls_with_no_effects(self) -> None:
        reply = client.intercept.Intercept(service_pb2.InterceptRequest(event=shell_event("ls -la")), timeout=CALL_TIMEOUT)
        d = reply.decision
        self.assertEqual(d.verdict, decision_pb2.VERDICT_ALLOW)
        self.assertTrue(d.decision_id)
        self.assertEqual(list(d.matched_rule_ids), [])
        self.assertEqual(len(d.effects), 0)

    def test_replays_a_retried_event(self) -> None:
        req = service_pb2.InterceptRequest(event=shell_event("rm -rf ~/"))
        first = client.intercept.Intercept(req, timeout=CALL_TIMEOUT).decision
        retry = client.intercept.Intercept(req, timeout=CALL_TIMEOUT).decision
        self.assertFalse(first.replayed)
        self.assertTrue(retry.replayed)
        self.assertEqual(retry.decision_id, first.decision_id)
        self.assertEqual(retry.verdict, decision_pb2.VERDICT_DENY)

    def test_invalid_argument_names_the_field(self) -> None:
        bad = event_pb2.Event(source=SOURCE, type=event_pb2.EVENT_TYPE_TOOL_BEFORE)  # no id
        with self.assertRaises(grpc.RpcError) as caught:
            client.intercept.Intercept(service_pb2.InterceptRequest(event=bad), timeout=CALL_TIMEOUT)
        err = caught.exception
        self.assertEqual(err.code(), grpc.StatusCode.INVALID_ARGUMENT, err.details())
        self.assertIn("event.id", err.details())

    def test_intercept_stream_bidi(self) -> None:
        session = uid("session")
        want: dict[str, int] = {}
        requests = []
        for command, verdict in (("rm -rf /", decision_pb2.VERDICT_DENY), ("ls", decision_pb2.VERDICT_ALLOW), ("git status", decision_pb2.VERDICT_ALLOW)):
            ev = shell_event(command, session)
            want[ev.id] = verdict
            requests.append(service_pb2.InterceptStreamRequest(event=ev))
        bad_id = uid("bad")
        # A bad event gets a per-event error; the stream stays open.
        requests.append(service_pb2.InterceptStreamRequest(event=event_pb2.Event(id=bad_id, source=SOURCE)))

        got: dict[str, int] = {}
        errors: dict[str, str] = {}
        for resp in client.intercept.InterceptStream(iter(requests), timeout=STREAM_TIMEOUT):
            if resp.HasField("error"):
                errors[resp.event_id] = resp.error.code
            else:
                got[resp.event_id] = resp.decision.verdict
        self.assertEqual(got, want)
        self.assertEqual(errors, {bad_id: "invalid_argument"})


class HooksDraftTest(unittest.TestCase):
    """Events only the Agent Hooks Protocol "draft" has, with their typed catalogue fields."""

    def test_intercepts_a_turn_start(self) -> None:
        event = event_pb2.Event(
            id=uid("turn"),
            source=SOURCE,
            type=event_pb2.EVENT_TYPE_TURN_START,
            origin=event_pb2.Origin(dialect=event_pb2.DIALECT_HOOKS, protocol_version="draft", event_type="turn.start"),
            catalogue=catalogue_pb2.Catalogue(turn=catalogue_pb2.TurnRef(id="turn-1"), trigger="user"),
        )
        reply = client.intercept.Intercept(service_pb2.InterceptRequest(event=event), timeout=CALL_TIMEOUT)
        self.assertEqual(reply.decision.verdict, decision_pb2.VERDICT_ALLOW)
        self.assertTrue(reply.decision.decision_id)

    def test_file_changed_is_observe_only(self) -> None:
        event = event_pb2.Event(id=uid("file"), source=SOURCE, type=event_pb2.EVENT_TYPE_FILE_CHANGED,
                                payload=struct_pb2.Value(struct_value=struct({"changes": [{"path": "/w/a", "operation": "update", "agentCaused": True}]})))
        with self.assertRaises(grpc.RpcError) as caught:
            client.intercept.Intercept(service_pb2.InterceptRequest(event=event), timeout=CALL_TIMEOUT)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.INVALID_ARGUMENT, caught.exception.details())
        self.assertIn("observe-only", caught.exception.details())


class TypedAndHarnessTest(unittest.TestCase):
    def test_handle_rate_limit_answers_retry(self) -> None:
        event = event_pb2.Event(
            id=uid("rate-limit"),
            source=SOURCE,
            rate_limit=typed_pb2.RateLimitPayload(
                session_id=uid("session"),
                limit_type=typed_pb2.RateLimitType(known=typed_pb2.RATE_LIMIT_KIND_LLM_TOKEN_LIMIT),
                retry_after_ms=1500,
                current_usage="95000/100000 tokens",
            ),
        )
        reply = client.typed.HandleRateLimit(service_pb2.HandleRateLimitRequest(event=event), timeout=CALL_TIMEOUT)
        self.assertEqual(reply.decision.WhichOneof("typed"), "rate_limit")
        rl = reply.decision.rate_limit
        self.assertEqual(rl.WhichOneof("decision"), "retry")
        self.assertGreater(rl.retry.retry_after_ms, 0)

    def test_handshake(self) -> None:
        reply = client.harness.Handshake(
            harness_pb2.HandshakeRequest(protocol_version="2.4", agent_info=harness_pb2.AgentInfo(framework="python-test")),
            timeout=CALL_TIMEOUT,
        )
        self.assertEqual(reply.protocol_version, "2.4")


class ObservationTest(unittest.TestCase):
    def test_observe_stream_counts_accepted_and_duplicates(self) -> None:
        session = uid("session")
        events = [tool_after_event(session) for _ in range(5)]
        requests = [service_pb2.ObserveStreamRequest(event=e) for e in events]
        requests.append(service_pb2.ObserveStreamRequest(event=events[0]))  # a resend: a duplicate
        summary = client.observation.ObserveStream(iter(requests), timeout=STREAM_TIMEOUT)
        self.assertEqual(summary.accepted, 5)
        self.assertEqual(summary.duplicates, 1)

    def test_watch_sees_decision_and_observation_then_cancels(self) -> None:
        session = uid("session")
        # The deadline bounds the test if an item never comes.
        watch = client.observation.Watch(service_pb2.WatchRequest(session_id=session), timeout=STREAM_TIMEOUT)
        try:
            # The server sends headers once the subscription exists: after this, nothing is missed.
            watch.initial_metadata()

            denied = shell_event("rm -rf /", session)
            decision = client.intercept.Intercept(service_pb2.InterceptRequest(event=denied), timeout=CALL_TIMEOUT).decision
            observed = tool_after_event(session)
            client.observation.Observe(service_pb2.ObserveRequest(event=observed), timeout=CALL_TIMEOUT)
            # Another session: filtered out.
            client.observation.Observe(service_pb2.ObserveRequest(event=tool_after_event(uid("other"))), timeout=CALL_TIMEOUT)

            items = {}
            for _ in range(2):
                item = next(watch)
                items[item.event.id] = item
            self.assertIn(denied.id, items)
            self.assertEqual(items[denied.id].decision.verdict, decision_pb2.VERDICT_DENY)
            self.assertEqual(items[denied.id].decision.decision_id, decision.decision_id)
            self.assertIn(observed.id, items)
            self.assertFalse(items[observed.id].HasField("decision"))
            self.assertEqual(items[observed.id].event.type, event_pb2.EVENT_TYPE_TOOL_AFTER)
        finally:
            watch.cancel()
        with self.assertRaises(grpc.RpcError) as caught:
            next(watch)
        self.assertEqual(caught.exception.code(), grpc.StatusCode.CANCELLED)

    def test_watch_times_out_with_deadline_exceeded(self) -> None:
        # A quiet session and a short deadline: the live tail ends with DEADLINE_EXCEEDED.
        watch = client.observation.Watch(service_pb2.WatchRequest(session_id=uid("quiet")), timeout=0.5)
        done = threading.Event()
        codes = []

        def drain() -> None:
            try:
                for _ in watch:
                    pass
            except grpc.RpcError as err:
                codes.append(err.code())
            finally:
                done.set()

        threading.Thread(target=drain, daemon=True).start()
        self.assertTrue(done.wait(STREAM_TIMEOUT), "watch did not end at its deadline")
        self.assertEqual(codes, [grpc.StatusCode.DEADLINE_EXCEEDED])


if __name__ == "__main__":
    unittest.main()
