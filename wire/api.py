"""Which gRPC service serves each game, and how to call it: game services serve it, the gateway
routes it, clients and bots call it. Read from the games' declarations (`games.get`), so a game
registered anywhere has its API here too."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import import_module
from types import ModuleType
from typing import Any

from google.protobuf.descriptor import ServiceDescriptor

import games


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


def api(game: str) -> GameApi:
    """The API of game `game` (KeyError naming the known games for an unknown one)."""
    found = games.get(game)
    return _api(found.name, found.proto_package, found.service, found.port)


@cache
def _api(name: str, proto_package: str, service: str, port: int) -> GameApi:
    return GameApi(name, proto_package, service, port)


def game_apis() -> dict[str, GameApi]:
    """Every registered game's API, by game id."""
    return {name: api(name) for name in games.names()}


READS = frozenset(
    (
        "GetView",
        "LegalMoves",
        "Watch",
        "ListGames",
        "WatchTicket",
        "GetRating",
        "ListLeaderboard",
        "GetRatingChange",
        "GetScores",
        "ListScoreTable",
        "ListArchivedGames",
        "GetArchivedGame",
        "GetArchivedView",
        "ExportArchive",
        "ListLiveGames",
        "ListChallenges",
        "WatchChallenges",
        "GetChallengeSetting",
        "ListOpenTables",
        "ListFollowing",
        "ListFollowers",
        "GetFollowSetting",
        "WatchNotifications",
    )
)
"""The public methods that only read: an API token without a scope to act may call these (every
other method acts: `gateway.accounts.may_act`), and a client may send them again when it does
not know whether the first call was served."""

LOBBY_SERVICE = "tabletop.lobby.v1.LobbyService"
AUTH_SERVICE = "tabletop.lobby.v1.AuthService"


NO_BDP_PROBE = ("grpc.http2.bdp_probe", 0)
"""Every channel and server of the platform leaves out HTTP/2's bandwidth probes (a ping for
each burst of data read, to grow the flow-control window for bulk transfers): its messages are
small, and the default 64 KiB window holds a frame of calls many times over. With 64 games at
once the probes were about a tenth of the gateway's and of the client library's CPU."""


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
        NO_BDP_PROBE,
    ]
