"""API tokens and bot accounts on the real stack (real PostgreSQL, real Redis, real servers): an
account makes named, scoped, expiring tokens, lists and revokes them; a program exchanges one
for an access token that can do what its scopes allow and no more; a revoked token stops
working everywhere within the gateways' poll; a bot account plays only with a `bot` token."""

from __future__ import annotations

import dataclasses

import psycopg

from client.session import Session
from gateway.server import Gateway
from services.accounts.store import TOKENS_PER_ACCOUNT
from tabletop.common.v1 import common_pb2
from tabletop.esoloe.v1 import esoloe_pb2
from tabletop.lobby.v1 import lobby_pb2
from tests.integration.test_accounts import PASSWORD, POLL, refusal, refused, stack, whoami
from tests.platform import Platform
from tests.timing import eventually

__all__ = ["stack"]  # the fixture of tests/integration/test_accounts.py


async def make_token(
    owner: Session, name: str = "my bot", scopes: tuple[str, ...] = ("play",), days: int = 0
) -> lobby_pb2.ApiToken:
    reply: lobby_pb2.ApiToken = await owner.auth.CreateApiToken(
        lobby_pb2.CreateApiTokenRequest(name=name, scopes=scopes, expires_in_days=days),
        metadata=owner.metadata,
    )
    return reply


async def tokens_of(owner: Session) -> list[lobby_pb2.ApiToken]:
    reply = await owner.auth.ListApiTokens(
        lobby_pb2.ListApiTokensRequest(), metadata=owner.metadata
    )
    return list(reply.tokens)


async def revoke(owner: Session, token_id: str) -> None:
    await owner.auth.RevokeApiToken(
        lobby_pb2.RevokeApiTokenRequest(token_id=token_id), metadata=owner.metadata
    )


async def create_game(session: Session) -> esoloe_pb2.CreateGameResponse:
    reply: esoloe_pb2.CreateGameResponse = await session.game("esoloe").CreateGame(
        esoloe_pb2.CreateGameRequest(players=[session.player_id, session.player_id]),
        metadata=session.metadata,
    )
    return reply


async def test_a_play_token_acts_as_its_account_and_is_listed(
    stack: Platform, database_url: str
) -> None:
    owner = Session(stack.target)
    account = await owner.register("kim", PASSWORD)
    made = await make_token(owner, "laptop bot")
    assert made.token.startswith("tt_")
    assert list(made.scopes) == ["play"]
    assert 89 * 86400 <= made.expires_at.seconds - made.created_at.seconds <= 91 * 86400
    program = Session(stack.target)
    login = await program.token_login(made.token)
    assert login.player_id == account.player_id
    assert login.session_id == made.token_id
    assert not login.refresh_token
    me = await whoami(program)
    assert (me.kind, me.name, me.api_token, list(me.scopes), me.bot_account) == (
        "account", "kim", True, ["play"], False,
    )  # fmt: skip
    created = await create_game(program)
    await program.game("esoloe").Play(
        common_pb2.PlayRequest(game_id=created.status.game_id, seat=0, move="a12"),
        metadata=program.metadata,
    )
    listed = await tokens_of(owner)
    assert [(t.token_id, t.name, t.token) for t in listed] == [(made.token_id, "laptop bot", "")]
    assert listed[0].HasField("last_used_at")
    with psycopg.connect(database_url) as connection:
        stored = connection.execute("SELECT hash FROM api_tokens").fetchall()
    assert stored
    assert all(made.token.encode() not in bytes(row[0]) for row in stored)
    await owner.close()
    await program.close()


async def test_a_token_without_a_scope_only_reads(stack: Platform) -> None:
    owner = Session(stack.target)
    await owner.register("lee", PASSWORD)
    game = await create_game(owner)
    reader = Session(stack.target)
    await reader.token_login((await make_token(owner, "viewer", scopes=())).token)
    view = await reader.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=game.status.game_id, seat=0), metadata=reader.metadata
    )
    assert view.status.game_id == game.status.game_id
    assert await refused(create_game, reader) == "NOT_PERMITTED"
    play = common_pb2.PlayRequest(game_id=game.status.game_id, seat=0, move="a12")
    assert (
        await refused(reader.game("esoloe").Play, play, metadata=reader.metadata) == "NOT_PERMITTED"
    )
    after = await owner.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=game.status.game_id, seat=0), metadata=owner.metadata
    )
    assert after.status.version == 0  # the refused move changed nothing
    await owner.close()
    await reader.close()


async def test_a_token_cannot_manage_the_account(stack: Platform) -> None:
    owner = Session(stack.target)
    await owner.register("max", PASSWORD)
    program = Session(stack.target)
    await program.token_login((await make_token(owner)).token)
    assert await refused(make_token, program) == "NOT_PERMITTED"
    assert await refused(tokens_of, program) == "NOT_PERMITTED"
    assert await refused(program.logout) == "NOT_PERMITTED"
    change = lobby_pb2.ChangePasswordRequest(old_password=PASSWORD, new_password="x" * 10)
    assert (
        await refused(program.auth.ChangePassword, change, metadata=program.metadata)
        == "NOT_PERMITTED"
    )
    assert await refused(program.refresh) == "INVALID_ARGUMENT"
    guest = Session(stack.target)
    await guest.login("guest")
    assert await refused(make_token, guest) == "UNAUTHENTICATED"
    await owner.close()
    await program.close()
    await guest.close()


async def test_a_revoked_token_stops_working_on_every_gateway(stack: Platform) -> None:
    assert stack.gateway is not None
    other = Gateway(dataclasses.replace(stack.gateway.settings, listen="127.0.0.1:0"))
    await other.start()
    try:
        owner = Session(stack.target)
        await owner.register("nia", PASSWORD)
        made = await make_token(owner)
        kept = await make_token(owner, "other bot")
        here = Session(stack.target)
        await here.token_login(made.token)
        there = Session(f"127.0.0.1:{other.port}")
        there.token = here.token
        assert (await whoami(there)).name == "nia"
        stranger = Session(stack.target)
        await stranger.register("oli", PASSWORD)
        assert await refused(revoke, stranger, made.token_id) == "TOKEN_NOT_FOUND"  # not theirs
        await revoke(owner, made.token_id)
        assert await refused(whoami, here) == "UNAUTHENTICATED"  # at once where it was done
        ended = await eventually(
            lambda: refusal(whoami, there), seconds=POLL * 20, what="refused on the other gateway"
        )
        assert ended == "UNAUTHENTICATED"
        assert await refused(Session(stack.target).token_login, made.token) == "UNAUTHENTICATED"
        assert await refused(revoke, owner, made.token_id) == "TOKEN_NOT_FOUND"  # once
        assert [t.token_id for t in await tokens_of(owner)] == [kept.token_id]
        await Session(stack.target).token_login(kept.token)  # the other token still works
        for session in (owner, here, there, stranger):
            await session.close()
    finally:
        await other.stop(0)


async def test_tokens_are_checked_bounded_and_expire(stack: Platform, database_url: str) -> None:
    owner = Session(stack.target)
    await owner.register("pat", PASSWORD)
    assert await refused(make_token, owner, "", ("play",)) == "INVALID_ARGUMENT"
    assert await refused(make_token, owner, "x" * 41, ("play",)) == "INVALID_ARGUMENT"
    assert await refused(make_token, owner, "a", ("admin",)) == "INVALID_ARGUMENT"
    assert await refused(make_token, owner, "a", ("play",), 366) == "INVALID_ARGUMENT"
    assert await refused(make_token, owner, "a", ("play",), -1) == "INVALID_ARGUMENT"
    assert await tokens_of(owner) == []  # nothing refused was made
    short = await make_token(owner, "short", days=1)
    assert 86399 <= short.expires_at.seconds - short.created_at.seconds <= 86401
    for number in range(TOKENS_PER_ACCOUNT - 1):
        await make_token(owner, f"bot {number}")
    assert await refused(make_token, owner) == "LIMIT_REACHED"
    with psycopg.connect(database_url) as connection:
        connection.execute(
            "UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = %s",
            (short.token_id,),
        )
    assert await refused(Session(stack.target).token_login, short.token) == "UNAUTHENTICATED"
    await make_token(owner, "room again")  # an expired token no longer counts
    for wrong in ("", "tt_nope", "x" * 200, "Bearer " + short.token):
        assert await refused(Session(stack.target).token_login, wrong) == "UNAUTHENTICATED"
    await owner.close()


async def test_a_bot_account_plays_only_with_a_bot_token(stack: Platform) -> None:
    owner = Session(stack.target)
    account = await owner.register("robo", PASSWORD, bot=True)
    me = await whoami(owner)
    assert me.bot_account
    assert not me.api_token
    assert await refused(create_game, owner) == "NOT_PERMITTED"  # not with a login's token
    assert await refused(make_token, owner, "b", ("play",)) == "INVALID_ARGUMENT"
    program = Session(stack.target)
    await program.token_login((await make_token(owner, "engine", ("bot",))).token)
    assert program.player_id == account.player_id
    assert (await whoami(program)).bot_account
    person = Session(stack.target)
    await person.register("quin", PASSWORD)
    created = await create_game(program)
    seen = await person.game("esoloe").GetView(
        common_pb2.GetViewRequest(game_id=created.status.game_id, public=True),
        metadata=person.metadata,
    )  # shown as a bot to everyone
    assert [(s.name, s.bot) for s in seen.status.seats] == [("robo", True), ("robo", True)]
    own = await create_game(person)
    assert [s.bot for s in own.status.seats] == [False, False]  # people as people
    assert await refused(make_token, person, "b", ("bot",)) == "INVALID_ARGUMENT"
    guest = Session(stack.target)
    await guest.login("ray")
    assert await refused(guest.register, "raybot", PASSWORD, True) == "INVALID_ARGUMENT"
    for session in (owner, program, person, guest):
        await session.close()
