"""Who sits where: the caller's seat in a game, the refusal for a seat a bot took over, and who
may be shown a deal of the day before its day is over."""

from __future__ import annotations

import time
from collections.abc import Sequence

from runtime.game_log import now_ms
from wire.errors import ApiError
from wire.records import GameMeta


def utc_day(ms: int) -> str:
    """The UTC day (YYYY-MM-DD) of a time in ms."""
    return time.strftime("%Y-%m-%d", time.gmtime(ms // 1000))


def check_shown(meta: GameMeta, player: str) -> None:
    """Refuse to show a deal of the day to anyone but its player until its day (UTC) is over:
    another player could copy its moves on their own try."""
    day = meta.day
    if day and player not in meta.seats and day >= utc_day(now_ms()):
        raise ApiError(
            "NOT_YOUR_GAME",
            f"a deal of the day is shown to its player only, until its day ({day}) is over at "
            "midnight UTC",
        )


def resolve_seat(
    seats: Sequence[str],
    player: str,
    requested: int | None,
    *,
    spectator_ok: bool,
    seated: Sequence[str] = (),
) -> int | None:
    """The caller's seat, or None for a spectator (only where `spectator_ok`). `seats`: who
    holds each seat now; `seated`: who was seated at creation, when bots took seats over (a
    caller whose seat a bot plays is a spectator where one may be, else refused with a word
    on TakeSeat)."""
    mine = [i for i, holder in enumerate(seats) if holder == player and player]
    taken = [i for i, p in enumerate(seated) if p == player and player and i not in mine]
    if requested is not None:
        if not 0 <= requested < len(seats):
            raise ApiError(
                "INVALID_ARGUMENT",
                f"seat {requested} does not exist; seats are 0..{len(seats) - 1}",
            )
        if requested in mine:
            return requested
        if requested in taken:
            if spectator_ok:
                return None
            raise taken_over(requested)
        held = f"you hold seat {mine[0]}" if len(mine) == 1 else "you hold no seat here"
        raise ApiError("NOT_YOUR_SEAT", f"seat {requested} is not yours; {held}")
    if not mine:
        if spectator_ok:
            return None
        if taken:
            raise taken_over(taken[0])
        raise ApiError(
            "NOT_YOUR_SEAT",
            "you hold no seat in this game; spectators may only GetView and Watch",
        )
    if len(mine) > 1:
        raise ApiError(
            "INVALID_ARGUMENT",
            f"you hold seats {', '.join(map(str, mine))}: say which one with `seat`",
        )
    return mine[0]


def taken_over(seat: int) -> ApiError:
    """NOT_YOUR_SEAT for acting for a seat that a bot plays since its player's time ran out."""
    return ApiError(
        "NOT_YOUR_SEAT",
        f"your time ran out and a bot plays your seat ({seat}) since: take it back with "
        "TakeSeat (meanwhile you may GetView and Watch the game)",
        seat=str(seat),
    )
