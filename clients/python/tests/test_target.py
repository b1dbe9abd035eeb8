"""Unit tests of the client helpers that need no server."""

from __future__ import annotations

import unittest

from ahp_client import grpc_target, struct
from ahp_client._common import watch_request
from ahp.v1 import service_pb2


class HelpersTest(unittest.TestCase):
    def test_grpc_target_from_server_url(self) -> None:
        self.assertEqual(grpc_target("http://127.0.0.1:8080"), "127.0.0.1:8080")
        self.assertEqual(grpc_target("https://ahp.example:443/"), "ahp.example:443")
        self.assertEqual(grpc_target("http://[::1]:9000"), "[::1]:9000")
        self.assertEqual(grpc_target("127.0.0.1:8080"), "127.0.0.1:8080")
        self.assertEqual(grpc_target("dns:///localhost:8080"), "dns:///localhost:8080")
        self.assertEqual(grpc_target("unix:///run/ahp.sock"), "unix:///run/ahp.sock")

    def test_grpc_target_rejects_a_url_without_host(self) -> None:
        with self.assertRaises(ValueError):
            grpc_target("http://:8080")

    def test_struct(self) -> None:
        s = struct({"command": "ls", "args": ["-l", 1], "env": {"A": True}})
        self.assertEqual(s["command"], "ls")
        self.assertEqual(list(s["args"]), ["-l", 1.0])
        self.assertTrue(s["env"]["A"])

    def test_watch_request_carries_the_filter(self) -> None:
        req = watch_request("s1", [1], [2], True)
        self.assertEqual((req.session_id, list(req.event_types), list(req.tool_kinds), req.decisions_only), ("s1", [1], [2], True))
        with self.assertRaises(ValueError):
            watch_request(None, (), (), False, 1001)
        if "flush_interval_ms" not in service_pb2.WatchRequest.DESCRIPTOR.fields_by_name:
            self.skipTest("the generated WatchRequest has no flush_interval_ms yet (run scripts/buf generate)")
        self.assertEqual(watch_request(None, (), (), False, 250).flush_interval_ms, 250)
        self.assertEqual(watch_request(None, (), (), False).flush_interval_ms, 0)


if __name__ == "__main__":
    unittest.main()
