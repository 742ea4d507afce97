"""Each game's public gRPC API, in one place: game services serve it, the gateway routes it and
clients call it. A game service is `services/<game>/` (its adapter) plus one line here."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cached_property
from importlib import import_module
from types import ModuleType
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor


@dataclass(frozen=True)
class GameApi:
    game: str
    package: str
    service: str
    default_port: int

    @cached_property
    def pb2(self) -> ModuleType:
        return import_module(f"{self.package}.{self.game}_pb2")

    @cached_property
    def pb2_grpc(self) -> ModuleType:
        return import_module(f"{self.package}.{self.game}_pb2_grpc")

    @property
    def descriptor(self) -> ServiceDescriptor:
        descriptor: ServiceDescriptor = self.pb2.DESCRIPTOR.services_by_name[self.service]
        return descriptor

    @property
    def full_name(self) -> str:
        return self.descriptor.full_name

    def stub(self, channel: Any) -> Any:
        """The client stub, e.g. `stub.Play(request, metadata=...)`."""
        return getattr(self.pb2_grpc, f"{self.service}Stub")(channel)

    def add_servicer(self, servicer: Any, server: Any) -> None:
        getattr(self.pb2_grpc, f"add_{self.service}Servicer_to_server")(servicer, server)


def channel_options(service: str) -> list[tuple[str, Any]]:
    """Round robin across every address of the target, and retry UNAVAILABLE (safe: each
    forwarded call carries a request id, so a retried move is applied once)."""
    config = {
        "loadBalancingConfig": [{"round_robin": {}}],
        "methodConfig": [
            {
                "name": [{"service": service}],
                "retryPolicy": {
                    "maxAttempts": 4,
                    "initialBackoff": "0.05s",
                    "maxBackoff": "0.5s",
                    "backoffMultiplier": 2,
                    "retryableStatusCodes": ["UNAVAILABLE"],
                },
            }
        ],
    }
    return [
        ("grpc.service_config", json.dumps(config)),
        ("grpc.enable_retries", 1),
        ("grpc.max_receive_message_length", 16 * 1024 * 1024),
    ]


GAME_APIS: dict[str, GameApi] = {
    api.game: api
    for api in [
        GameApi("esoloe", "tabletop.esoloe.v1", "EsoloeService", 50051),
        GameApi("solo", "tabletop.solo.v1", "SoloService", 50052),
        GameApi("solace", "tabletop.solace.v1", "SolaceService", 50053),
        GameApi("zoxso", "tabletop.zoxso.v1", "ZoxsoService", 50054),
    ]
}
"""Served games by id; the default port of each game service."""
