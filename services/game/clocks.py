"""A timed game's deadlines and seats taken over: the timeout or abort applied as of its
deadline (for a late move, for the deadline sweep: services/game/deadlines.py), and TakeSeat."""

from __future__ import annotations

import logging

from engines.contract import GameError
from games.clock import Due
from games.replay import TAKE_SEAT, Step
from runtime.game_log import now_ms
from runtime.observability import TIMEOUT_LATENESS, TIMEOUTS
from services.game.base import COMMIT_ATTEMPTS, GameBase
from services.game.seats import resolve_seat
from services.game.state import Loaded
from tabletop.common.v1 import common_pb2
from wire.errors import ApiError
from wire.metadata import Caller
from wire.players import new_bot_id
from wire.status import status_message

log = logging.getLogger("tabletop.game")


class Clocks(GameBase):
    """TakeSeat, and what is due to a game when nobody moves in time."""

    async def take_seat(
        self, request: common_pb2.TakeSeatRequest, caller: Caller
    ) -> common_pb2.TakeSeatResponse:
        """TakeSeat: the caller takes back their seat from the bot that plays it since their
        time ran out. The take-back is a version of the game like a move (move "take_seat", the
        seat as actor), written through the same versioned commit as a move or a timeout, so a
        bot's move judged on the version before is refused; the seat's time runs from it. What
        was due before it (another seat's timeout) is applied first. Nothing to take back (the
        caller holds the seat, or the game is over) answers the game as it is, so a retry is
        harmless."""
        loaded = await self._load(request.game_id)
        for _attempt in range(COMMIT_ATTEMPTS):
            stored = loaded.stored
            seat = resolve_seat(
                stored.meta.seats,
                caller.player,
                request.seat if request.HasField("seat") else None,
                spectator_ok=False,
            )
            assert seat is not None
            table = loaded.table
            if loaded.finished or table is None or seat not in table.replaced:
                return common_pb2.TakeSeatResponse(status=self._status(loaded))
            now = now_ms()
            due = loaded.due()
            if due is not None and now > due.at_ms:
                await self._apply_due(loaded, due)
                loaded = await self._load(request.game_id)
                continue
            left = table.time_left(loaded.time_control, seat, now)
            if left is not None and left <= 0:
                raise ApiError(
                    "NO_TIME_LEFT",
                    f"your chess clock has no time left: the bot plays seat {seat} on (the "
                    "increments it earns give you time to take it back later)",
                    seat=str(seat),
                )
            try:
                played = self._played(loaded, Step(seat, TAKE_SEAT, now))
            except GameError as error:
                raise ApiError.from_game_error(error, version=str(stored.version)) from None
            written = await self._write(
                loaded, played, "", not_after=None if due is None else due.at_ms
            )
            if written.outcome == "OK":
                log.info(
                    "seat taken back",
                    extra={"game_id": stored.game_id, "seat": seat, "version": written.version},
                )
                return common_pb2.TakeSeatResponse(
                    status=status_message(
                        stored.game_id, written.version, stored.meta, played.status
                    )
                )
            if written.outcome == "LATE":  # a deadline passed meanwhile: apply it first
                loaded = await self._load(request.game_id)
                continue
            if written.current is None:
                raise ApiError("GAME_NOT_FOUND", f"no game with id {stored.game_id}")
            loaded = written.current  # a bot moved first: take the seat back as it is now
        raise ApiError("UNAVAILABLE", "the game is too busy right now; retry")

    async def _too_late(self, loaded: Loaded, due: Due, seat: int) -> ApiError:
        """The refusal of a move that came after the game's deadline, once what was due (the
        timeout or the abort) is applied as of that deadline."""
        await self._apply_due(loaded, due)
        version = str(loaded.stored.version + 1)
        late = f"{now_ms() - due.at_ms} ms after the deadline"
        if due.kind == "abort":
            return ApiError(
                "GAME_OVER",
                f"the game was aborted: nobody at the table moved within "
                f"{loaded.time_control.abort_seconds} s of its start (this move came {late})",
                version=version,
            )
        if due.seat == seat:
            outcome = (
                "you forfeit the game"
                if loaded.time_control.on_timeout == "forfeit"
                else "a bot plays your seat until you take it back (TakeSeat)"
            )
            return ApiError(
                "TIME_UP",
                f"your time ran out: this move came {late}; {outcome}",
                deadline_ms=str(due.at_ms),
                version=version,
            )
        return ApiError(
            "STALE_VERSION",
            f"seat {due.seat}'s time ran out first (this move came {late}): the game is at "
            f"version {version}; get the view again and retry",
            version=version,
        )

    async def _apply_due(self, loaded: Loaded, due: Due) -> bool:
        """Apply what is due to the game (a timeout or the abort) as of its deadline, through
        the same versioned commit as a move: whether this call applied it (not: a move or
        another replica came first, or it is not due yet by Redis's clock)."""
        tc = loaded.time_control
        now = max(now_ms(), due.at_ms)
        bot = new_bot_id(tc.bot_level) if due.kind == "timeout" and tc.on_timeout == "bot" else ""
        move = "abort" if due.kind == "abort" else "timeout"
        played = self._played(loaded, Step(-1 if due.seat is None else due.seat, move, now, bot))
        written = await self._write(loaded, played, "", not_before=due.at_ms)
        if written.outcome != "OK":
            return False
        TIMEOUTS.labels(self.game, played.move if due.kind == "abort" else tc.on_timeout).inc()
        TIMEOUT_LATENESS.labels(self.game).observe((now - due.at_ms) / 1000)
        log.info(
            "timeout" if due.kind == "timeout" else "game aborted",
            extra={"game_id": loaded.stored.game_id, "seat": due.seat, "version": written.version},
        )
        return True

    async def expire(self, game_id: str) -> bool:
        """The deadline sweep's call for a game the index says is due: apply what is due, if
        it is; else set the game's right deadline in the index. Whether something was applied."""
        stored = await self.store.load(game_id)
        if stored is None:
            await self.store.index_deadline(game_id, 2**62, None)  # gone: forget it
            return False
        loaded = self._loaded(stored)
        due = loaded.due()
        if due is not None and now_ms() >= due.at_ms and await self._apply_due(loaded, due):
            return True
        await self._index(loaded)
        return False
