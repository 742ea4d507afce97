"""The gateway process: `python -m gateway` (port 50050 unless LISTEN is set)."""

from __future__ import annotations

import ipaddress
import logging
import os

from gateway.accounts import ACCESS_TTL_SECONDS
from gateway.oidc import Issuer, issuers_from_json
from gateway.relay import LINKS, MAX_AGE_SECONDS
from gateway.server import DEFAULT_TIMEOUT, Gateway, GatewaySettings, Network
from gateway.session import MAX_CALLS as SESSION_MAX_CALLS
from gateway.web import MAX_CONNECTIONS as WEB_MAX_CONNECTIONS
from gateway.web import WebEdge, WebSettings
from runtime.config import (
    env_bool,
    env_float,
    env_int,
    env_str,
    game_backends,
    internal_key_from_env,
)
from runtime.observability import configure_logging, serve_metrics
from runtime.replicas import RESOLVE_SECONDS
from runtime.server import OpenStreams, TlsFiles, run, wait_for_signal

log = logging.getLogger("tabletop")


def settings_from_env() -> GatewaySettings:
    secret = os.environ.get("TOKEN_SECRET", "")
    if not secret:
        raise SystemExit("TOKEN_SECRET is not set: give the gateway a signing key (32+ bytes)")
    return GatewaySettings(
        listen=env_str("LISTEN", "0.0.0.0:50050"),
        token_secret=secret,
        token_ttl_seconds=env_int("TOKEN_TTL_SECONDS", 24 * 3600),
        rate_per_second=env_float("RATE_LIMIT_PER_SECOND", 50.0),
        rate_burst=env_float("RATE_LIMIT_BURST", 100.0),
        login_rate_per_second=env_float("LOGIN_RATE_LIMIT_PER_SECOND", 5.0),
        login_rate_burst=env_float("LOGIN_RATE_LIMIT_BURST", 20.0),
        backends=game_backends(),
        lobby=env_str("LOBBY_ADDR", ""),
        grace_seconds=env_float("GRACE_SECONDS", 10.0),
        call_timeout_seconds=env_float("CALL_TIMEOUT_SECONDS", DEFAULT_TIMEOUT),
        bot_key=env_str("BOT_KEY", ""),
        relay_links=env_int("RELAY_LINKS", LINKS),
        relay_max_age_seconds=env_float("RELAY_MAX_AGE_SECONDS", MAX_AGE_SECONDS),
        resolve_seconds=env_float("RESOLVE_SECONDS", RESOLVE_SECONDS),
        streams_per_player=env_int("MAX_STREAMS_PER_PLAYER", 16),
        session_max_calls=env_int("SESSION_MAX_CALLS", SESSION_MAX_CALLS),
        internal_key=internal_key_from_env(),
        tls=tls_from_env(),
        health_listen=env_str("HEALTH_LISTEN", ""),
        accounts=env_str("ACCOUNTS_ADDR", ""),
        accounts_timeout_seconds=env_float("ACCOUNTS_TIMEOUT_SECONDS", 5.0),
        access_ttl_seconds=env_int("ACCESS_TOKEN_TTL_SECONDS", ACCESS_TTL_SECONDS),
        revocation_poll_seconds=env_float("REVOCATION_POLL_SECONDS", 1.0),
        open_streams=OpenStreams(
            per_connection=env_int("OPEN_STREAMS_PER_CONNECTION", OpenStreams.per_connection),
            per_address=env_int("OPEN_STREAMS_PER_ADDRESS", OpenStreams.per_address),
            total=env_int("OPEN_STREAMS_TOTAL", OpenStreams.total),
        ),
        reflection=env_bool("REFLECTION", True),
        trusted_proxies=trusted_proxies_from_env(),
        oidc_issuers=oidc_issuers_from_env(),
    )


def trusted_proxies_from_env() -> tuple[Network, ...]:
    """TRUSTED_PROXIES: comma-separated addresses or networks (CIDR)."""
    text = env_str("TRUSTED_PROXIES", "")
    try:
        return tuple(ipaddress.ip_network(part.strip()) for part in text.split(",") if part.strip())
    except ValueError as error:
        raise SystemExit(f"TRUSTED_PROXIES: {error}") from None


def oidc_issuers_from_env() -> list[Issuer]:
    try:
        return issuers_from_json(env_str("OIDC_ISSUERS", ""))
    except ValueError as error:
        raise SystemExit(str(error)) from None


def tls_from_env() -> TlsFiles | None:
    """TLS_CERT_FILE and TLS_KEY_FILE (PEM): both, and the public port speaks TLS only."""
    cert, key = env_str("TLS_CERT_FILE", ""), env_str("TLS_KEY_FILE", "")
    if bool(cert) != bool(key):
        raise SystemExit("TLS_CERT_FILE and TLS_KEY_FILE go together: set both or neither")
    return TlsFiles(cert, key) if cert else None


def web_from_env(tls: TlsFiles | None) -> WebSettings | None:
    """WEB_LISTEN (host:port; unset: no web port), WEB_ROOT (the web client's built files),
    WEB_ORIGINS (other origins whose pages may call the API, comma-separated),
    WEB_MAX_CONNECTIONS; TLS as the gRPC port's (TLS_CERT_FILE, TLS_KEY_FILE)."""
    listen = env_str("WEB_LISTEN", "")
    if not listen:
        return None
    origins = tuple(o.strip() for o in env_str("WEB_ORIGINS", "").split(",") if o.strip())
    return WebSettings(
        listen,
        root=env_str("WEB_ROOT", ""),
        origins=origins,
        tls=tls,
        max_connections=env_int("WEB_MAX_CONNECTIONS", WEB_MAX_CONNECTIONS),
    )


async def main() -> None:
    gateway = Gateway(settings_from_env())
    await gateway.start()
    web_settings = web_from_env(gateway.settings.tls)
    web = None if web_settings is None else WebEdge(gateway.proxy, gateway.auth, web_settings)
    if web is not None:
        await web.start()
    serve_metrics(env_int("METRICS_PORT", 0))
    log.info(
        "listening",
        extra={
            "port": gateway.port,
            "tls": gateway.settings.tls is not None,
            "health_port": gateway.base.health_port or None,
            "backends": sorted(gateway.relays),
            "web_port": None if web is None else web.port,
        },
    )
    await wait_for_signal(gateway.settings.grace_seconds)
    if web is not None:
        await web.stop()
    await gateway.stop()


if __name__ == "__main__":
    configure_logging("gateway")
    run(main())
