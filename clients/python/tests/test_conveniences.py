"""decide, observe, watch, AhpError and credentials, sync and asyncio, against a running ahp-server.

Runs on the source tree and on the installed package (scripts/test-clients.sh does both).
"""

from __future__ import annotations

import asyncio
import os
import unittest
import uuid

import grpc

from ahp_client import (
    AhpClient,
    AhpError,
    AsyncAhpClient,
    decision_pb2,
    event_pb2,
    read_decision,
    service_pb2,
    tool_event,
)

CALL_TIMEOUT = 5.0
STREAM_TIMEOUT = 10.0
SOURCE = "urn:ahp:clients:python-conveniences"


def server_url() -> str:
    url = os.environ.get("AHP_SERVER_URL")
    if not url:
        raise RuntimeError("AHP_SERVER_URL is not set: run scripts/test-clients.sh, or start ahp-server and export its URL")
    return url


def session() -> str:
    return f"py-conv-{uuid.uuid4()}"


class SyncConveniencesTest(unittest.TestCase):
    def setUp(self) -> None:
        self.ahp = AhpClient(server_url())
        self.addCleanup(self.ahp.close)

    def test_decide_denies_and_allows_and_watch_sees_both(self) -> None:
        sid = session()
        with self.ahp.watch(session_id=sid, decisions_only=True, timeout=STREAM_TIMEOUT) as watch:
            denied = read_decision(self.ahp.decide(
                "Bash", kind=event_pb2.TOOL_KIND_SHELL, input={"command": "rm -rf /"},
                session_id=sid, source=SOURCE, timeout=CALL_TIMEOUT,
            ))
            self.assertFalse(denied.allowed)
            self.assertEqual(denied.verdict, decision_pb2.VERDICT_DENY)
            self.assertEqual(denied.rule_id, "deny-rm-rf-root")
            self.assertTrue(denied.code and denied.reason and denied.decision_id)
            # An observation in the same session is filtered out by decisions_only.
            self.ahp.observe(tool_event("Bash", type=event_pb2.EVENT_TYPE_TOOL_AFTER, session_id=sid, source=SOURCE), timeout=CALL_TIMEOUT)
            allowed = read_decision(self.ahp.decide(
                "Bash", kind=event_pb2.TOOL_KIND_SHELL, input={"command": "ls"},
                session_id=sid, source=SOURCE, timeout=CALL_TIMEOUT,
            ))
            self.assertTrue(allowed.allowed)
            verdicts = [next(watch).decision.verdict, next(watch).decision.verdict]
            self.assertEqual(verdicts, [decision_pb2.VERDICT_DENY, decision_pb2.VERDICT_ALLOW])
        self.assertEqual(list(watch), [])  # cancelled: iteration ends without an error

    def test_observe_reports_a_duplicate(self) -> None:
        event = tool_event("Bash", type=event_pb2.EVENT_TYPE_TOOL_AFTER, session_id=session(), source=SOURCE)
        self.assertFalse(self.ahp.observe(event, timeout=CALL_TIMEOUT).duplicate)
        self.assertTrue(self.ahp.observe(event, timeout=CALL_TIMEOUT).duplicate)

    def test_invalid_event_is_ahp_error_with_connect_code(self) -> None:
        with self.assertRaises(AhpError) as caught:
            self.ahp.decide("Bash", event_id="", source=SOURCE, timeout=CALL_TIMEOUT)
        err = caught.exception
        self.assertEqual(err.code, "invalid_argument")
        self.assertEqual(err.status, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("event.id", err.message)
        self.assertEqual(str(err), f"invalid_argument: {err.message}")

    def test_watch_with_an_invalid_filter_is_ahp_error(self) -> None:
        with self.assertRaises(AhpError) as caught:
            next(self.ahp.watch(session_id=session(), event_types=[9999], timeout=STREAM_TIMEOUT))
        self.assertEqual(caught.exception.code, "invalid_argument")
        self.assertIn("event_types", caught.exception.message)


class CredentialTest(unittest.TestCase):
    def test_token_is_not_in_repr_or_errors(self) -> None:
        secret = f"py-secret-{uuid.uuid4()}"
        with AhpClient("http://127.0.0.1:9", token=secret) as ahp:  # nothing listens on port 9
            self.assertNotIn(secret, repr(ahp))
            self.assertIn("bearer:[REDACTED]", repr(ahp))
            with self.assertRaises(AhpError) as caught:
                ahp.decide("Bash", timeout=2)
            err = caught.exception
            self.assertEqual(err.code, "unavailable")
            for text in (str(err), repr(err), repr(err.__cause__), repr(err.__context__)):
                self.assertNotIn(secret, text)

    def test_token_and_api_key_are_exclusive(self) -> None:
        with self.assertRaises(ValueError):
            AhpClient("http://127.0.0.1:9", token="a" * 20, api_key="b" * 20)
        with self.assertRaises(ValueError):
            AhpClient("http://127.0.0.1:9", token="")

    def test_token_reaches_the_server(self) -> None:
        # With auth disabled (the test server) a credential is admitted, so calls still succeed.
        with AhpClient(server_url(), api_key=f"py-key-{uuid.uuid4()}") as ahp:
            self.assertTrue(read_decision(ahp.decide("Read", source=SOURCE, timeout=CALL_TIMEOUT)).allowed)


def auth_server() -> tuple[str, str, str]:
    """URL and the agent and watch tokens of the server that requires credentials (scripts/test-clients.sh
    starts it next to the other)."""
    url, agent, watch = (os.environ.get(k, "") for k in ("AHP_TEST_AUTH_URL", "AHP_TEST_AGENT_TOKEN", "AHP_TEST_WATCH_TOKEN"))
    if not (url and agent and watch):
        raise RuntimeError("AHP_TEST_AUTH_URL, AHP_TEST_AGENT_TOKEN and AHP_TEST_WATCH_TOKEN are not set: run scripts/test-clients.sh")
    return url, agent, watch


class AuthTest(unittest.TestCase):
    def setUp(self) -> None:
        self.url, self.agent_token, self.watch_token = auth_server()

    def test_tokens_are_sent_on_unary_and_streaming_calls(self) -> None:
        sid = session()
        with AhpClient(self.url, token=self.agent_token) as agent, AhpClient(self.url, token=self.watch_token) as watcher:
            with watcher.watch(session_id=sid, timeout=STREAM_TIMEOUT) as watch:
                self.assertTrue(read_decision(agent.decide("Read", session_id=sid, source=SOURCE, timeout=CALL_TIMEOUT)).allowed)
                self.assertEqual(next(watch).event.session.id, sid)

    def test_refusals_keep_their_code_and_show_no_token(self) -> None:
        with AhpClient(self.url) as nobody:
            with self.assertRaises(AhpError) as caught:
                nobody.decide("Read", source=SOURCE, timeout=CALL_TIMEOUT)
            self.assertEqual(caught.exception.code, "unauthenticated")
        wrong = f"wrong-{uuid.uuid4()}"
        with AhpClient(self.url, api_key=wrong) as bad:
            with self.assertRaises(AhpError) as caught:
                bad.decide("Read", source=SOURCE, timeout=CALL_TIMEOUT)
            self.assertEqual(caught.exception.code, "unauthenticated")
            self.assertNotIn(wrong, repr(caught.exception) + str(caught.exception) + repr(bad))
        with AhpClient(self.url, token=self.agent_token) as agent:
            with self.assertRaises(AhpError) as caught:
                next(agent.watch(session_id=session(), timeout=STREAM_TIMEOUT))
            self.assertEqual(caught.exception.code, "permission_denied")
            self.assertIn("watch", caught.exception.message)
            self.assertNotIn(self.agent_token, repr(caught.exception) + str(caught.exception) + repr(agent))


class AsyncConveniencesTest(unittest.IsolatedAsyncioTestCase):
    async def test_tokens_with_asyncio(self) -> None:
        url, agent_token, watch_token = auth_server()
        sid = session()
        async with AsyncAhpClient(url, token=agent_token) as agent, AsyncAhpClient(url, token=watch_token) as watcher:
            async with await watcher.watch(session_id=sid, timeout=STREAM_TIMEOUT) as watch:
                self.assertTrue(read_decision(await agent.decide("Read", session_id=sid, source=SOURCE, timeout=CALL_TIMEOUT)).allowed)
                item = await watch.__anext__()
                self.assertEqual(item.event.session.id, sid)
            with self.assertRaises(AhpError) as caught:
                await (await agent.watch(session_id=sid, timeout=STREAM_TIMEOUT)).__anext__()
            self.assertEqual(caught.exception.code, "permission_denied")
            # Client streaming carries the token too.
            events = [tool_event("Bash", type=event_pb2.EVENT_TYPE_TOOL_AFTER, session_id=sid, source=SOURCE) for _ in range(2)]
            summary = await agent.observation.ObserveStream(
                iter([service_pb2.ObserveStreamRequest(event=e) for e in events]), timeout=STREAM_TIMEOUT,
            )
            self.assertEqual(summary.accepted, 2)

    async def test_decide_observe_watch(self) -> None:
        sid = session()
        async with AsyncAhpClient(server_url(), token=f"py-token-{uuid.uuid4()}") as ahp:
            async with await ahp.watch(session_id=sid, timeout=STREAM_TIMEOUT) as watch:
                denied = read_decision(await ahp.decide(
                    "Bash", kind=event_pb2.TOOL_KIND_SHELL, input={"command": "rm -rf /"},
                    session_id=sid, source=SOURCE, timeout=CALL_TIMEOUT,
                ))
                self.assertFalse(denied.allowed)
                await ahp.observe(tool_event("Bash", type=event_pb2.EVENT_TYPE_TOOL_AFTER, session_id=sid, source=SOURCE), timeout=CALL_TIMEOUT)
                seen = []
                async for item in watch:
                    seen.append(item.HasField("decision"))
                    if len(seen) == 2:
                        break
                self.assertEqual(seen, [True, False])

    async def test_invalid_event_is_ahp_error(self) -> None:
        async with AsyncAhpClient(server_url()) as ahp:
            with self.assertRaises(AhpError) as caught:
                await ahp.decide("Bash", event_id="", source=SOURCE, timeout=CALL_TIMEOUT)
            self.assertEqual(caught.exception.code, "invalid_argument")
            self.assertIn("event.id", caught.exception.message)


if __name__ == "__main__":
    unittest.main()
