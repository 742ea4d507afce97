"""Given a certificate, the gateway's public port speaks TLS only: a plaintext client is refused,
a client that does not trust the certificate is refused, and a client (and the bot workers)
over TLS play a whole game. Probes get a plaintext health-only port; "liveness" answers for the
process alone, while readiness follows Redis."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2
from redis import Redis as SyncRedis

from client.session import Session, Tls
from gateway.__main__ import tls_from_env
from runtime.config import ServiceSettings
from runtime.localredis import LocalRedis
from runtime.server import LIVENESS_SERVICE, TlsFiles
from services.game.main import start_game_service
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tests.integration.test_node_client import play_node
from tests.platform import (
    TEST_INTERNAL_KEY,
    Platform,
    health_becomes,
    health_of,
    play_until_finished,
)
from tests.timing import patience

pytestmark = pytest.mark.integration

NAME = "play.test"
"""The name the test certificate carries (the address called is 127.0.0.1)."""


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """A self-signed certificate for NAME and its key (PEM files), made with openssl."""
    directory = tmp_path_factory.mktemp("tls")
    cert, key = directory / "cert.pem", directory / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2",
         "-subj", f"/CN={NAME}", "-addext", f"subjectAltName=DNS:{NAME}"],
        check=True, capture_output=True,
    )  # fmt: skip
    return str(cert), str(key)


async def test_with_tls_plaintext_is_refused_and_tls_clients_play(
    redis_url: str, certificate: tuple[str, str]
) -> None:
    cert, key = certificate
    trusted = Tls(ca_file=cert, server_name=NAME)
    async with Platform(
        redis_url, games=("esoloe",), bot_workers=1, tls=(TlsFiles(cert, key), trusted)
    ) as platform:
        for refused in (Session(platform.target), Session(platform.target, tls=Tls())):
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await refused.login("eve")
            assert caught.value.code() == grpc.StatusCode.UNAVAILABLE
            await refused.channel.close()

        player = Session(platform.target, tls=trusted)
        await player.login("alice")
        reply = await lobby_pb2_grpc.LobbyServiceStub(player.channel).PlayAgainstBots(
            lobby_pb2.PlayAgainstBotsRequest(game="esoloe"), metadata=player.metadata
        )  # the bot worker reaches the gateway over TLS too, or the game never ends
        await play_until_finished(player, "esoloe", reply.status.game_id, reply.seat, timeout=60)

        assert platform.gateway is not None
        probes = f"127.0.0.1:{platform.gateway.base.health_port}"
        assert await health_of(probes) == health_pb2.HealthCheckResponse.SERVING
        assert await health_of(probes, LIVENESS_SERVICE) == health_pb2.HealthCheckResponse.SERVING
        async with grpc.aio.insecure_channel(probes) as channel:  # health only, nothing else
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await lobby_pb2_grpc.AuthServiceStub(channel).Login(
                    lobby_pb2.LoginRequest(name="eve"), timeout=patience(5)
                )
            assert caught.value.code() == grpc.StatusCode.UNIMPLEMENTED
        await player.channel.close()


async def test_the_tabletop_command_speaks_tls(
    redis_url: str, certificate: tuple[str, str]
) -> None:
    cert, key = certificate
    async with Platform(
        redis_url, games=("esoloe",), tls=(TlsFiles(cert, key), Tls(cert, NAME))
    ) as platform:

        async def health(*flags: str) -> tuple[int, str]:
            process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "client.cli", "health", "--gateway", platform.target,
                *flags, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            )  # fmt: skip
            out, _ = await process.communicate()
            return await process.wait(), out.decode()

        code, out = await health("--ca-file", cert, "--server-name", NAME)
        assert code == 0, out
        assert "SERVING" in out, out
        code, out = await health()
        assert code == 1, out
        assert "UNAVAILABLE" in out, out


async def test_the_node_example_plays_over_tls(
    redis_url: str, certificate: tuple[str, str]
) -> None:
    """A client written from the protos alone, in another language, speaks TLS to the gateway."""
    cert, key = certificate
    async with Platform(
        redis_url, games=("esoloe",), bot_workers=1, tls=(TlsFiles(cert, key), Tls(cert, NAME))
    ) as platform:
        out = await play_node(
            platform, "esoloe", env={"TABLETOP_CA": cert, "TABLETOP_SERVER_NAME": NAME}
        )
    assert "game over after" in out


def test_a_certificate_needs_its_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TLS_CERT_FILE", str(tmp_path / "cert.pem"))
    monkeypatch.delenv("TLS_KEY_FILE", raising=False)
    with pytest.raises(SystemExit, match="set both or neither"):
        tls_from_env()
    monkeypatch.setenv("TLS_KEY_FILE", str(tmp_path / "key.pem"))
    files = tls_from_env()
    assert files is not None
    with pytest.raises(SystemExit, match="cannot read the TLS certificate"):
        files.credentials()
    monkeypatch.delenv("TLS_CERT_FILE")
    monkeypatch.delenv("TLS_KEY_FILE")
    assert tls_from_env() is None


async def test_liveness_stays_while_readiness_follows_redis() -> None:
    """A Redis outage makes the services unready (no calls routed to them) but never "dead": a
    liveness probe that followed Redis would restart every pod at once."""
    redis = LocalRedis(appendonly=False)
    try:
        async with Platform(redis.url, games=("esoloe",)) as platform:
            replica = platform.replica_target(0)
            assert await health_of(replica) == health_pb2.HealthCheckResponse.SERVING
            redis.stop()
            await health_becomes(replica, health_pb2.HealthCheckResponse.NOT_SERVING)
            live = await health_of(replica, LIVENESS_SERVICE)
            assert live == health_pb2.HealthCheckResponse.SERVING
    finally:
        redis.stop()


async def test_a_service_started_while_redis_refuses_it_waits_unready(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Started while Redis refuses its password (a rotation half done) or is away, a service
    comes up alive and unready, and becomes ready once Redis takes it; it never exits (a
    restart loop in every pod, and tracebacks instead of a reason)."""
    redis = LocalRedis(appendonly=False, password="the-new-one")
    monkeypatch.setenv("REDIS_PASSWORD", "the-old-one")
    try:
        service = await start_game_service(
            "esoloe",
            ServiceSettings(
                redis_url=redis.url, listen="127.0.0.1:0", internal_key=TEST_INTERNAL_KEY
            ),
        )
        target = f"127.0.0.1:{service.server.port}"
        try:
            assert await health_of(target) == health_pb2.HealthCheckResponse.NOT_SERVING
            assert (
                await health_of(target, LIVENESS_SERVICE) == health_pb2.HealthCheckResponse.SERVING
            )
            admin = SyncRedis(port=redis.port, password="the-new-one")
            admin.config_set("requirepass", "the-old-one")  # the rotation, completed
            admin.close()
            await health_becomes(target, health_pb2.HealthCheckResponse.SERVING)
        finally:
            await service.server.stop(0)
            await service.close()
    finally:
        redis.stop()
