"""AhpClient: the four ahp.v1 service stubs on one gRPC channel."""

from __future__ import annotations

from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

import grpc
from google.protobuf import struct_pb2

from ahp.v1 import service_pb2_grpc


def grpc_target(url_or_target: str) -> str:
    """Turns a URL as ahp-server prints it ("http://127.0.0.1:8080") into a gRPC target
    ("127.0.0.1:8080"). Anything else ("127.0.0.1:8080", "dns:///host:443", "unix:///path") is
    already a gRPC target and is returned unchanged."""
    parts = urlsplit(url_or_target)
    if parts.scheme not in ("http", "https"):
        return url_or_target
    if not parts.hostname:
        raise ValueError(f"no host in {url_or_target!r}")
    return parts.netloc


def struct(values: Mapping[str, Any]) -> struct_pb2.Struct:
    """A google.protobuf.Struct from a dict (for Tool.input and other JSON-object fields)."""
    s = struct_pb2.Struct()
    s.update(values)
    return s


class AhpClient:
    """Stubs for InterceptService, TypedDecisionService, ObservationService and HarnessService.

    ``target`` is a gRPC target or an http(s) URL. Without ``credentials`` the channel is plaintext
    HTTP/2 (h2c), which ahp-server serves on its http:// address; pass
    ``grpc.ssl_channel_credentials(...)`` for an https:// server. Every stub method takes the usual
    grpc keyword arguments; pass ``timeout=`` on every call.
    """

    def __init__(
        self,
        target: str,
        *,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        address = grpc_target(target)
        if credentials is None:
            if target.startswith("https://"):
                raise ValueError("an https:// target needs credentials=grpc.ssl_channel_credentials(...)")
            self.channel: grpc.Channel = grpc.insecure_channel(address, options=list(options))
        else:
            self.channel = grpc.secure_channel(address, credentials, options=list(options))
        self.intercept = service_pb2_grpc.InterceptServiceStub(self.channel)
        self.typed = service_pb2_grpc.TypedDecisionServiceStub(self.channel)
        self.observation = service_pb2_grpc.ObservationServiceStub(self.channel)
        self.harness = service_pb2_grpc.HarnessServiceStub(self.channel)

    def wait_ready(self, timeout: float) -> None:
        """Blocks until the channel is connected; raises grpc.FutureTimeoutError after timeout seconds."""
        grpc.channel_ready_future(self.channel).result(timeout=timeout)

    def close(self) -> None:
        """Closes the channel, cancelling calls still in flight."""
        self.channel.close()

    def __enter__(self) -> "AhpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
