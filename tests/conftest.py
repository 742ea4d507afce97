"""Shared fixtures: a real Redis and a real PostgreSQL for integration tests, and the platform's
servers on real ports.

Redis comes from testcontainers when a Docker engine answers, otherwise from a `redis-server` this
fixture starts on a free port in a temporary directory; PostgreSQL from the OS's `postgres`, on
a free port too. Tests never touch a server they did not start (e.g. one on 127.0.0.1:6379 or
5432).

Every test is held to two things here: its waits are bounded from one scale factor
(tests/timing.py: the per-test timeout is scaled by it too), and every process it started is
gone when it ends (tests/leftovers.py).
"""

from __future__ import annotations

import os
import uuid
from collections.abc import AsyncIterator, Iterator

import psycopg
import pytest
import pytest_asyncio
from hypothesis import HealthCheck, settings

from runtime import db
from runtime.localpg import DATABASE, LocalPostgres
from runtime.localredis import LocalRedis
from tests import leftovers
from tests.platform import Platform
from tests.timing import PATIENCE, patience

leftovers.mark_this_run()

# Hypothesis times nothing: its per-example deadline and its "too slow" health check are
# assertions on wall time, which a busy machine fails (benchmarks measure speed).
settings.register_profile("tabletop", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("tabletop")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config: pytest.Config) -> None:
    """The per-test timeout (pyproject's, when none is given on the command line or in
    PYTEST_TIMEOUT), scaled by PATIENCE like every other bound."""
    if config.getoption("timeout", None) is None and not os.environ.get("PYTEST_TIMEOUT"):
        ini = config.getini("timeout")
        if ini:
            config.option.timeout = float(ini) * PATIENCE


@pytest.fixture(autouse=True)
def no_process_left_behind() -> Iterator[None]:
    """The processes a test started are gone when it ends (given a moment to finish
    stopping); any left are stopped and the test fails, naming them."""
    before = set(leftovers.ours())
    yield
    started = [pid for pid in leftovers.ours() if pid not in before]
    left = leftovers.wait_gone(started, patience(2))
    if left:
        leftovers.stop(left)
        pytest.fail(f"the test left processes running: {leftovers.describe(left)}")


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Nothing of this run is left running once it ends (its Redis included)."""
    left = leftovers.wait_gone(leftovers.ours(), patience(2))
    if left:
        leftovers.stop(left)
        session.config.get_terminal_writer().line(
            f"\nthe test run left processes running (now stopped): {leftovers.describe(left)}",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


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


@pytest.fixture(scope="session")
def postgres() -> Iterator[LocalPostgres]:
    """A PostgreSQL server of the tests' own, on a free port, with the migrations applied to
    its database `tabletop` (the template of each test's database)."""
    server = LocalPostgres()
    try:
        db.migrate(server.url)
        yield server
    finally:
        server.stop()


@pytest.fixture
def database_url(postgres: LocalPostgres) -> str:
    """A database of this test's own, migrated (a copy of the session's template)."""
    name = f"test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(postgres.admin_url, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{DATABASE}"')
    return postgres.url.rsplit("/", 1)[0] + "/" + name


@pytest_asyncio.fixture
async def platform(redis_url: str) -> AsyncIterator[Platform]:
    """Two e-SOLO-e replicas and a gateway on free ports, sharing the session's Redis."""
    async with Platform(redis_url, replicas=2) as running:
        yield running
