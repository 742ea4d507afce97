"""Playing a game: a move, a resignation, a stop or a pass on jumping in, judged on the game and
committed with a version check; a retried request (same request id) answered as the first time."""

from __future__ import annotations

import logging
from typing import TypeAlias

from google.protobuf.message import Message

import games
from engines.contract import GameError
from games.replay import PLATFORM_MOVES, STOP, Step
from runtime.game_log import now_ms
from runtime.observability import MOVES
from services.game.base import COMMIT_ATTEMPTS
from services.game.clocks import Clocks
from services.game.state import Loaded, Played
from tabletop.common.v1 import common_pb2
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import is_bot
from wire.status import status_message

log = logging.getLogger("tabletop.game")

MAX_MOVE_CHARS = 200
MAX_REQUEST_ID_CHARS = 64

MoveRequest: TypeAlias = common_pb2.PlayRequest | common_pb2.ResignRequest
"""A request that makes a version of the game for the caller's seat, with a request id."""


class Playing(Clocks):
    """LegalMoves, Play, Resign, StopGame and PassJumpIn."""

    async def legal_moves(
        self, request: common_pb2.LegalMovesRequest, caller: Caller
    ) -> common_pb2.LegalMovesResponse:
        """LegalMoves: the caller's seat's legal moves now."""
        loaded = await self._load(request.game_id)
        seat = self._seat(loaded, caller.player, request, spectator_ok=False)
        assert seat is not None
        return common_pb2.LegalMovesResponse(
            game_id=request.game_id,
            version=loaded.stored.version,
            seat=seat,
            moves=[] if loaded.finished else loaded.state.legal_moves(seat),
        )

    async def play(self, request: common_pb2.PlayRequest, caller: Caller) -> Message:
        """Play: one move of the caller's seat."""
        try:
            if not request.move:
                raise ApiError("MALFORMED_MOVE", "the move is empty; see LegalMoves")
            if len(request.move) > MAX_MOVE_CHARS:
                raise ApiError(
                    "MALFORMED_MOVE", f"the move is longer than {MAX_MOVE_CHARS} characters"
                )
            if request.move in PLATFORM_MOVES:
                raise ApiError(
                    "MALFORMED_MOVE",
                    f"{request.move!r} is what the platform records for a deadline, a stop or a "
                    "take-back (TakeSeat), not a move",
                )
            expected = request.expected_version if request.HasField("expected_version") else None
            if expected is not None and expected < 0:
                raise ApiError(
                    "INVALID_ARGUMENT",
                    f"expected_version is a version of the game (0 or more), not {expected}",
                )
            response = await self.act(request, caller, request.move, expected)
        except ApiError as error:
            MOVES.labels(self.game, error.reason).inc()
            raise
        self._accepted.inc()
        return response

    async def resign(self, request: common_pb2.ResignRequest, caller: Caller) -> Message:
        """Resign: the caller's seat gives up."""
        try:
            response = await self.act(request, caller, None, None)
        except ApiError as error:
            MOVES.labels(self.game, error.reason).inc()
            raise
        self._accepted.inc()
        return response

    async def stop(
        self, request: common_pb2.StopGameRequest, caller: Caller
    ) -> common_pb2.StopGameResponse:
        """StopGame: the player who asked for a game of bots (its sponsor) ends it, without a
        result. The stop is a version of the game like a move (move "stop_game"), written through
        the same versioned commit as a move or a timeout, and what follows a game's last
        version follows it too: watchers get it, the game leaves the live indexes, pending bot
        jobs find the game moved on. A game already over answers its final status (so a
        retried stop is harmless)."""
        loaded = await self._load(request.game_id)
        for _attempt in range(COMMIT_ATTEMPTS):
            stored = loaded.stored
            who = caller.player or caller.sponsor
            if not who or who != stored.meta.sponsor:
                raise ApiError(
                    "NOT_YOUR_GAME",
                    f"game {stored.game_id} was not made for you: only the player who asked for "
                    "a game of bots (LobbyService.PlayAgainstBots, watch_only) may stop it",
                )
            if any(not is_bot(player) for player in stored.meta.seats):
                raise ApiError(
                    "PEOPLE_SEATED",
                    f"a person holds a seat in game {stored.game_id}: it ends by its moves, a "
                    "resignation or its clock; StopGame stops only games played by bots",
                )
            if loaded.finished:
                return common_pb2.StopGameResponse(status=self._status(loaded))
            played = self._played(loaded, Step(-1, STOP, now_ms()))
            written = await self._write(loaded, played, "")
            if written.outcome == "OK":
                log.info(
                    "game stopped", extra={"game_id": stored.game_id, "version": written.version}
                )
                return common_pb2.StopGameResponse(
                    status=status_message(
                        stored.game_id, written.version, stored.meta, played.status
                    )
                )
            if written.current is None:
                raise ApiError("GAME_NOT_FOUND", f"no game with id {stored.game_id}")
            loaded = written.current  # a bot moved first: stop the game as it is now
        raise ApiError("UNAVAILABLE", "the game is too busy right now; retry")

    async def pass_jump_in(
        self, request: common_pb2.PassJumpInRequest, caller: Caller
    ) -> common_pb2.PassJumpInResponse:
        """PassJumpIn: the person at the caller's seat will not jump in at this version. Once
        every seat a person holds has passed at the version, the bots are woken again with no
        jump-in window (every bot seat, as after any move): they act at once. Only people's
        passes, which are public choices, end the window early; no card of anyone's does. Not
        a move: the game's version and log stay as they are."""
        if not games.get(self.game).out_of_turn:
            raise ApiError(
                "INVALID_ARGUMENT", f"nobody jumps in in {self.game}: there is nothing to pass on"
            )
        if request.version < 0:
            raise ApiError(
                "INVALID_ARGUMENT",
                f"version is a version of the game (0 or more), not {request.version}",
            )
        loaded = await self._load(request.game_id)
        game_id, version = loaded.stored.game_id, loaded.stored.version
        seat = self._seat(loaded, caller.player, request, spectator_ok=False)
        assert seat is not None
        holders = loaded.holders
        if is_bot(holders[seat]):
            raise ApiError(
                "NOT_PERMITTED",
                f"seat {seat} is a bot's: only a person passes on jumping in (a bot lets its "
                "chance go by not playing)",
            )
        if loaded.finished:
            raise ApiError(
                "GAME_OVER",
                f"game {game_id} is over (version {version}): there is nothing to pass on",
                version=str(version),
            )
        if request.version != version:
            raise await self._stale(game_id, version, request.version)
        current, passes, new = await self.store.pass_jump_in(game_id, version, seat)
        if current < 0:
            raise ApiError("GAME_NOT_FOUND", f"no game with id {game_id}")
        if current != version:  # a move came first
            raise await self._stale(game_id, current, request.version)
        people = [i for i, holder in enumerate(holders) if not is_bot(holder)]
        passed = [i for i in people if passes.get(i) == version]
        ended = len(passed) == len(people)
        if ended and new:  # this pass was the last one: the bots need wait no more
            await self._wake_bots(loaded, window_ms=0)
        return common_pb2.PassJumpInResponse(
            game_id=game_id, version=version, seat=seat, passed=passed, window_ended=ended
        )

    def _request_id(self, request: MoveRequest, caller: Caller) -> tuple[str, str]:
        """The request id as the caller gave it (or the gateway's), and as it is recorded:
        scoped to the player, so nobody can collide with another's."""
        if len(request.request_id) > MAX_REQUEST_ID_CHARS:
            raise ApiError(
                "INVALID_ARGUMENT", f"request_id is longer than {MAX_REQUEST_ID_CHARS} characters"
            )
        given = request.request_id or caller.request_id[:MAX_REQUEST_ID_CHARS]
        return given, f"{caller.player}:{given}" if given else ""

    async def act(
        self, request: MoveRequest, caller: Caller, move: str | None, expected: int | None
    ) -> Message:
        """Apply a move (or a resignation when `move` is None) with optimistic concurrency.

        The move is judged on the game at `expected` when given, else on the latest version the
        service has read. If another move is committed between that read and this write, the
        call fails with ABORTED (STALE_VERSION) and the current version: the first one wins. A
        resignation without `expected` is applied to the game as it is then (a player who
        resigns means it whatever a bot just played).
        In a timed game a move must reach Redis before the game's next deadline (by Redis's
        clock); one that comes later is refused and the timeout (or abort) applied instead.
        """
        given, request_id = self._request_id(request, caller)
        game_id: str = request.game_id
        hint = self.hints.get(game_id)
        if hint is not None and expected is not None and expected != hint.stored.version:
            hint = None
        loaded = hint
        for _attempt in range(COMMIT_ATTEMPTS):
            from_hint = loaded is not None and loaded is hint
            if loaded is None:
                loaded = await self._load(game_id, request_id)
            stored = loaded.stored
            if stored.request_version is not None:
                seat = self._retried_seat(loaded, caller, request)
                return await self._replayed(loaded, stored.request_version, seat, move, given)
            seat = self._seat(loaded, caller.player, request, spectator_ok=False)
            assert seat is not None
            if expected is not None and expected != stored.version:
                raise await self._stale(game_id, stored.version, expected)
            now = now_ms()
            due = loaded.due()
            if due is not None and now > due.at_ms and not from_hint:
                raise await self._too_late(loaded, due, seat)
            try:
                played = self._judge(loaded, seat, move, now)
            except GameError as error:
                if from_hint:  # the hint may be behind: judge the move on the stored game
                    loaded = hint = None
                    continue
                raise ApiError.from_game_error(error, version=str(stored.version)) from None
            commit = await self._write(
                loaded, played, request_id, not_after=None if due is None else due.at_ms
            )
            if commit.outcome == "OK":
                return self.adapter.play_response(
                    status=status_message(game_id, commit.version, stored.meta, played.status),
                    events=self._events(played.events, seat),
                )
            if commit.outcome == "DUPLICATE":
                return await self._replayed(loaded, commit.version, seat, move, given)
            if commit.outcome == "LATE":
                assert due is not None
                raise await self._too_late(loaded, due, seat)
            if commit.outcome == "NOT_FOUND" or commit.current is None:
                raise ApiError("GAME_NOT_FOUND", f"no game with id {game_id}")
            if move is not None and (expected is not None or not from_hint):
                # A move accepted between our read and our write: the first one wins (S11).
                raise await self._stale(game_id, commit.current.stored.version, stored.version)
            # Only this replica's hint was behind, or a resignation (which asked for no
            # version): judge it on the game as it is now.
            loaded, hint = commit.current, None
        raise ApiError("UNAVAILABLE", "the game is too busy right now; retry")

    def _judge(self, loaded: Loaded, seat: int, move: str | None, now: int) -> Played:
        """The seat's move (a resignation when None) applied to the game at `now`, not yet
        written. Raises a GameError for a move the rules refuse."""
        return self._played(loaded, Step(seat, "resign" if move is None else move, now))

    async def _stale(self, game_id: str, current: int, judged: int) -> ApiError:
        """ABORTED for a move judged on version `judged` while the game is at `current`, saying
        what happened since (moves are public notation)."""
        if judged < current:
            try:
                entries = await self.store.entries(game_id, judged + 1, count=4)
            except ApiError:
                entries = []
            moved = "; ".join(f"seat {e.actor} played {e.move!r}" for e in entries)
            what = f"another move was accepted first ({moved or 'the game moved on'})"
        else:
            what = f"version {judged} does not exist yet"
        return ApiError(
            "STALE_VERSION",
            f"{what}: the game is at version {current}, not {judged}; get the view again and retry",
            version=str(current),
        )

    def _retried_seat(self, loaded: Loaded, caller: Caller, request: MoveRequest) -> int | None:
        """The seat of a request the caller's request id shows was played: the caller's own,
        or, when the caller holds it no more (a bot took it over since), the seat the request
        names, else None (the log says which seat it was). The request id is the caller's
        own (scoped to them), so the move at its version was theirs."""
        try:
            return self._seat(loaded, caller.player, request, spectator_ok=False)
        except ApiError:
            return request.seat if request.HasField("seat") else None

    async def _replayed(
        self, loaded: Loaded, version: int, seat: int | None, move: str | None, request_id: str
    ) -> Message:
        """The answer to a retried request that was already applied at `version`: the first
        answer again (that version's status and events), whatever the game did since. A
        request id the caller used for another move (or seat) is refused: answering with the
        first move's result would tell the caller a move was played that was not.

        The first call may have stopped between its commit and waking the bots, so the bots are
        woken again, on the game as it is now (`loaded` may be the version the retry was judged
        on, from before its first try was committed)."""
        game_id = loaded.stored.game_id
        entry, held = await self.store.entry_held(game_id, version)
        if entry is None:
            raise ApiError("UNAVAILABLE", "the game's log cannot be read right now; retry")
        played = "resign" if move is None else move
        seat = entry.actor if seat is None else seat
        if (entry.actor, entry.move) != (seat, played):
            raise ApiError(
                "REQUEST_ID_REUSED",
                f"request id {request_id!r} was already used for {entry.move!r} by seat "
                f"{entry.actor} at version {version}, not for {played!r} by seat {seat}; "
                "a retry repeats the same move, a new move needs a new request id",
            )
        await self._wake_bots(await self._load(game_id))
        await self.store.confirm(held)
        return self.adapter.play_response(
            status=status_message(game_id, version, loaded.stored.meta, entry.status),
            events=self._events(entry.events, seat),
        )
