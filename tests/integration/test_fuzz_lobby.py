"""Random and malformed input at the gateway's own RPCs (Auth, Lobby), at CreateGame through the
gateway, and at the game services' own ports (bypassing the gateway): every answer is OK or a
proper refusal with a message (never UNKNOWN or INTERNAL), and nothing changes in Redis that the
call had no right to change. The game RPCs through the gateway are fuzzed in test_fuzz.py.

Effects are checked in Redis itself, with a client of its own: the tickets (every field) and the
games (every field of their state hash) before and after each call.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any, TypeVar

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from redis.asyncio import Redis

import games
from gateway.auth import NAME_PATTERN
from runtime import keys
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from tests.integration.test_fuzz import _answer, game_ids, moves, seats, versions
from tests.integration.test_security import forged_tokens
from tests.platform import TEST_BOT_KEY, Platform, logged_in
from tests.timing import patience
from wire.api import api
from wire.metadata import PLAYER_METADATA, REQUEST_METADATA
from wire.players import new_bot_id

pytestmark = pytest.mark.integration

GAMES = tuple(games.names())
FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Each example is either well-formed throughout (`valid`: the right token, a real game, sane
# options...), so that the paths that accept and change something are fuzzed too, or draws every
# field from valid and malformed values alike.
T = TypeVar("T")


def either(
    valid: bool, good: st.SearchStrategy[T], bad: st.SearchStrategy[T]
) -> st.SearchStrategy[T]:
    return good if valid else st.one_of(good, bad)


huge = st.integers(min_value=5_000, max_value=70_000).map(lambda n: "x" * n)
texts = st.one_of(
    st.text(max_size=40),
    st.binary(max_size=30).map(lambda b: b.decode("latin-1")),
    huge,
)
junk_games = st.one_of(
    st.sampled_from(["", "ESOLOE", "solo ", "chess", "esoloe\x00", "lobby", "../solo"]), texts
)
LEVELS = st.sampled_from(["", "random", "greedy", "strong", "expert"])
junk_levels = st.one_of(st.sampled_from(["Random", "expert", "random\n"]), texts)
int32s = st.one_of(
    st.integers(min_value=-3, max_value=12),
    st.integers(min_value=-(2**31), max_value=2**31 - 1),
)
FORGED = ["none", "garbage", "other-key", "expired", "edited", "unsigned", "no-expiry"]
junk_ticket_ids = st.one_of(st.text(alphabet="0123456789abcdef", min_size=20, max_size=20), texts)
# Player ids as the internal metadata carries them (ASCII only: gRPC metadata is ASCII text).
metadata_texts = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80)
junk_players = st.one_of(
    st.sampled_from(["", "MISSING", "bot-random-00000000", "p-0123456789abcdef"]),
    metadata_texts,
    st.integers(min_value=100, max_value=9_000).map(lambda n: "p" * n),
)
SEATS = {game: games.rules(game).new_game(0, {}).num_seats for game in GAMES}
"""Seat counts with default options."""


@st.composite
def game_options(draw: st.DrawFn, game: str | None = None) -> Any:
    """A GameOptions message for a random game (more often the one given), or None; values in
    and out of range, enum numbers that do not exist."""
    if draw(st.booleans()):
        return None
    branch = draw(st.sampled_from(GAMES if game not in GAMES else [game, game, *GAMES]))
    options = lobby_pb2.GameOptions()
    chosen = getattr(options, branch)
    chosen.SetInParent()
    if branch == "solo":
        for name in ("players", "start_points", "rounds"):
            value = draw(st.none() | int32s)
            if value is not None:
                setattr(chosen, name, value)
        mode = draw(st.none() | st.integers(min_value=0, max_value=7))
        if mode is not None:
            chosen.mode = mode
        stacking = draw(st.none() | st.booleans())
        if stacking is not None:
            chosen.mixed_stacking = stacking
    elif branch == "zoxso":
        plies = draw(st.none() | int32s)
        if plies is not None:
            chosen.max_plies = plies
    elif branch == "solace":
        monochrome = draw(st.none() | st.booleans())
        if monochrome is not None:
            chosen.no_monochrome = monochrome
    return options


@st.composite
def time_controls(draw: st.DrawFn, valid: bool) -> common_pb2.TimeControl | None:
    """A TimeControl, or None (unset: the game's default). Valid ones are long (an hour at
    least), so that no deadline passes while the fuzzer looks for changes; the others have
    values out of range, outcomes that do not exist, junk bot levels."""
    if draw(st.booleans()):
        return None
    seconds = either(valid, st.sampled_from([0, 3600, 86400]), st.integers(0, 2**32 - 1))
    tc = common_pb2.TimeControl(
        move_seconds=draw(seconds),
        clock_seconds=draw(seconds),
        abort_seconds=draw(seconds),
        bot_level=draw(either(valid, LEVELS, junk_levels)),
    )
    tc.increment_seconds = draw(
        either(valid, st.just(5 if tc.clock_seconds else 0), st.integers(0, 2**32 - 1))
    )
    tc.on_timeout = common_pb2.Timeout.ValueType(draw(st.integers(0, 2 if valid else 7)))
    return tc


def player_lists(valid: bool, game: str, ids: list[str]) -> st.SearchStrategy[list[str]]:
    """Seat lists for CreateGame: the right length, or any length with junk ids too."""
    seated = st.sampled_from(ids)
    good = st.lists(seated, min_size=SEATS[game], max_size=SEATS[game])
    return either(valid, good, st.lists(st.one_of(seated, texts), max_size=12))


class World:
    """One platform (every game, matchmaking on, no matchmaker or bot worker, so nothing moves
    on its own), a fuzzing player, a victim with a queued ticket, and one game of each kind
    created directly at the game services for the direct fuzzer."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.platform: Platform | None = None
        self.redis: Redis | None = None
        self.sessions: dict[str, Any] = {}
        self.tokens: dict[str, str] = {}
        self.victim_ticket = ""
        self.own_tickets: list[str] = []
        self.direct_games: dict[str, str] = {}
        self.direct_channels: dict[str, grpc.aio.Channel] = {}
        self.games_before: set[bytes] = set()
        self.direct_players = ("p-fuzz-owner", "p-fuzz-second")
        self.counts: Counter[tuple[str, str, str]] = Counter()

    def run(self, coro: Any) -> Any:
        return self.loop.run_until_complete(coro)

    def open(self, redis_url: str) -> World:
        async def start() -> None:
            self.platform = Platform(redis_url, games=GAMES)
            await self.platform.__aenter__()
            self.redis = Redis.from_url(redis_url)
            self.games_before = set(await self.games())
            player, victim = await logged_in(self.platform, "fuzzer", "victim")
            self.sessions = {"player": player, "victim": victim}
            self.tokens = forged_tokens(player.token, victim.player_id)
            ticket = await lobby_pb2_grpc.LobbyServiceStub(victim.channel).FindMatch(
                lobby_pb2.FindMatchRequest(game="esoloe"), metadata=victim.metadata
            )
            self.victim_ticket = ticket.ticket_id
            for game in GAMES:
                await self.new_direct_game(game)

        self.run(start())
        return self

    async def tidy(self) -> None:
        """Leave nothing for the later tests that share this Redis: their matchmakers would
        match a queued ticket, their bot workers play a bot seat that is to move. So cancel the
        tickets and end (resign, at the game service) every game made here."""
        for who, ticket_ids in (("player", self.own_tickets), ("victim", [self.victim_ticket])):
            session = self.sessions[who]
            for ticket_id in ticket_ids:
                await lobby_pb2_grpc.LobbyServiceStub(session.channel).CancelTicket(
                    lobby_pb2.CancelTicketRequest(ticket_id=ticket_id), metadata=session.metadata
                )
        for key in set(await self.games()) - self.games_before:
            game_id = _game_id(key)
            seat_0 = ((PLAYER_METADATA, (await self.seats_of(game_id))[0]),)
            with contextlib.suppress(grpc.aio.AioRpcError):  # GAME_OVER: ended already
                await self.direct_stub(game_id.split("-", 1)[0]).Resign(
                    common_pb2.ResignRequest(game_id=game_id, seat=0), metadata=seat_0
                )

    def close(self) -> None:
        async def stop() -> None:
            try:
                await self.tidy()
            finally:  # whatever happened, leave no connection open for the later tests
                for session in self.sessions.values():
                    await session.close()
                for channel in self.direct_channels.values():
                    await channel.close()
                assert self.redis is not None
                assert self.platform is not None
                await self.redis.aclose()
                await self.platform.__aexit__(None, None, None)

        self.run(stop())
        self.run(_settle())
        self.loop.close()
        print("\nstatuses the fuzzers saw (run with -s):")
        for (fuzzer, rpc, code), count in sorted(self.counts.items()):
            print(f"{fuzzer:7} {rpc:15} {code:20} {count}")

    def direct_stub(self, game: str) -> Any:
        assert self.platform is not None
        channel = self.direct_channels.get(game)
        if channel is None:
            channel = self.platform.internal_channel(self.platform.replica_target(0, game))
            self.direct_channels[game] = channel
        return api(game).stub(channel)

    async def new_direct_game(self, game: str) -> None:
        """A fresh game of `game` at its service, seating the direct fuzzer's players."""
        players = self.direct_players[: min(2, SEATS[game])]
        request = api(game).pb2.CreateGameRequest(players=players)
        if game == "solo":
            request.options.players = 2
        created = await self.direct_stub(game).CreateGame(request)
        self.direct_games[game] = created.status.game_id

    async def tickets(self) -> dict[bytes, Any]:
        assert self.redis is not None
        found = [key async for key in self.redis.scan_iter(match=keys.ticket("*"), _type="HASH")]
        return {key: await self.redis.hgetall(key) for key in found}

    async def games(self) -> dict[bytes, Any]:
        """Every game in Redis; whole state hashes for the direct fuzzer's games, and only the
        ids of the others (many other tests share this Redis)."""
        assert self.redis is not None
        watched = {keys.game_state(g).encode() for g in self.direct_games.values()}
        return {
            key: (await self.redis.hgetall(key)) if key in watched else {}
            async for key in self.redis.scan_iter(match=keys.game_state("*"))
        }

    async def seats_of(self, game_id: str) -> list[str]:
        assert self.redis is not None
        meta = await self.redis.hget(keys.game_state(game_id), "meta")
        assert meta is not None
        seated: list[str] = json.loads(meta)["seats"]
        return seated


async def _settle() -> None:
    """Cancel and wait for what is left on the loop (server tasks of Watch calls that were
    cancelled late), so that closing the loop destroys no pending task."""
    pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
    for task in pending:
        task.cancel()
    await asyncio.gather(*pending, return_exceptions=True)


@pytest.fixture(scope="module")
def world(redis_url: str) -> Iterator[World]:
    opened = World().open(redis_url)
    yield opened
    opened.close()


def _set_options(field: Any, options: Any) -> None:
    if options is not None:
        field.CopyFrom(options)


def _set_time_control(request: Any, time_control: common_pb2.TimeControl | None) -> None:
    if time_control is not None:
        request.time_control.CopyFrom(time_control)


def _changed(before: Mapping[bytes, Any], after: Mapping[bytes, Any]) -> set[bytes]:
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


def _game_id(key: bytes) -> str:
    """The game id in a game's state key."""
    return key.decode().split("{", 1)[1].split("}", 1)[0]


def _new_game_id(changed: set[bytes]) -> str:
    """The id of the one game a call created."""
    assert len(changed) == 1, changed
    return _game_id(changed.pop())


@FUZZ
@given(
    valid=st.booleans(),
    rpc=st.sampled_from(
        [
            "Login",
            "BotLogin",
            "FindMatch",
            "WatchTicket",
            "CancelTicket",
            "PlayAgainstBots",
            "CreateGame",
        ]
    ),
    service=st.sampled_from(GAMES),
    data=st.data(),
)
def test_gateway_own_rpcs_refuse_cleanly_and_change_nothing(
    world: World, valid: bool, rpc: str, service: str, data: st.DataObject
) -> None:
    """Refused calls change no ticket and create no game; accepted ones change only what is the
    caller's: a FindMatch adds one queued ticket of theirs, a CancelTicket closes only their
    tickets, a PlayAgainstBots or CreateGame adds exactly one game as asked. Nobody's token but
    the player's own is accepted, and no bot token is issued without the bot key."""
    player = world.sessions["player"]
    who = data.draw(either(valid, st.just("player"), st.sampled_from(FORGED)), "who")
    metadata: tuple[tuple[str, str], ...] = (
        player.metadata if who == "player"
        else () if who == "none"
        else (("authorization", f"Bearer {world.tokens[who]}"),)
    )  # fmt: skip
    game = data.draw(either(valid, st.sampled_from(GAMES), junk_games), "game")
    level = data.draw(either(valid, LEVELS, junk_levels), "level")
    options = data.draw(either(valid, st.none(), game_options(game)), "options")
    time_control = data.draw(time_controls(valid), "time_control")
    auth = lobby_pb2_grpc.AuthServiceStub(player.channel)
    lobby = lobby_pb2_grpc.LobbyServiceStub(player.channel)
    request: Any
    if rpc == "Login":
        name = either(valid, st.from_regex(NAME_PATTERN, fullmatch=True), texts)
        request = lobby_pb2.LoginRequest(name=data.draw(name))
        method = auth.Login
    elif rpc == "BotLogin":
        request = lobby_pb2.BotLoginRequest(
            player_id=data.draw(either(valid, st.builds(new_bot_id, LEVELS), texts)),
            key=data.draw(either(valid, st.just(TEST_BOT_KEY), st.one_of(st.just(""), texts))),
        )
        method = auth.BotLogin
    elif rpc == "FindMatch":
        bots = lobby_pb2.BotFill.ValueType(
            data.draw(either(valid, st.integers(0, 2), st.integers(0, 5)))
        )
        request = lobby_pb2.FindMatchRequest(
            game=game, bots=bots, level=level,
            seats=data.draw(either(valid, st.just(0), int32s)),
            bots_after_seconds=data.draw(either(valid, st.integers(1, 3600), int32s)),
        )  # fmt: skip
        _set_options(request.options, options)
        _set_time_control(request, time_control)
        method = lobby.FindMatch
    elif rpc in ("WatchTicket", "CancelTicket"):
        ticket_id = data.draw(either(valid, st.sampled_from(["VICTIM", "OWN"]), junk_ticket_ids))
        if ticket_id in ("VICTIM", "OWN"):
            own = world.own_tickets[-1:] or [""]
            ticket_id = world.victim_ticket if ticket_id == "VICTIM" else own[0]
        request = getattr(lobby_pb2, f"{rpc}Request")(ticket_id=ticket_id)
        method = getattr(lobby, rpc)
    elif rpc == "PlayAgainstBots":
        request = lobby_pb2.PlayAgainstBotsRequest(
            game=game, level=level, watch_only=data.draw(st.booleans())
        )
        seat = data.draw(either(valid, st.none() | st.integers(-1, 1), int32s))
        if seat is not None:
            request.seat = seat
        _set_options(request.options, options)
        _set_time_control(request, time_control)
        method = lobby.PlayAgainstBots
    else:
        ids = [player.player_id, "p-0123456789abcdef", "bot-random-0123abcd"]
        request = api(service).pb2.CreateGameRequest(
            players=data.draw(player_lists(valid, service, ids))
        )
        if options is not None and options.WhichOneof("game") == service:
            request.options.CopyFrom(getattr(options, service))
        _set_time_control(request, time_control)
        method = api(service).stub(player.channel).CreateGame

    async def one() -> None:
        tickets, games = await world.tickets(), await world.games()
        reply: list[Any] = []
        timeout = 1 if rpc == "WatchTicket" else 10
        call = method(request, metadata=metadata, timeout=timeout)
        code = await _answer(call if rpc == "WatchTicket" else _keep(call, reply))
        world.counts["gateway", rpc, code.name] += 1
        new_tickets = _changed(tickets, await world.tickets())
        new_games = _changed(games, await world.games())
        if code != grpc.StatusCode.OK:
            assert not new_tickets, f"refused {rpc} changed tickets {new_tickets}"
            assert not new_games, f"refused {rpc} changed games {new_games}"
            return
        assert who == "player" or rpc in ("Login", "BotLogin"), f"{who} token accepted"
        if rpc == "BotLogin":
            assert request.key == TEST_BOT_KEY, "a bot token without the bot key"
        if rpc == "FindMatch":
            (key,) = new_tickets
            ticket = (await world.tickets())[key]
            assert ticket[b"player"].decode() == player.player_id
            assert ticket[b"state"] == b"queued"
            world.own_tickets.append(reply[0].ticket_id)
        elif rpc == "CancelTicket":
            assert new_tickets <= {keys.ticket(t).encode() for t in world.own_tickets}
        else:
            assert not new_tickets
        if rpc == "PlayAgainstBots":
            seated = await world.seats_of(_new_game_id(new_games))
            mine = [i for i, p in enumerate(seated) if p == player.player_id]
            assert mine == ([] if request.watch_only else [reply[0].seat])
        elif rpc == "CreateGame":
            assert await world.seats_of(_new_game_id(new_games)) == list(request.players)
            assert set(request.players) == {player.player_id}, "seated someone else"
        else:
            assert not new_games

    world.run(one())
    world.run(_victim_ticket_is_queued(world))


async def _keep(call: Any, into: list[Any]) -> Any:
    """Await a unary call, keeping its reply."""
    reply = await call
    into.append(reply)
    return reply


async def _victim_ticket_is_queued(world: World) -> None:
    assert world.redis is not None
    state = await world.redis.hget(keys.ticket(world.victim_ticket), "state")
    assert state == b"queued", "another player's ticket changed"


@FUZZ
@given(
    valid=st.booleans(),
    game=st.sampled_from(GAMES),
    rpc=st.sampled_from(
        ["CreateGame", "GetView", "LegalMoves", "Play", "Play", "Resign", "Watch", "StopGame"]
    ),
    request_key=st.one_of(st.none(), metadata_texts),
    public=st.booleans(),
    request_id=st.text(max_size=80),
    data=st.data(),
)
def test_game_services_called_directly_refuse_cleanly(
    world: World, valid: bool, game: str, rpc: str, request_key: str | None, public: bool,
    request_id: str, data: st.DataObject,
) -> None:  # fmt: skip
    """The game services trust their internal metadata (only the gateway can reach them), but
    whatever it holds (a seated player, a stranger, nothing, junk) and whatever the request,
    the answer is a proper status, and only an accepted move of a seated player changes its
    game (or an accepted CreateGame adds one). A well-formed Play is one of the caller's legal
    moves, so that accepted moves are fuzzed too."""
    named = {"OWNER": world.direct_players[0], "SECOND": world.direct_players[1]}
    player = data.draw(either(valid, st.sampled_from(sorted(named)), junk_players), "player")
    caller = named.get(player, player)
    metadata: list[tuple[str, str]] = []
    if player != "MISSING":
        metadata.append((PLAYER_METADATA, caller))
    if request_key is not None:
        metadata.append((REQUEST_METADATA, request_key))
    game_id = data.draw(either(valid, st.just("REAL"), game_ids), "game_id")
    seat = data.draw(either(valid, st.none(), seats), "seat")
    expected = data.draw(either(valid, st.none(), versions), "expected")
    move = data.draw(either(valid, st.just("LEGAL"), moves), "move")

    async def one() -> None:
        stub = world.direct_stub(game)
        target = world.direct_games[game] if game_id == "REAL" else game_id
        fields: dict[str, Any] = {"game_id": target}
        if seat is not None:
            fields["seat"] = seat
        request: Any
        if rpc == "CreateGame":
            players = data.draw(player_lists(valid, game, list(world.direct_players)))
            request = api(game).pb2.CreateGameRequest(players=players)
        elif rpc == "Play":
            if expected is not None:
                fields["expected_version"] = expected
            text = await _legal_move(stub, target, metadata, data) if move == "LEGAL" else move
            request = common_pb2.PlayRequest(move=text, request_id=request_id, **fields)
        elif rpc == "Resign":
            request = common_pb2.ResignRequest(request_id=request_id, **fields)
        elif rpc == "GetView":
            request = common_pb2.GetViewRequest(public=public, **fields)
        elif rpc == "LegalMoves":
            request = common_pb2.LegalMovesRequest(**fields)
        elif rpc == "StopGame":  # no game here is one of bots made for a player: refused
            request = common_pb2.StopGameRequest(game_id=target)
        else:
            request = common_pb2.WatchRequest(from_version=expected or 0, public=public, **fields)
        before = await world.games()
        timeout = 1 if rpc == "Watch" else 10
        code = await _answer(getattr(stub, rpc)(request, metadata=tuple(metadata), timeout=timeout))
        world.counts["direct", rpc, code.name] += 1
        changed = _changed(before, await world.games())
        if code != grpc.StatusCode.OK or rpc not in ("Play", "Resign", "CreateGame"):
            assert not changed, f"{rpc} answered {code} but changed {changed}"
        elif rpc == "CreateGame":
            assert await world.seats_of(_new_game_id(changed)) == list(request.players)
            if player != "MISSING" and caller:  # a player's call: only tables of their own
                assert set(request.players) == {caller}, "a player seated someone else"
        else:
            assert changed <= {keys.game_state(target).encode()}  # empty: a replayed request
            assert caller in await world.seats_of(target)
            now = await stub.GetView(common_pb2.GetViewRequest(game_id=target, public=True))
            if now.status.finished:  # keep fuzzing a game that is still going
                await world.new_direct_game(game)

    world.run(one())


async def _legal_move(
    stub: Any, game_id: str, metadata: list[tuple[str, str]], data: st.DataObject
) -> str:
    """One of the caller's legal moves, or "LEGAL" (not a move) when it has none."""
    try:
        legal = await stub.LegalMoves(
            common_pb2.LegalMovesRequest(game_id=game_id),
            metadata=tuple(metadata),
            timeout=patience(10),
        )
    except grpc.aio.AioRpcError:
        return "LEGAL"
    return data.draw(st.sampled_from(list(legal.moves))) if legal.moves else "LEGAL"


BAD_BYTES = [b"\xff\xff\xff", b"\x0a\x05abc", b"\x12\x80", b"\x0a\xff\xff\xff\xff\x0f"]


@pytest.mark.parametrize("body", BAD_BYTES, ids=lambda b: b.hex())
def test_unparsable_requests_get_invalid_argument(world: World, body: bytes) -> None:
    """Bytes that are not a protobuf message, at the gateway's own services, at a game method
    through the gateway and at a game service directly."""
    player = world.sessions["player"]

    async def one() -> None:
        assert world.platform is not None
        direct = world.platform.internal_channel(world.platform.replica_target(0, "solo"))
        calls = [
            (player.channel, "/tabletop.lobby.v1.AuthService/Login"),
            (player.channel, "/tabletop.lobby.v1.LobbyService/FindMatch"),
            (player.channel, "/tabletop.solo.v1.SoloService/Play"),
            (direct, "/tabletop.solo.v1.SoloService/Play"),
        ]
        try:
            for channel, path in calls:
                call = channel.unary_unary(path)(
                    body, metadata=player.metadata, timeout=patience(5)
                )
                assert await _answer(call) == grpc.StatusCode.INVALID_ARGUMENT, path
        finally:
            await direct.close()

    world.run(one())


@pytest.mark.parametrize("rpc", ["Login", "BotLogin"])
def test_a_name_or_bot_id_with_a_trailing_newline_is_refused(world: World, rpc: str) -> None:
    """Names are documented as 1 to 32 letters, digits, spaces, '-' or '_'; bot ids as
    bot-<level>-<hex>. Nothing else, not even a line break at the end."""
    auth = lobby_pb2_grpc.AuthServiceStub(world.sessions["player"].channel)
    bot_id = new_bot_id("random") + "\n"

    async def one() -> grpc.StatusCode:
        if rpc == "Login":
            return await _answer(auth.Login(lobby_pb2.LoginRequest(name="alice\n")))
        request = lobby_pb2.BotLoginRequest(player_id=bot_id, key=TEST_BOT_KEY)
        return await _answer(auth.BotLogin(request))

    assert world.run(one()) == grpc.StatusCode.INVALID_ARGUMENT


LOBBY_UNARY = sorted(
    m.name
    for m in lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"].methods
    if not m.client_streaming and not m.server_streaming
)


def _fill(message: Any, data: st.DataObject, depth: int = 0) -> None:
    """Every field of `message` drawn from valid and malformed values alike (by its type)."""
    descriptor = message.DESCRIPTOR
    for field in descriptor.fields:
        label = f"{descriptor.name}.{field.name}"
        if field.type == field.TYPE_MESSAGE:
            if depth < 2 and data.draw(st.booleans(), label):
                _fill(getattr(message, field.name).add() if _repeated(field)
                      else getattr(message, field.name), data, depth + 1)  # fmt: skip
            continue
        strategy: st.SearchStrategy[Any]
        if field.type == field.TYPE_STRING:
            strategy = st.one_of(junk_games, texts, st.sampled_from(["me", "today", "2026-12"]))
        elif field.type == field.TYPE_BYTES:
            strategy = st.binary(max_size=40)
        elif field.type == field.TYPE_BOOL:
            strategy = st.booleans()
        elif field.type == field.TYPE_ENUM:
            strategy = st.integers(min_value=-2, max_value=12)
        elif field.type in (field.TYPE_UINT32, field.TYPE_UINT64):
            strategy = st.integers(min_value=0, max_value=2**32 - 1)
        elif field.type in (field.TYPE_DOUBLE, field.TYPE_FLOAT):
            strategy = st.floats(allow_nan=False, width=32)
        else:
            strategy = int32s
        if _repeated(field):
            getattr(message, field.name).extend(data.draw(st.lists(strategy, max_size=3), label))
        else:
            setattr(message, field.name, data.draw(strategy, label))


def _repeated(field: Any) -> bool:
    return bool(field.is_repeated)


@FUZZ
@given(rpc=st.sampled_from(LOBBY_UNARY), data=st.data())
def test_every_lobby_method_refuses_bad_input_cleanly(
    world: World, rpc: str, data: st.DataObject
) -> None:
    """Every unary LobbyService method, whatever it is sent (every field drawn by its type, from
    valid and malformed values alike), answers or refuses with a reason and a message: never
    UNKNOWN or INTERNAL. A method added later is fuzzed too."""
    player = world.sessions["player"]
    method = lobby_pb2.DESCRIPTOR.services_by_name["LobbyService"].methods_by_name[rpc]
    request = getattr(lobby_pb2, method.input_type.name)()
    _fill(request, data)
    lobby = lobby_pb2_grpc.LobbyServiceStub(player.channel)

    async def one() -> None:
        code = await _answer(getattr(lobby, rpc)(request, metadata=player.metadata, timeout=10))
        world.counts["lobby", rpc, code.name] += 1

    world.run(one())
