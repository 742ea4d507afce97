"""A game's public status on the wire (tabletop.common.v1.GameStatus), built from what the game
service stores with each version: the game's meta (its kind, seats, names, rules edition) and
the version's status (who may act, whether it is over, the result)."""

from __future__ import annotations

from tabletop.common.v1 import common_pb2
from wire.clock import clocks, time_control_message, timestamp
from wire.players import display_name, plays_as_bot
from wire.records import GameMeta, VersionStatus


def status_message(
    game_id: str,
    version: int,
    meta: GameMeta,
    status: VersionStatus,
) -> common_pb2.GameStatus:
    """The GameStatus of game `game_id` at `version`, from its meta and status."""
    seats = holders_of(meta, status)
    message = common_pb2.GameStatus(
        game_id=game_id,
        game=meta.game,
        version=version,
        seats=[
            common_pb2.Seat(index=i, player_id=p, name=name, bot=plays_as_bot(p))
            for i, (p, name) in enumerate(zip(seats, names_of(meta, status), strict=True))
        ],
        to_act=status.to_act,
        finished=status.finished,
        rules_edition=meta.rules_edition,
        rated=meta.rated,
    )
    for seat, (rating, provisional) in (meta.ratings or {}).items():
        if seat in status.taken_over:
            continue  # a bot holds it now
        message.seats[int(seat)].rating = rating
        message.seats[int(seat)].provisional = provisional
    result = status.result
    if result is not None:
        message.result.winners.extend(result["winners"])
        for seat, score in result["scores"].items():
            message.result.scores[int(seat)] = float(score)
        message.result.detail.update(result["detail"])
    if meta.time_control is not None:
        message.time_control.CopyFrom(time_control_message(meta.clock))
    clock = status.clock
    if clock is not None:
        message.clocks.extend(clocks(clock, len(seats)))
        if clock["abort_at"] is not None:
            message.abort_at.CopyFrom(timestamp(clock["abort_at"]))
    return message


def holders_of(meta: GameMeta, status: VersionStatus) -> list[str]:
    """Who holds each seat at a version: the seated players, less the seats bots took over
    when their time ran out (the version's status lists those)."""
    seats: list[str] = list(meta.seats)
    for seat, bot in status.taken_over.items():
        seats[int(seat)] = bot
    return seats


def names_of(meta: GameMeta, status: VersionStatus | None = None) -> list[str]:
    """The seats' display names (games stored before names were kept: from the ids); a seat
    a bot took over is the bot's."""
    names = meta.names
    found = [display_name(p, None) for p in meta.seats] if names is None else list(names)
    taken = {} if status is None else status.taken_over
    for seat, bot in taken.items():
        found[int(seat)] = display_name(bot, None)
    return found
