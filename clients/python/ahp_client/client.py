"""AhpClient: the four ahp.v1 service stubs on one gRPC channel, and the conveniences."""

from __future__ import annotations

import collections
from typing import Any, Iterator, Sequence

import grpc

from ahp.v1 import decision_pb2, event_pb2, service_pb2, service_pb2_grpc

from ._common import AhpError, Credential, as_event, credential, open_channel, watch_request


class _CallDetails(
    collections.namedtuple("_CallDetails", ("method", "timeout", "metadata", "credentials", "wait_for_ready", "compression")),
    grpc.ClientCallDetails,
):
    pass


class _CredentialInterceptor(
    grpc.UnaryUnaryClientInterceptor,
    grpc.UnaryStreamClientInterceptor,
    grpc.StreamUnaryClientInterceptor,
    grpc.StreamStreamClientInterceptor,
):
    """Adds the credential's metadata to every call."""

    def __init__(self, cred: Credential) -> None:
        self._cred = cred

    def _details(self, d: grpc.ClientCallDetails) -> grpc.ClientCallDetails:
        metadata = tuple(d.metadata or ()) + self._cred.metadata()
        return _CallDetails(
            d.method, d.timeout, metadata, d.credentials,
            getattr(d, "wait_for_ready", None), getattr(d, "compression", None),
        )

    def intercept_unary_unary(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return continuation(self._details(client_call_details), request)

    def intercept_unary_stream(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return continuation(self._details(client_call_details), request)

    def intercept_stream_unary(self, continuation, client_call_details, request_iterator):  # type: ignore[no-untyped-def]
        return continuation(self._details(client_call_details), request_iterator)

    def intercept_stream_stream(self, continuation, client_call_details, request_iterator):  # type: ignore[no-untyped-def]
        return continuation(self._details(client_call_details), request_iterator)


class Watch:
    """A live tail (ObservationService.Watch). Iterating yields WatchResponse items; a failure
    raises AhpError, and after cancel() (or leaving the ``with`` block) iteration just ends.
    The server has subscribed once the constructor returns, so nothing published later is missed."""

    def __init__(self, call: Any) -> None:
        self._call = call
        self._cancelled = False
        call.initial_metadata()  # the server sends its headers once it has subscribed

    def __iter__(self) -> Iterator[service_pb2.WatchResponse]:
        return self

    def __next__(self) -> service_pb2.WatchResponse:
        try:
            return next(self._call)
        except grpc.RpcError as err:
            if self._cancelled and err.code() == grpc.StatusCode.CANCELLED:  # type: ignore[attr-defined]
                raise StopIteration from None
            raise AhpError.from_rpc_error(err) from None

    def cancel(self) -> None:
        """Ends the watch; the server drops the subscription."""
        self._cancelled = True
        self._call.cancel()

    def __enter__(self) -> "Watch":
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()


class AhpClient:
    """Stubs for InterceptService (``intercept``), TypedDecisionService (``typed``),
    ObservationService (``observation``) and HarnessService (``harness``), plus ``decide``,
    ``observe`` and ``watch``.

    ``target`` is a gRPC target or an http(s) URL. Without ``credentials`` the channel is plaintext
    HTTP/2 (h2c), which ahp-server serves on its http:// address; pass
    ``grpc.ssl_channel_credentials(...)`` for an https:// server. ``token`` (a bearer token) or
    ``api_key`` is sent on every call, e.g. ``token=os.environ["AHP_TOKEN"]``; neither shows in
    the client's repr or in errors. The stubs raise grpc.RpcError (see AhpError.from_rpc_error);
    the conveniences raise AhpError. Pass ``timeout=`` on every call.
    """

    def __init__(
        self,
        target: str,
        *,
        token: str | None = None,
        api_key: str | None = None,
        credentials: grpc.ChannelCredentials | None = None,
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self._credential = credential(token, api_key)
        self._target, self.channel = open_channel(grpc, target, credentials, options)
        calls = self.channel
        if self._credential is not None:
            calls = grpc.intercept_channel(self.channel, _CredentialInterceptor(self._credential))
        self.intercept = service_pb2_grpc.InterceptServiceStub(calls)
        self.typed = service_pb2_grpc.TypedDecisionServiceStub(calls)
        self.observation = service_pb2_grpc.ObservationServiceStub(calls)
        self.harness = service_pb2_grpc.HarnessServiceStub(calls)

    def decide(self, tool: str | event_pb2.Event, *, timeout: float | None = None, **fields: Any) -> decision_pb2.Decision:
        """Asks for a decision on one tool call (Intercept): an Event, or a tool name and the
        fields of tool_event (kind=, input=, session_id=, source=, ...). Raises AhpError."""
        event = as_event(tool, **fields)
        try:
            return self.intercept.Intercept(service_pb2.InterceptRequest(event=event), timeout=timeout).decision
        except grpc.RpcError as err:
            raise AhpError.from_rpc_error(err) from None

    def observe(self, event: event_pb2.Event, *, timeout: float | None = None) -> service_pb2.ObserveResponse:
        """Records one event that needs no decision (Observe); ``duplicate`` says it was already
        recorded. Raises AhpError."""
        try:
            return self.observation.Observe(service_pb2.ObserveRequest(event=event), timeout=timeout)
        except grpc.RpcError as err:
            raise AhpError.from_rpc_error(err) from None

    def watch(
        self,
        *,
        session_id: str | None = None,
        event_types: Sequence[int] = (),
        tool_kinds: Sequence[int] = (),
        decisions_only: bool = False,
        flush_interval_ms: int = 0,
        timeout: float | None = None,
    ) -> Watch:
        """Opens a live tail with a filter and returns once the server has subscribed. Raises
        AhpError (also while iterating). flush_interval_ms > 0 batches the server's writes (at most
        one per interval; the console uses 250)."""
        call = self.observation.Watch(
            watch_request(session_id, event_types, tool_kinds, decisions_only, flush_interval_ms), timeout=timeout,
        )
        return Watch(call)

    def wait_ready(self, timeout: float) -> None:
        """Blocks until the channel is connected; raises grpc.FutureTimeoutError after timeout seconds."""
        grpc.channel_ready_future(self.channel).result(timeout=timeout)

    def close(self) -> None:
        """Closes the channel, cancelling calls still in flight."""
        self.channel.close()

    def __repr__(self) -> str:
        cred = f", credential={self._credential!r}" if self._credential else ""
        return f"AhpClient({self._target!r}{cred})"

    def __enter__(self) -> "AhpClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
