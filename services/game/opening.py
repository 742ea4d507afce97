"""Opening a game (CreateGame): who may be seated, the options and time control, the deal of the
day, the player's limits, and the game's meta as it is stored."""

from __future__ import annotations

import logging
import random
import secrets
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from google.protobuf.message import Message

import games
from engines.contract import GameError
from games.clock import BadTimeControl, Table
from runtime.game_log import now_ms
from runtime.observability import GAMES_CREATED
from services.game.base import GameBase
from services.game.limits import check_options
from services.game.seats import utc_day
from services.game.state import Loaded, status_of
from services.game.store import StoredGame
from wire.clock import bot_pace, deal_of_the_day, jump_in_window, requested
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import PLAYER_ID_PATTERN, is_bot, level_of
from wire.records import GameMeta
from wire.status import status_message

log = logging.getLogger("tabletop.game")


def check_deal_of_the_day(
    players: Sequence[str], sponsor: str, caller: Caller, options: Mapping[str, Any]
) -> None:
    """Who may play the deal of the day: an account, in the only seat, with the default
    options (the same deal for everyone)."""
    if caller.guest or not sponsor:
        raise ApiError(
            "INVALID_ARGUMENT",
            "the deal of the day is for accounts: register (AuthService.Register) to play it",
        )
    if list(players) != [sponsor]:
        raise ApiError("INVALID_ARGUMENT", "the deal of the day is played by you, not by bots")
    if options:
        raise ApiError(
            "INVALID_OPTIONS",
            "the deal of the day is the same for everyone: set no other option "
            f"(got {', '.join(sorted(options))})",
        )


def check_players(players: Sequence[str], caller: str) -> None:
    """Who may be seated by whom. A player (a call through the gateway) may only create a
    table they hold entirely (hot seat): games with other people come from matchmaking, games
    with bots from PlayAgainstBots, so nobody is ever seated without asking, and nobody but
    the platform seats bots. The platform's own components (lobby, matchmaker: calls with no
    player) seat anyone; a bot seat must name a real bot level."""
    for player in players:
        if not PLAYER_ID_PATTERN.fullmatch(player):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"player id {player[:80]!r} is not valid; player ids are 1..64 "
                "printable ASCII characters without spaces",
            )
        if is_bot(player) and level_of(player) not in games.LEVELS:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"{player[:80]!r} is not a bot seat: bot ids are bot-<level>-<hex> with a level "
                f"among {', '.join(games.LEVELS)}",
            )
    if caller and any(player != caller for player in players):
        raise ApiError(
            "NOT_YOUR_SEAT",
            "a player may only create a table whose every seat is their own (hot seat); "
            "play others with LobbyService.FindMatch and bots with LobbyService.PlayAgainstBots",
        )


def new_game_id(game: str) -> str:
    return f"{game}-{secrets.token_hex(10)}"


class CreateGameRequest(Protocol):
    """A game's CreateGameRequest: each game's proto has its own (its options are the game's),
    with the players' ids and the table settings (read by wire/clock.py) in common."""

    @property
    def players(self) -> Sequence[str]: ...

    def HasField(self, field_name: str) -> bool: ...


class Opening(GameBase):
    """CreateGame."""

    async def create(self, request: CreateGameRequest, caller: Caller) -> Message:
        """CreateGame: a new game with the request's options and players."""
        players = list(request.players)
        check_players(players, caller.player)
        declared = games.get(self.game)
        tc = requested(request, declared.time_control)
        try:
            options = self.adapter.options(request)
            check_options(self.game, {**self.rules.default_options(), **options}, players)
            tc.check(self.game, declared.timeouts, games.LEVELS)
            window = jump_in_window(request, declared.jump_in_window_ms)
            pace = bot_pace(request)
            seed = random.SystemRandom().getrandbits(63)
            state = self.rules.new_game(seed, options)
        except GameError as error:
            raise ApiError.from_game_error(error) from None
        except BadTimeControl as error:
            raise ApiError("INVALID_OPTIONS", str(error)) from None
        if len(players) != state.num_seats:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"this {self.game} game has {state.num_seats} seats; got {len(players)} player ids",
            )
        sponsor = caller.player or caller.sponsor
        game_id = new_game_id(self.game)
        day = None
        if deal_of_the_day(request):
            day = utc_day(now_ms())
            check_deal_of_the_day(players, sponsor, caller, options)
            seed, held = await self.players.deal_of_the_day(self.game, day, sponsor, game_id)
            if held is not None:
                raise ApiError(
                    "ALREADY_PLAYED",
                    f"you have played the deal of {day} already (game {held}); a new deal comes "
                    "at midnight UTC",
                    game_id=held,
                )
            state = self.rules.new_game(seed, options)
        if sponsor:  # a table of their own, or bots they watch: it counts like any game they play
            try:
                await self.players.reserve(sponsor, game_id, players, self.limits.of(caller.guest))
            except ApiError:
                if day is not None:
                    await self.players.forget_try(self.game, day, sponsor)
                raise
        names = await self.players.player_names(players, caller)
        # The seed stays in Redis (it decides hidden cards: never sent to a client); with the
        # move log it rebuilds every position, which audits use (bench/soak.py).
        rated = caller.rated is not None and not caller.player  # only the platform makes them
        accounts = ratings = None
        if caller.rated is not None and rated:
            accounts = [
                seat for seat in caller.rated if seat < len(players) and not is_bot(players[seat])
            ]
            seated = GameMeta(self.game, players, accounts=accounts)
            ratings = await self.players.seat_ratings(self.game, seated)
        # an account's game played alone: its score table counts it
        scored = state.num_seats == 1 and players == [sponsor] and not caller.guest
        if scored:
            accounts = [0]
        meta = GameMeta(
            game=self.game,
            seats=players,
            names=names,
            options=options,
            seed=seed,
            edition=state.edition,
            sponsor=sponsor,
            rated=rated,
            accounts=accounts,
            ratings=ratings,
            scored=scored,
            day=day,
            private=caller.private and not caller.player,  # only the platform makes them
            # table settings, not rules: the engine never sees them (bot pace: how long its
            # bots let pass after each move)
            jump_in_window_ms=window if declared.out_of_turn else None,
            bot_pace_ms=pace or None,
            time_control=tc.to_json() if tc.kept else None,
        )
        now = now_ms()
        table = None
        if tc.kept:
            people = [not is_bot(player) for player in players]
            table = Table.new(tc, people, state.public_to_act(), now)
        status = status_of(state, table, tc)
        listing = self.store.listing(
            self.game,
            game_id,
            [*players, sponsor] if sponsor else players,
            levels=self.limits.capped_levels(players),
            sponsor=sponsor,
        )
        # a game anyone may watch: its people's followers are told
        watched = not meta.private and day is None
        opening = [event.to_json() for event in state.opening_events()]
        stored_table = None if table is None else table.to_json()
        written = await self.store.create(
            game_id,
            state.serialize(),
            meta,
            opening,
            status,
            table=stored_table,
            time_ms=now,
            listing=listing,
            announcement=self.store.announcement(game_id, players, names) if watched else None,
        )
        loaded = Loaded(StoredGame(game_id, 0, b"", meta, None, stored_table), state, table)
        if table is not None:  # an untimed game never has a deadline to index
            await self._index(loaded)
        await self._wake_bots(loaded)
        await self.store.confirm(written)
        self.hints.put(game_id, loaded)  # the first move needs no read
        GAMES_CREATED.labels(self.game).inc()
        log.info("game created", extra={"game_id": game_id, "seats": len(players)})
        return self.adapter.create_response(status=status_message(game_id, 0, meta, status))
