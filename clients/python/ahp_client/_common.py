"""What the sync and asyncio clients share: targets, credentials, errors, events and decisions."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Any, Mapping, Sequence
from urllib.parse import urlsplit

import grpc
from google.protobuf import struct_pb2

from ahp.v1 import decision_pb2, event_pb2, service_pb2

DEFAULT_SOURCE = "urn:ahp:client"


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


def open_channel(
    channels: Any,
    target: str,
    credentials: grpc.ChannelCredentials | None,
    options: Sequence[tuple[str, Any]],
    **extra: Any,
) -> tuple[str, Any]:
    """Opens a channel to target with ``channels`` (the ``grpc`` or ``grpc.aio`` module): plaintext
    HTTP/2 without credentials, TLS with them; an https:// target without credentials is refused.
    Returns the gRPC address and the channel; ``extra`` goes to the channel factory."""
    address = grpc_target(target)
    if credentials is None:
        if target.startswith("https://"):
            raise ValueError("an https:// target needs credentials=grpc.ssl_channel_credentials(...)")
        return address, channels.insecure_channel(address, options=list(options), **extra)
    return address, channels.secure_channel(address, credentials, options=list(options), **extra)


def struct(values: Mapping[str, Any]) -> struct_pb2.Struct:
    """A google.protobuf.Struct from a dict (for Tool.input and other JSON-object fields)."""
    s = struct_pb2.Struct()
    s.update(values)
    return s


class Credential:
    """One secret sent on every call: a bearer token (``Authorization: Bearer``) or an API key
    (``X-API-Key``). It prints as ``bearer:[REDACTED]``; the secret is never in a repr or an error."""

    __slots__ = ("kind", "_metadata")

    def __init__(self, *, token: str | None = None, api_key: str | None = None) -> None:
        if token is not None and api_key is not None:
            raise ValueError("set token or api_key, not both (the server refuses a call that carries two credentials)")
        secret = token if token is not None else api_key
        if not secret:
            raise ValueError("the credential is empty (is its environment variable set?)")
        self.kind = "bearer" if token is not None else "api_key"
        header = ("authorization", f"Bearer {token}") if token is not None else ("x-api-key", api_key or "")
        self._metadata: tuple[tuple[str, str], ...] = (header,)

    def metadata(self) -> tuple[tuple[str, str], ...]:
        """The call metadata that carries the secret."""
        return self._metadata

    def __repr__(self) -> str:
        return f"{self.kind}:[REDACTED]"

    __str__ = __repr__


def credential(token: str | None, api_key: str | None) -> Credential | None:
    """The credential for the token or API key given to a client, or None without either."""
    if token is None and api_key is None:
        return None
    return Credential(token=token, api_key=api_key)


def _connect_code(status: grpc.StatusCode) -> str:
    # Connect's codes are gRPC's, spelled in snake case; only CANCELLED is spelled differently.
    return "canceled" if status == grpc.StatusCode.CANCELLED else status.name.lower()


class AhpError(Exception):
    """A failed call. ``code`` is the Connect code ("invalid_argument", "unauthenticated", ...),
    ``status`` the grpc.StatusCode, ``message`` the server's message (a validation failure names
    the field). The message comes from the server, which never echoes credentials."""

    def __init__(self, status: grpc.StatusCode, message: str) -> None:
        super().__init__(f"{_connect_code(status)}: {message}")
        self.status = status
        self.code = _connect_code(status)
        self.message = message

    @classmethod
    def from_rpc_error(cls, err: grpc.RpcError) -> "AhpError":
        """The AhpError for an error raised by a generated stub (a grpc.RpcError that is a grpc.Call)."""
        code = getattr(err, "code", None)
        details = getattr(err, "details", None)
        status = code() if callable(code) else None
        message = details() if callable(details) else None
        return cls(
            status if isinstance(status, grpc.StatusCode) else grpc.StatusCode.UNKNOWN,
            message if isinstance(message, str) else "",
        )

    def __repr__(self) -> str:
        return f"AhpError(code={self.code!r}, message={self.message!r})"


def tool_event(
    name: str,
    *,
    kind: int = event_pb2.TOOL_KIND_OTHER,
    input: Mapping[str, Any] | None = None,
    session_id: str | None = None,
    source: str = DEFAULT_SOURCE,
    event_id: str | None = None,
    call_id: str | None = None,
    type: int = event_pb2.EVENT_TYPE_TOOL_BEFORE,
) -> event_pb2.Event:
    """The event for one tool call: tool.before (a decision) unless ``type`` says otherwise
    (EVENT_TYPE_TOOL_AFTER or EVENT_TYPE_TOOL_ERROR to observe). ``event_id`` defaults to a fresh
    UUID; the server replays its decision for a repeated (source, id, content)."""
    event_id = event_id if event_id is not None else str(uuid.uuid4())
    event = event_pb2.Event(
        id=event_id,
        source=source,
        type=type,  # type: ignore[arg-type]
        tool=event_pb2.Tool(call_id=call_id or f"call-{event_id}", name=name, kind=kind),  # type: ignore[arg-type]
    )
    if input is not None:
        event.tool.input.update(input)
    if session_id is not None:
        event.session.id = session_id
    return event


def as_event(tool: str | event_pb2.Event, **fields: Any) -> event_pb2.Event:
    """An Event as given, or the tool_event for a tool name."""
    if isinstance(tool, event_pb2.Event):
        if fields:
            raise TypeError("pass either an Event or a tool name with its fields, not both")
        return tool
    return tool_event(tool, **fields)


def watch_request(
    session_id: str | None,
    event_types: Sequence[int],
    tool_kinds: Sequence[int],
    decisions_only: bool,
    flush_interval_ms: int = 0,
) -> service_pb2.WatchRequest:
    """The WatchRequest for a filter; every part is optional. flush_interval_ms (0 to 1000) asks
    the server to write to the stream at most once per that many milliseconds (0: at once)."""
    if not 0 <= flush_interval_ms <= 1000:
        raise ValueError("flush_interval_ms must be between 0 and 1000")
    req = service_pb2.WatchRequest(
        session_id=session_id or "",
        event_types=list(event_types),  # type: ignore[arg-type]
        tool_kinds=list(tool_kinds),  # type: ignore[arg-type]
        decisions_only=decisions_only,
    )
    if flush_interval_ms:
        req.flush_interval_ms = flush_interval_ms  # type: ignore[attr-defined]
    return req


@dataclass(frozen=True)
class DecisionSummary:
    """The parts of a Decision a caller usually acts on."""

    allowed: bool
    """True for VERDICT_ALLOW: the action may run as asked."""
    verdict: int
    """The combined verdict (decision_pb2.VERDICT_*)."""
    reason: str
    """Why: the first deny, ask or escalate effect's reason, or ""."""
    code: str
    """The deny effect's code (e.g. "dev.ahpgateway.policy.destructive"), or ""."""
    rule_id: str
    """The rule behind that effect, or ""."""
    decision_id: str
    """Decision id, for audit and correlation."""


def read_decision(decision: decision_pb2.Decision) -> DecisionSummary:
    """Reads a decision: whether it allows the action and, if not, why."""
    reason = code = rule_id = ""
    for effect in decision.effects:
        which = effect.WhichOneof("effect")
        if which in ("deny", "ask", "escalate"):
            body = getattr(effect, which)
            reason = body.reason
            code = effect.deny.code if which == "deny" else ""
            rule_id = effect.rule_id
            break
    return DecisionSummary(
        allowed=decision.verdict == decision_pb2.VERDICT_ALLOW,
        verdict=decision.verdict,
        reason=reason,
        code=code,
        rule_id=rule_id,
        decision_id=decision.decision_id,
    )
