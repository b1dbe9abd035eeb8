"""AsyncAhpClient: the ahp.v1 stubs and conveniences on a grpc.aio channel, for asyncio."""

from __future__ import annotations

import asyncio
from typing import Any, AsyncIterator, Sequence

import grpc
import grpc.aio

from ahp.v1 import decision_pb2, event_pb2, service_pb2, service_pb2_grpc

from ._common import AhpError, Credential, as_event, credential, open_channel, watch_request


def _with_credential(details: grpc.aio.ClientCallDetails, cred: Credential) -> grpc.aio.ClientCallDetails:
    metadata = grpc.aio.Metadata(*tuple(details.metadata or ()), *cred.metadata())
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready,
    )


class _UnaryUnary(grpc.aio.UnaryUnaryClientInterceptor):
    def __init__(self, cred: Credential) -> None:
        self._cred = cred

    async def intercept_unary_unary(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return await continuation(_with_credential(client_call_details, self._cred), request)


class _UnaryStream(grpc.aio.UnaryStreamClientInterceptor):
    def __init__(self, cred: Credential) -> None:
        self._cred = cred

    async def intercept_unary_stream(self, continuation, client_call_details, request):  # type: ignore[no-untyped-def]
        return await continuation(_with_credential(client_call_details, self._cred), request)


class _StreamUnary(grpc.aio.StreamUnaryClientInterceptor):
    def __init__(self, cred: Credential) -> None:
        self._cred = cred

    async def intercept_stream_unary(self, continuation, client_call_details, request_iterator):  # type: ignore[no-untyped-def]
        return await continuation(_with_credential(client_call_details, self._cred), request_iterator)


class _StreamStream(grpc.aio.StreamStreamClientInterceptor):
    def __init__(self, cred: Credential) -> None:
        self._cred = cred

    async def intercept_stream_stream(self, continuation, client_call_details, request_iterator):  # type: ignore[no-untyped-def]
        return await continuation(_with_credential(client_call_details, self._cred), request_iterator)


def _credential_interceptors(cred: Credential | None) -> list[grpc.aio.ClientInterceptor] | None:
    """One interceptor per call kind: grpc.aio files an interceptor under the first kind it
    implements only, so one object implementing all four would see unary-unary calls alone."""
    if cred is None:
        return None
    return [_UnaryUnary(cred), _UnaryStream(cred), _StreamUnary(cred), _StreamStream(cred)]


class AsyncWatch:
    """A live tail for asyncio: ``async for item in watch``. A failure raises AhpError; after
    cancel() (or leaving the ``async with`` block) iteration just ends."""

    def __init__(self, call: Any) -> None:
        self._call = call
        self._cancelled = False

    async def _subscribe(self) -> "AsyncWatch":
        try:
            await self._call.initial_metadata()  # the server sends its headers once it has subscribed
        except grpc.RpcError as err:
            raise AhpError.from_rpc_error(err) from None
        return self

    def __aiter__(self) -> AsyncIterator[service_pb2.WatchResponse]:
        return self

    async def __anext__(self) -> service_pb2.WatchResponse:
        try:
            item = await self._call.read()
        except asyncio.CancelledError:
            if self._cancelled:  # grpc.aio raises CancelledError on a read after cancel()
                raise StopAsyncIteration from None
            raise
        except grpc.RpcError as err:
            if self._cancelled and err.code() == grpc.StatusCode.CANCELLED:  # type: ignore[attr-defined]
                raise StopAsyncIteration from None
            raise AhpError.from_rpc_error(err) from None
        if item is grpc.aio.EOF:
            if self._cancelled:
                raise StopAsyncIteration
            status = await self._call.code()
            if status != grpc.StatusCode.OK:
                raise AhpError(status, await self._call.details() or "")
            raise StopAsyncIteration
        return item

    def cancel(self) -> None:
        """Ends the watch; the server drops the subscription."""
        self._cancelled = True
        self._call.cancel()

    async def __aenter__(self) -> "AsyncWatch":
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.cancel()


class AsyncAhpClient:
    """The asyncio twin of AhpClient (same arguments, same stubs and conveniences, awaited).
    Use ``async with AsyncAhpClient(url) as ahp:`` or ``await ahp.close()``."""

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
        self._target, self.channel = open_channel(
            grpc.aio, target, credentials, options, interceptors=_credential_interceptors(self._credential)
        )
        self.intercept = service_pb2_grpc.InterceptServiceStub(self.channel)
        self.typed = service_pb2_grpc.TypedDecisionServiceStub(self.channel)
        self.observation = service_pb2_grpc.ObservationServiceStub(self.channel)
        self.harness = service_pb2_grpc.HarnessServiceStub(self.channel)

    async def decide(self, tool: str | event_pb2.Event, *, timeout: float | None = None, **fields: Any) -> decision_pb2.Decision:
        """Asks for a decision on one tool call (see AhpClient.decide). Raises AhpError."""
        event = as_event(tool, **fields)
        try:
            reply = await self.intercept.Intercept(service_pb2.InterceptRequest(event=event), timeout=timeout)
        except grpc.RpcError as err:
            raise AhpError.from_rpc_error(err) from None
        return reply.decision

    async def observe(self, event: event_pb2.Event, *, timeout: float | None = None) -> service_pb2.ObserveResponse:
        """Records one event that needs no decision (Observe). Raises AhpError."""
        try:
            return await self.observation.Observe(service_pb2.ObserveRequest(event=event), timeout=timeout)
        except grpc.RpcError as err:
            raise AhpError.from_rpc_error(err) from None

    async def watch(
        self,
        *,
        session_id: str | None = None,
        event_types: Sequence[int] = (),
        tool_kinds: Sequence[int] = (),
        decisions_only: bool = False,
        flush_interval_ms: int = 0,
        timeout: float | None = None,
    ) -> AsyncWatch:
        """Opens a live tail with a filter and returns once the server has subscribed. Raises AhpError.
        flush_interval_ms > 0 batches the server's writes (at most one per interval; the console uses 250)."""
        call = self.observation.Watch(
            watch_request(session_id, event_types, tool_kinds, decisions_only, flush_interval_ms), timeout=timeout,
        )
        return await AsyncWatch(call)._subscribe()

    async def close(self) -> None:
        """Closes the channel, cancelling calls still in flight."""
        await self.channel.close()

    def __repr__(self) -> str:
        cred = f", credential={self._credential!r}" if self._credential else ""
        return f"AsyncAhpClient({self._target!r}{cred})"

    async def __aenter__(self) -> "AsyncAhpClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()
