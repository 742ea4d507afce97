"""Running the accounts service: `python -m services.accounts`.

Environment: DATABASE_URL (required: accounts are kept in PostgreSQL), LISTEN (default
0.0.0.0:50056), INTERNAL_KEY (calls must carry the gateway's proof made with it),
ACCEPT_UNBOUND_PROOFS, SESSION_TTL_SECONDS (how long an account's session lasts without a
login, default 30 days), ACCOUNTS_PER_ADDRESS_DAY (accounts one client address may make in a
day, UTC, default 10), METRICS_PORT, GRACE_SECONDS.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from psycopg_pool import AsyncConnectionPool

from runtime import db
from runtime.config import env_bool, env_float, env_int, env_str, internal_key_from_env
from runtime.observability import configure_logging, serve_metrics
from runtime.server import Server, run
from services.accounts.servicer import SERVICE, AccountsServicer
from services.accounts.store import ACCOUNTS_PER_ADDRESS_DAY, REFRESH_TTL_SECONDS, Accounts
from tabletop.accounts.v1 import accounts_pb2_grpc

log = logging.getLogger("tabletop.accounts")

DEFAULT_PORT = 50056


@dataclass(frozen=True, kw_only=True)
class AccountsSettings:
    database_url: str
    listen: str = f"0.0.0.0:{DEFAULT_PORT}"
    internal_key: str
    """Calls must carry the gateway's proof made with this key (wire.proof)."""
    accept_unbound_proofs: bool = False
    grace_seconds: float = 10.0
    metrics_port: int = 0
    refresh_ttl_seconds: int = REFRESH_TTL_SECONDS
    """How long an account's session lasts without a login."""
    accounts_per_address_day: int = ACCOUNTS_PER_ADDRESS_DAY
    """Accounts one client address may make in a day (UTC), counted in the database."""

    @staticmethod
    def from_env() -> AccountsSettings:
        url = env_str("DATABASE_URL", "")
        if not url:
            raise SystemExit("DATABASE_URL is required: accounts are kept in PostgreSQL")
        return AccountsSettings(
            database_url=url,
            listen=env_str("LISTEN", f"0.0.0.0:{DEFAULT_PORT}"),
            internal_key=internal_key_from_env(),
            accept_unbound_proofs=env_bool("ACCEPT_UNBOUND_PROOFS", False),
            grace_seconds=env_float("GRACE_SECONDS", 10.0),
            metrics_port=env_int("METRICS_PORT", 0),
            refresh_ttl_seconds=env_int("SESSION_TTL_SECONDS", REFRESH_TTL_SECONDS),
            accounts_per_address_day=env_int("ACCOUNTS_PER_ADDRESS_DAY", ACCOUNTS_PER_ADDRESS_DAY),
        )


@dataclass
class AccountsService:
    server: Server
    database: AsyncConnectionPool
    accounts: Accounts

    async def close(self) -> None:
        await self.database.close()


async def start_accounts_service(settings: AccountsSettings) -> AccountsService:
    database = db.pool(settings.database_url)
    await database.open(wait=False)
    accounts = Accounts(database, refresh_ttl_seconds=settings.refresh_ttl_seconds)
    server = Server(
        settings.listen,
        [SERVICE],
        grace_seconds=settings.grace_seconds,
        internal_key=settings.internal_key,
        accept_unbound_proofs=settings.accept_unbound_proofs,
    )
    accounts_pb2_grpc.add_AccountsServiceServicer_to_server(
        AccountsServicer(accounts, settings.accounts_per_address_day), server.server
    )
    await server.start()
    return AccountsService(server, database, accounts)


def run_accounts_service() -> None:
    configure_logging("accounts")
    settings = AccountsSettings.from_env()

    async def main() -> None:
        service = await start_accounts_service(settings)
        serve_metrics(settings.metrics_port)
        log.info("listening", extra={"port": service.server.port})
        await service.server.serve_until_signal()
        await service.close()

    run(main())
