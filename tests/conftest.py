"""Shared fixtures: a real Redis for integration tests, and the platform's servers on real ports.

Redis comes from testcontainers when a Docker engine answers, otherwise from a `redis-server` this
fixture starts on a free port in a temporary directory. Tests never touch a Redis they did not
start (e.g. one on 127.0.0.1:6379).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from runtime.localredis import LocalRedis
from tests.platform import Platform


def _docker_available() -> bool:
    if os.environ.get("TABLETOP_NO_DOCKER"):
        return False
    if not os.environ.get("DOCKER_HOST") and not os.path.exists("/var/run/docker.sock"):
        return False
    try:
        import docker

        client = docker.from_env(timeout=2)
        try:
            return bool(client.ping())
        finally:
            client.close()
    except Exception:
        return False


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    if _docker_available():
        from testcontainers.redis import RedisContainer

        with RedisContainer("redis:7-alpine") as container:
            host = container.get_container_host_ip()
            port = container.get_exposed_port(6379)
            yield f"redis://{host}:{port}/0"
        return
    server = LocalRedis(appendonly=False)
    try:
        yield server.url
    finally:
        server.stop()


@pytest_asyncio.fixture
async def platform(redis_url: str) -> AsyncIterator[Platform]:
    """Two e-SOLO-e replicas and a gateway on free ports, sharing the session's Redis."""
    async with Platform(redis_url, replicas=2) as running:
        yield running
