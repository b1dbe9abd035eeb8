"""A client for ahp-server's ahp.v1 services over gRPC: ``AhpClient`` (sync) and
``AsyncAhpClient`` (asyncio, grpc.aio).

The code generated from proto/ahp/v1 is installed with it as the ``ahp.v1`` and ``buf.validate``
packages (the generated modules import each other by those names).

    import os
    from ahp_client import AhpClient, event_pb2, read_decision

    with AhpClient("http://127.0.0.1:8080", token=os.environ.get("AHP_TOKEN")) as ahp:
        decision = ahp.decide("Bash", kind=event_pb2.TOOL_KIND_SHELL, input={"command": "ls"}, timeout=5)
        if not read_decision(decision).allowed: ...
"""

from __future__ import annotations

from ahp.v1 import (
    catalogue_pb2,
    decision_pb2,
    event_pb2,
    harness_pb2,
    service_pb2,
    service_pb2_grpc,
    typed_pb2,
)

from ._common import AhpError, Credential, DecisionSummary, grpc_target, read_decision, struct, tool_event
from .aio import AsyncAhpClient, AsyncWatch
from .client import AhpClient, Watch

# The package version: its major is the schema's (ahp.v1 → 1); scripts/test-clients.sh checks it
# against clients/typescript/package.json.
__version__ = "1.0.0a1"

__all__ = [
    "AhpClient",
    "AhpError",
    "AsyncAhpClient",
    "AsyncWatch",
    "Credential",
    "DecisionSummary",
    "Watch",
    "__version__",
    "catalogue_pb2",
    "decision_pb2",
    "event_pb2",
    "grpc_target",
    "harness_pb2",
    "read_decision",
    "service_pb2",
    "service_pb2_grpc",
    "struct",
    "tool_event",
    "typed_pb2",
]
