"""Unit tests of the client helpers that need no server."""

from __future__ import annotations

import unittest

from ahp_client import grpc_target, struct


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


if __name__ == "__main__":
    unittest.main()
