"""The platform's real servers, started in the test's event loop on free ports."""

from __future__ import annotations

from types import TracebackType

from gateway.server import Gateway, GatewaySettings
from services.esoloe.adapter import ADAPTER
from services.runtime.config import ServiceSettings
from services.runtime.main import start_game_service
from services.runtime.server import Server
from tabletop.esoloe.v1 import esoloe_pb2_grpc

TEST_SECRET = "test-signing-key-0123456789-abcdefghij"


class Platform:
    """e-SOLO-e replicas plus a gateway routing to all of them."""

    def __init__(
        self,
        redis_url: str,
        *,
        replicas: int = 1,
        rate_per_second: float = 1000.0,
        rate_burst: float = 2000.0,
    ) -> None:
        self.redis_url = redis_url
        self.replica_count = replicas
        self.rate = (rate_per_second, rate_burst)
        self.replicas: list[Server] = []
        self._redis: list[object] = []
        self.gateway: Gateway | None = None

    @property
    def target(self) -> str:
        assert self.gateway is not None
        return f"127.0.0.1:{self.gateway.port}"

    def replica_target(self, index: int) -> str:
        return f"127.0.0.1:{self.replicas[index].port}"

    async def __aenter__(self) -> Platform:
        settings = ServiceSettings(
            redis_url=self.redis_url, listen="127.0.0.1:0", grace_seconds=1.0
        )
        for _ in range(self.replica_count):
            server, redis = await start_game_service(
                ADAPTER, esoloe_pb2_grpc.add_EsoloeServiceServicer_to_server, settings
            )
            self.replicas.append(server)
            self._redis.append(redis)
        ports = ",".join(f"127.0.0.1:{s.port}" for s in self.replicas)
        self.gateway = Gateway(
            GatewaySettings(
                listen="127.0.0.1:0",
                token_secret=TEST_SECRET,
                rate_per_second=self.rate[0],
                rate_burst=self.rate[1],
                backends={"esoloe": f"ipv4:{ports}"},
                grace_seconds=1.0,
            )
        )
        await self.gateway.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.gateway is not None:
            await self.gateway.stop(0.5)
        for server in self.replicas:
            await server.stop(0.5)
        for redis in self._redis:
            await redis.aclose()  # type: ignore[attr-defined]
