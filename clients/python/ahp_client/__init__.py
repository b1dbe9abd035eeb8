"""A small gRPC client for ahp-server's ahp.v1 services.

Runs on Debian's python3-grpcio (1.51) and python3-protobuf (4.21) with /usr/bin/python3. The code
generated from proto/ahp/v1 lives in ../gen (committed; regenerate with ``../../scripts/buf generate``
from clients/python). Its modules import each other as ``ahp.v1.*`` and ``buf.validate.*``, so
importing this package puts that directory on ``sys.path``.

    from ahp_client import AhpClient, event_pb2, service_pb2

    with AhpClient("http://127.0.0.1:8080") as ahp:
        reply = ahp.intercept.Intercept(service_pb2.InterceptRequest(event=...), timeout=2)
"""

from __future__ import annotations

import os
import sys

_GEN = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "gen")
if _GEN not in sys.path:
    sys.path.insert(0, _GEN)

from ahp.v1 import (  # noqa: E402  (after the sys.path set-up above)
    decision_pb2,
    event_pb2,
    harness_pb2,
    service_pb2,
    service_pb2_grpc,
    typed_pb2,
)

from .client import AhpClient, grpc_target, struct  # noqa: E402

__all__ = [
    "AhpClient",
    "decision_pb2",
    "event_pb2",
    "grpc_target",
    "harness_pb2",
    "service_pb2",
    "service_pb2_grpc",
    "struct",
    "typed_pb2",
]
