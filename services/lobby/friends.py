"""Playing with friends: challenges to named players, private tables joined with an invite code,
open tables anyone may join, and rematches (docs/api.md, "Playing with friends").

Each is a table that waits for its players (services/lobby/tables.py). The player who takes its
last seat has the lobby make the game, as a matchmaker makes one: on the game's service, through
the platform's channel, rated when the table is (every player at a rated table is an account:
guests may not make or join one). Everyone at the table learns the game's id and their seat from
WatchChallenges (and ListChallenges).

Guests may be challenged, accept casual challenges, make and join invites and open tables (one
of each waiting at once) and offer rematches; they may not challenge players by id or name (a
challenge lands on someone else's screen: an account answers for it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import random
import secrets
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Any

import grpc

import games
from games.clock import TimeControl
from runtime import game_log, keys
from runtime.config import env_float, env_int
from runtime.fanout import StreamHub, TooSlow
from services.lobby.following import Notifications
from services.lobby.servicer import (
    CREATE_TIMEOUT_SECONDS,
    Lobby,
    _check_rated,
    _lobby_reachable,
    _player,
)
from services.lobby.tables import Table, TableStore, now_ms
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2
from wire.api import api
from wire.clock import time_control_message
from wire.errors import ApiError
from wire.metadata import PRIVATE_METADATA, RATED_METADATA, Caller, rated_value
from wire.options import game_options
from wire.players import PLAYER_ID_PATTERN, is_bot

log = logging.getLogger("tabletop.lobby")

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
"""Invite codes: no 0/O or 1/I to misread."""
CODE_LENGTH = 10
"""50 bits: guessing a live code takes about 10^15 tries against the gateway's rate limits."""

_KINDS = {
    "challenge": lobby_pb2.CHALLENGE_KIND_CHALLENGE,
    "invite": lobby_pb2.CHALLENGE_KIND_INVITE,
    "open": lobby_pb2.CHALLENGE_KIND_OPEN_TABLE,
    "rematch": lobby_pb2.CHALLENGE_KIND_REMATCH,
}
_STATES = {
    "open": lobby_pb2.CHALLENGE_STATE_OPEN,
    "starting": lobby_pb2.CHALLENGE_STATE_OPEN,  # full: its game is being made
    "started": lobby_pb2.CHALLENGE_STATE_STARTED,
    "declined": lobby_pb2.CHALLENGE_STATE_DECLINED,
    "cancelled": lobby_pb2.CHALLENGE_STATE_CANCELLED,
    "expired": lobby_pb2.CHALLENGE_STATE_EXPIRED,
}
WAITING = ("open", "starting")


@dataclass(frozen=True, kw_only=True)
class FriendsSettings:
    """How long each kind of table waits, and how many a player may have waiting at once."""

    challenge_seconds: float = 300.0
    invite_seconds: float = 1800.0
    table_seconds: float = 1800.0
    keep_seconds: float = 3600.0
    """How long an ended table is still listed (and its invite code explained)."""
    sweep_seconds: float = 1.0
    """How often the lobby expires the tables that are due."""
    challenges: int = 5
    """Challenges and rematch offers a player has made that wait for an answer."""
    challenges_per_player: int = 3
    """Of those, how many may wait for one player's answer."""
    from_strangers: int = 20
    """Challenges and rematch offers that may wait for a player's answer from players they do
    not know (keys.known_players): beyond, strangers' new ones are refused, so that strangers
    never bury the challenges of players they know (those are listed first anyway)."""
    invites: int = 3
    open_tables: int = 2
    guest_challenges: int = 1
    """A guest's rematch offers (a guest may not challenge by id or name)."""
    guest_invites: int = 1
    guest_open_tables: int = 1

    @staticmethod
    def from_env() -> FriendsSettings:
        return FriendsSettings(
            challenge_seconds=env_float("CHALLENGE_SECONDS", 300.0),
            invite_seconds=env_float("INVITE_SECONDS", 1800.0),
            table_seconds=env_float("OPEN_TABLE_SECONDS", 1800.0),
            challenges=env_int("MAX_OPEN_CHALLENGES", 5),
            challenges_per_player=env_int("MAX_CHALLENGES_TO_PLAYER", 3),
            from_strangers=env_int("MAX_CHALLENGES_FROM_STRANGERS", 20),
            invites=env_int("MAX_INVITES", 3),
            open_tables=env_int("MAX_OPEN_TABLES", 2),
            guest_invites=env_int("GUEST_MAX_INVITES", 1),
            guest_open_tables=env_int("GUEST_MAX_OPEN_TABLES", 1),
        )

    def seconds(self, kind: str) -> float:
        return {"invite": self.invite_seconds, "open": self.table_seconds}.get(
            kind, self.challenge_seconds
        )

    def bound(self, kind: str, guest: bool) -> tuple[str, int]:
        """The name of the bound on waiting tables of `kind`, and its value for the player."""
        if kind == "invite":
            return "invites", self.guest_invites if guest else self.invites
        if kind == "open":
            return "open_tables", self.guest_open_tables if guest else self.open_tables
        return "open_challenges", self.guest_challenges if guest else self.challenges


def _code(text: str) -> str:
    """An invite code as typed (any case, spaces or dashes), as kept."""
    return "".join(c for c in text.upper() if c not in " -")


def _table_id(text: str) -> str:
    return text if text.isalnum() and len(text) <= 40 else ""


def _closed(state: str) -> ApiError:
    """The refusal of a seat at a table that no longer waits, by the state it is in."""
    if state in ("starting", "started"):
        return ApiError(
            "TABLE_FULL", "every seat of this table is taken: its game is made", state=state
        )
    return ApiError(
        "CHALLENGE_CLOSED",
        f"this no longer waits for players: it was {state}",
        state=state,
    )


class Friends:
    """The calls of playing with friends, beside the lobby's (`Lobby`: its checks, its game
    services and its fan-out hub)."""

    def __init__(
        self,
        lobby: Lobby,
        store: TableStore,
        hub: StreamHub,
        settings: FriendsSettings,
        notifications: Notifications,
    ) -> None:
        self.lobby = lobby
        self.store = store
        self.hub = hub
        self.settings = settings
        self.notifications = notifications
        """Tells the players of what concerns them (services/lobby/following.py)."""

    def handlers(self) -> dict[str, Any]:
        return {
            "ChallengePlayer": self.challenge_player,
            "AnswerChallenge": self.answer_challenge,
            "CancelChallenge": self.cancel_challenge,
            "ListChallenges": self.list_challenges,
            "SetChallengeSetting": self.set_challenge_setting,
            "GetChallengeSetting": self.get_challenge_setting,
            "CreateInvite": self.create_invite,
            "JoinInvite": self.join_invite,
            "OpenTable": self.open_table,
            "ListOpenTables": self.list_open_tables,
            "JoinTable": self.join_table,
            "OfferRematch": self.offer_rematch,
        }

    # -- the answers -----------------------------------------------------------------------

    async def messages(self, tables: Sequence[Table], caller: Caller) -> list[lobby_pb2.Challenge]:
        everyone = list(dict.fromkeys(p for table in tables for p in table.players))
        with _lobby_reachable():
            called = await self.lobby.names.current(everyone, caller)
        names = dict(zip(everyone, called, strict=True))
        return [self._message(table, caller, names) for table in tables]

    def _message(self, table: Table, caller: Caller, names: dict[str, str]) -> lobby_pb2.Challenge:
        message = lobby_pb2.Challenge(
            challenge_id=table.table_id,
            kind=_KINDS[table.kind],
            state=_STATES[table.state],
            game=table.game,
            time_control=time_control_message(TimeControl.from_json(table.time_control)),
            rated=table.rated,
            seats=table.seats,
            players=[
                lobby_pb2.Participant(player_id=p, name=names[p], joined=p in table.joined)
                for p in table.players
            ],
            code=table.code if caller.player == table.host else "",
            game_id=table.game_id,
            seat=table.seat_of.get(caller.player),
            rematch_of=table.rematch_of,
        )
        getattr(message.options, table.game).MergeFromString(table.options)
        message.created_at.FromMilliseconds(table.created_ms)
        message.expires_at.FromMilliseconds(table.expires_ms)
        return message

    async def _answer(self, table_id: str, caller: Caller) -> lobby_pb2.Challenge:
        with _lobby_reachable():
            table = await self.store.get(table_id)
        if table is None:
            raise ApiError("CHALLENGE_NOT_FOUND", "it has ended and is forgotten")
        (message,) = await self.messages([table], caller)
        return message

    async def _table(self, table_id: str, what: str) -> Table:
        with _lobby_reachable():
            table = await self.store.get(_table_id(table_id)) if _table_id(table_id) else None
        if table is None:
            raise ApiError("CHALLENGE_NOT_FOUND", f"there is no {what} {table_id[:40]!r}")
        return table

    # -- making tables ---------------------------------------------------------------------

    async def _open(
        self, kind: str, request: Any, caller: Caller, *, seats: int,
        invited: Sequence[str] = (), seating: Sequence[str] = (), rematch_of: str = "",
    ) -> lobby_pb2.Challenge:  # fmt: skip
        game, create, seats, _, tc = self.lobby.table_request(request, caller, seats, waits=True)
        player = await self.lobby._seen(caller)
        if kind in ("challenge", "rematch") and seats != 1 + len(invited):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"a {game} game of these options has {seats} seats: a challenge is for "
                f"{1 + len(invited)}",
            )
        await self.lobby._check_load(caller, [player])
        limit, bound = self.settings.bound(kind, caller.guest)
        expires = now_ms() + int(self.settings.seconds(kind) * 1000)
        with _lobby_reachable():
            strangers = await self.store.strangers(player, invited)
        outcome, held, table_id = "CODE", 0, ""
        while outcome == "CODE":  # an invite code already in use: draw another
            table_id = secrets.token_hex(10)
            code = "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))
            with _lobby_reachable():
                outcome, held = await self.store.open(
                    table_id, kind=kind, game=game,
                    options=create.options.SerializeToString(deterministic=True), seats=seats,
                    time_control=tc.to_json(), rated=request.rated, host=player, invited=invited,
                    seating=seating, expires_ms=expires, bound=bound,
                    code=code if kind == "invite" else "", rematch_of=rematch_of,
                    strangers=strangers, per_maker=self.settings.challenges_per_player,
                    from_strangers=self.settings.from_strangers,
                )  # fmt: skip
        if outcome == "LIMIT":
            what = {"open_challenges": "challenges", "invites": "invites"}.get(limit, "tables")
            raise ApiError(
                "LIMIT_REACHED",
                f"you already have {held} {what} waiting: at most {bound} at once; cancel one "
                "or let it end first",
                limit=limit,
                max=str(bound),
            )
        if outcome == "MAKER":
            most = self.settings.challenges_per_player
            raise ApiError(
                "LIMIT_REACHED",
                f"you already have {most} challenges waiting for {invited[held]}'s answer: at "
                "most that many to one player; cancel one or let it end first",
                limit="challenges_to_player",
                max=str(most),
                player_id=invited[held],
            )
        if outcome == "STRANGERS":
            most = self.settings.from_strangers
            raise ApiError(
                "LIMIT_REACHED",
                f"{invited[held]} has {most} challenges waiting from players they have not "
                "played with, as many as one may; try again later, or give them an invite "
                "code (CreateInvite)",
                limit="challenges_from_strangers",
                max=str(most),
                player_id=invited[held],
            )
        if invited:  # the maker chose them: from now on they know them
            with _lobby_reachable():
                await self.store.met(player, invited)
            name = caller.name or player
            offered = "a rematch of" if kind == "rematch" else "a game of"
            await self.notifications.send(
                invited, "rematch_offered" if kind == "rematch" else "challenge_received",
                player_id=player, name=name, challenge_id=table_id, game=game,
                game_id=rematch_of, message=f"{name} offers you {offered} {game}",
            )  # fmt: skip
        return await self._answer(table_id, caller)

    async def _target(self, request: lobby_pb2.ChallengePlayerRequest) -> str:
        if bool(request.player_id) == bool(request.username):
            raise ApiError("INVALID_ARGUMENT", "name the player: player_id or username, not both")
        if request.player_id:
            if not PLAYER_ID_PATTERN.fullmatch(request.player_id):
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"not a player id (1 to 64 printable characters): {request.player_id[:40]!r}",
                )
            return request.player_id
        return await self.lobby.names.account(request.username)

    async def challenge_player(
        self, request: lobby_pb2.ChallengePlayerRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        player = _player(caller)
        if caller.guest:
            raise ApiError(
                "NOT_PERMITTED",
                "a guest may not challenge players: register (AuthService.Register) first; "
                "guests may make and join invites and open tables",
            )
        target = await self._target(request)
        if target == player or is_bot(target):
            raise ApiError(
                "INVALID_ARGUMENT",
                "challenge another person (PlayAgainstBots plays the platform's bots)",
            )
        with _lobby_reachable():
            refuses = await self.store.accepts_from(target) == "nobody"
        if refuses:
            raise ApiError("CHALLENGES_REFUSED", f"{target} takes no challenges", player_id=target)
        chosen = request.options.WhichOneof("game")
        given = getattr(request.options, chosen) if chosen else None
        counted = given is not None and "players" in given.DESCRIPTOR.fields_by_name
        seats = 0 if counted and given is not None and given.HasField("players") else 2
        # (a seat count given is checked: a challenge is a game of two)
        return await self._open("challenge", request, caller, seats=seats, invited=[target])

    async def create_invite(
        self, request: lobby_pb2.CreateInviteRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        return await self._open("invite", request, caller, seats=request.seats)

    async def open_table(
        self, request: lobby_pb2.OpenTableRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        return await self._open("open", request, caller, seats=request.seats)

    async def offer_rematch(
        self, request: lobby_pb2.OfferRematchRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        player = _player(caller)
        game_id = request.game_id
        known = keys.GAME_ID_PATTERN.fullmatch(game_id) and keys.kind_of(game_id) in games.names()
        if not known:
            raise ApiError("INVALID_ARGUMENT", f"not a game id: {game_id[:40]!r}")
        with _lobby_reachable():
            ((meta, last),) = await game_log.newest(self.lobby.games.redis, [game_id])
        if meta is None or last is None:
            raise ApiError("GAME_NOT_FOUND", f"no game {game_id}")
        seats = meta.seats
        if player not in seats:
            raise ApiError("NOT_YOUR_GAME", f"you did not sit at game {game_id}")
        if not last.status.finished:
            raise ApiError("INVALID_ARGUMENT", f"game {game_id} is not over yet")
        if any(is_bot(p) for p in seats) or len(set(seats)) != len(seats):
            raise ApiError(
                "INVALID_ARGUMENT",
                "a rematch is for a game between people, each at one seat (play bots again "
                "with PlayAgainstBots)",
            )
        game = keys.kind_of(game_id)
        options = dict(meta.options or {})
        if meta.jump_in_window_ms is not None:
            options["jump_in_window_ms"] = meta.jump_in_window_ms
        try:
            again = lobby_pb2.CreateInviteRequest(
                game=game, options=game_options(game, options), rated=meta.rated
            )
        except ValueError as error:
            raise ApiError("INVALID_OPTIONS", str(error)) from None
        if meta.time_control is not None:
            again.time_control.CopyFrom(time_control_message(meta.clock))
        else:  # untimed
            again.time_control.CopyFrom(common_pb2.TimeControl())
        others = [p for p in seats if p != player]
        with _lobby_reachable():
            for other in others:
                if await self.store.accepts_from(other) == "nobody":
                    raise ApiError(
                        "CHALLENGES_REFUSED", f"{other} takes no challenges", player_id=other
                    )
        return await self._open(
            "rematch", again, caller, seats=len(seats), invited=others,
            seating=[*seats[1:], seats[0]], rematch_of=game_id,
        )  # fmt: skip

    # -- taking seats ----------------------------------------------------------------------

    async def _join(self, table: Table, caller: Caller) -> lobby_pb2.Challenge:
        _check_rated(table.rated, caller)
        player = await self.lobby._seen(caller)
        await self.lobby._check_load(caller, [player])
        with _lobby_reachable():
            outcome, state, _ = await self.store.change(table.table_id, "join", player)
        if outcome == "GONE":
            raise ApiError("CHALLENGE_NOT_FOUND", "it has ended and is forgotten")
        if outcome == "STATE":
            raise _closed(state)
        if outcome == "FULL":
            raise _closed("starting")
        if outcome == "OK" and player in table.invited:  # who accepts a challenge knows its maker
            with _lobby_reachable():
                await self.store.met(player, [table.host])
            await self._tell_host(table, caller, "accepted")
        if state == "starting" and outcome == "OK":
            await self._start(table.table_id, player)
        return await self._answer(table.table_id, caller)

    async def _start(self, table_id: str, last: str) -> None:
        """Make the game of a full table (`last` took its last seat), and seat everyone."""
        with _lobby_reachable():
            table = await self.store.get(table_id)
        assert table is not None
        players = table.seating or random.sample(table.joined, len(table.joined))
        game_api = api(table.game)
        create = game_api.pb2.CreateGameRequest(
            options=game_api.pb2.Options.FromString(table.options),
            players=players,
            time_control=time_control_message(TimeControl.from_json(table.time_control)),
        )
        # A rated table seats accounts only (guests may neither make nor join one).
        rated = [(RATED_METADATA, rated_value(list(range(len(players)))))] if table.rated else []
        if table.kind == "invite":  # a private table: not listed to watch, nor in others' histories
            rated.append((PRIVATE_METADATA, "1"))
        replicas = self.lobby.channels.get(table.game)
        try:
            if replicas is None:
                raise ApiError("UNAVAILABLE", f"the lobby has no {table.game} service")
            with replicas.using() as channel:
                created = await game_api.stub(channel).CreateGame(
                    create, timeout=CREATE_TIMEOUT_SECONDS, metadata=rated
                )
        except (grpc.aio.AioRpcError, ApiError) as error:
            with _lobby_reachable():
                await self.store.change(table_id, "unjoin", last)
            if isinstance(error, ApiError):
                raise
            raise ApiError.of_call(error) from None
        game_id = created.status.game_id
        seat_of = json.dumps({p: players.index(p) for p in players})
        with _lobby_reachable():
            outcome, state, _ = await self.store.change(table_id, "start", last, game_id, seat_of)
        if outcome != "OK":  # expired while the game was made: it is never played, and aborts
            log.info("a table ended first; its game is dropped", extra={"game_id": game_id})
            raise _closed(state)
        log.info("table started", extra={"game_id": game_id, "table": table_id})
        if table.kind != "open":  # people who chose to play together (not strangers at a table)
            with _lobby_reachable():
                for player in players:
                    await self.store.met(player, players)

    async def answer_challenge(
        self, request: lobby_pb2.AnswerChallengeRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        player = _player(caller)
        table = await self._table(request.challenge_id, "challenge")
        if player not in table.invited:
            raise ApiError("CHALLENGE_NOT_FOUND", f"no challenge {request.challenge_id} to you")
        if request.accept:
            return await self._join(table, caller)
        if player in table.joined:
            raise ApiError("INVALID_ARGUMENT", "you accepted it already")
        return await self._close(table, "declined", caller)

    async def _close(self, table: Table, state: str, caller: Caller) -> lobby_pb2.Challenge:
        with _lobby_reachable():
            outcome, now, _ = await self.store.change(table.table_id, "close", caller.player, state)
        if outcome == "STATE" and now != state:
            raise _closed(now)
        if outcome == "OK" and state == "declined":
            await self._tell_host(table, caller, "declined")
        return await self._answer(table.table_id, caller)

    async def _tell_host(self, table: Table, caller: Caller, answer: str) -> None:
        """Tell the maker of a challenge (or rematch offer) that `caller` `answer`ed it."""
        name = caller.name or caller.player
        await self.notifications.send(
            [table.host], f"challenge_{answer}", player_id=caller.player, name=name,
            challenge_id=table.table_id, game=table.game,
            message=f"{name} {answer} your challenge to a game of {table.game}",
        )  # fmt: skip

    async def cancel_challenge(
        self, request: lobby_pb2.CancelChallengeRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        player = _player(caller)
        table = await self._table(request.challenge_id, "challenge")
        if player != table.host:
            raise ApiError(
                "CHALLENGE_NOT_FOUND", f"you made no challenge, invite or table {table.table_id}"
            )
        return await self._close(table, "cancelled", caller)

    async def join_invite(
        self, request: lobby_pb2.JoinInviteRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        _player(caller)
        code = _code(request.code)
        with _lobby_reachable():
            found = await self.store.by_code(code) if code.isalnum() and len(code) <= 20 else None
            table = await self.store.get(found) if found else None
        if table is None:
            raise ApiError(
                "CHALLENGE_NOT_FOUND",
                f"no invite has the code {request.code[:20]!r} (a code is forgotten an hour "
                "after its table ended)",
            )
        return await self._join(table, caller)

    async def join_table(
        self, request: lobby_pb2.JoinTableRequest, caller: Caller
    ) -> lobby_pb2.Challenge:
        _player(caller)
        table = await self._table(request.challenge_id, "open table")
        if table.kind != "open":
            raise ApiError("CHALLENGE_NOT_FOUND", f"there is no open table {table.table_id}")
        return await self._join(table, caller)

    # -- reading ---------------------------------------------------------------------------

    async def list_challenges(
        self, request: lobby_pb2.ListChallengesRequest, caller: Caller
    ) -> lobby_pb2.ListChallengesResponse:
        player = _player(caller)
        with _lobby_reachable():
            known, strangers = await self.store.mine(player)
        tables = known + strangers  # the challenges of players they know first
        if request.open_only:
            tables = [t for t in tables if t.state in WAITING]
        return lobby_pb2.ListChallengesResponse(challenges=await self.messages(tables, caller))

    async def list_open_tables(
        self, request: lobby_pb2.ListOpenTablesRequest, caller: Caller
    ) -> lobby_pb2.ListOpenTablesResponse:
        _player(caller)
        if request.game and request.game not in games.names():
            raise ApiError(
                "INVALID_ARGUMENT",
                f"unknown game {request.game[:40]!r}; games are: {', '.join(games.names())}",
            )
        limit = request.limit or 50
        if not 1 <= limit <= 100:
            raise ApiError("INVALID_ARGUMENT", f"limit is 1 to 100; got {limit}")
        tables: list[Table] = []
        with _lobby_reachable():
            for game in [request.game] if request.game else games.names():
                tables += await self.store.listed(game, limit)
        tables = sorted((t for t in tables if t.state == "open"), key=lambda t: t.created_ms)
        return lobby_pb2.ListOpenTablesResponse(tables=await self.messages(tables[:limit], caller))

    async def set_challenge_setting(
        self, request: lobby_pb2.SetChallengeSettingRequest, caller: Caller
    ) -> lobby_pb2.ChallengeSetting:
        player = _player(caller)
        who = {
            lobby_pb2.ACCEPT_FROM_UNSPECIFIED: "everyone",
            lobby_pb2.ACCEPT_FROM_EVERYONE: "everyone",
            lobby_pb2.ACCEPT_FROM_NOBODY: "nobody",
        }.get(request.accept_from)
        if who is None:
            raise ApiError("INVALID_ARGUMENT", "accept_from is ACCEPT_FROM_EVERYONE or _NOBODY")
        with _lobby_reachable():
            await self.store.set_accepts_from(player, who)
        return await self.get_challenge_setting(lobby_pb2.GetChallengeSettingRequest(), caller)

    async def get_challenge_setting(
        self, request: lobby_pb2.GetChallengeSettingRequest, caller: Caller
    ) -> lobby_pb2.ChallengeSetting:
        player = _player(caller)
        with _lobby_reachable():
            who = await self.store.accepts_from(player)
        return lobby_pb2.ChallengeSetting(
            accept_from=lobby_pb2.ACCEPT_FROM_NOBODY
            if who == "nobody"
            else lobby_pb2.ACCEPT_FROM_EVERYONE
        )

    async def watch_challenges(
        self, request: lobby_pb2.WatchChallengesRequest, caller: Caller
    ) -> AsyncIterator[lobby_pb2.Challenge]:
        player = _player(caller)
        with _lobby_reachable():
            after = await self.store.last_event(player)
            known, strangers = await self.store.mine(player)
        return self._follow(player, caller, known[::-1] + strangers[::-1], after)

    async def _follow(
        self, player: str, caller: Caller, tables: list[Table], after: str
    ) -> AsyncIterator[lobby_pb2.Challenge]:
        """The player's tables as they are, then every change to them after `after`, through the
        process's fan-out hub (no Redis connection of its own)."""
        for message in await self.messages(tables, caller):
            yield message
        watcher = self.hub.watch(keys.player_table_events(player), after)
        try:
            while True:
                try:
                    events = await watcher.next()
                except TooSlow:
                    raise ApiError(
                        "TOO_SLOW", "this stream was read too slowly and was ended; watch again"
                    ) from None
                ids = list(dict.fromkeys(fields[b"table"].decode() for _, fields in events))
                with _lobby_reachable():
                    changed = await self.store.get_many(ids)
                changed.sort(key=lambda table: player in table.strangers)  # theirs first
                for message in await self.messages(changed, caller):
                    yield message
        finally:
            watcher.close()

    # -- expiry ----------------------------------------------------------------------------

    async def sweep(self) -> int:
        """Expire the tables that are due; how many."""
        due = await self.store.due()
        expired = 0
        gone = []
        for table_id in due:
            outcome, _, table = await self.store.change(table_id, "close", "", "expired")
            expired += outcome == "OK"
            if outcome == "GONE":
                gone.append(table_id)
            if outcome == "OK" and table is not None and table.invited:
                await self._tell_expired(table)
        await self.store.forget_due(gone)
        return expired

    async def _tell_expired(self, table: Table) -> None:
        """Tell the maker of a challenge (or rematch offer) and its invited players that it
        expired unanswered."""
        names = dict(
            zip(table.players, await self.lobby.games.player_names(table.players, Caller()),
                strict=True)
        )  # fmt: skip
        host = table.host
        for player in table.players:
            other = host if player != host else table.invited[0]
            await self.notifications.send(
                [player], "challenge_expired", player_id=other, name=names[other],
                challenge_id=table.table_id, game=table.game,
                message=f"the challenge {'of' if player != host else 'to'} {names[other]} to a "
                f"game of {table.game} expired unanswered",
            )  # fmt: skip

    async def run_sweeps(self) -> None:
        """Every `sweep_seconds`, until cancelled (each replica of the lobby does it: a table
        expires once, whoever finds it first)."""
        while True:
            try:
                await self.sweep()
            except Exception as error:
                log.warning("cannot expire tables", extra={"error": str(error)})
            await asyncio.sleep(self.settings.sweep_seconds)
