"""The archive's public records of finished games (pure: no I/O): a game as text, as PGN is
for chess (`game_text`), and exports read back and replayed (`read_records`). A public record
is what anyone may read of an archived game (services/archive/record.py writes it): everything
but the seed. A game with hidden information (Solo's hands, Solace's nests) cannot be replayed
from it: its deal is never shown. docs/archive.md says more."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import games
from games.clock import UNTIMED, TimeControl
from games.replay import parse_seat_move, replay


def _clock(ms: int) -> str:
    seconds = max(0, ms) // 1000
    return f"{seconds // 60}:{seconds % 60:02d}"


def game_text(record: Mapping[str, Any]) -> str:
    """A public record as text, as PGN is for chess: a header per line (`[Name "value"]`), a
    blank line, then one move per line, `N. SEAT:MOVE` (`N. abort`, `N. stop_game` for what the
    platform did alone), the clocks after it in braces. docs/archive.md, "Notation"."""
    result = record["result"]
    headers = [
        ("Game", record["game"]),
        ("GameId", record["game_id"]),
        ("Edition", str(record["edition"])),
        ("Started", record["created_at"]),
        ("Finished", record["finished_at"]),
        ("Options", json.dumps(record["options"], sort_keys=True)),
        ("TimeControl", json.dumps(record["time_control"], sort_keys=True)),
        ("Rated", "yes" if record["rated"] else "no"),
    ]
    if record["day"]:
        headers.append(("DealOfTheDay", record["day"]))
    for index, seat in enumerate(record["seats"]):
        headers.append((f"Seat{index}", seat["name"]))
        headers.append((f"Seat{index}Id", seat["player_id"]))
        for key, name in (("rating", "Rating"), ("rating_after", "RatingAfter")):
            if key in seat:
                headers.append((f"Seat{index}{name}", str(seat[key])))
    headers.append(("Winners", winners_text(result)))
    headers.append(("End", record["end"]))
    if result is not None and result.get("scores"):
        headers.append(("Scores", json.dumps(result["scores"], sort_keys=True)))
    lines = [f'[{name} "{value}"]' for name, value in headers]
    lines.append("")
    for number, (actor, move, _ms, remaining) in enumerate(record["moves"], start=1):
        played = move if actor < 0 else f"{actor}:{move}"
        clocks = f" {{{' '.join(_clock(ms) for ms in remaining)}}}" if remaining else ""
        lines.append(f"{number}. {played}{clocks}")
    return "\n".join(lines) + "\n"


def read_text(text: str) -> dict[str, Any]:
    """What `game_text` wrote, back: the game, its options, edition, time control, the moves as
    (seat, move) and the recorded winners. Raises ValueError for anything else."""
    headers: dict[str, str] = {}
    moves: list[tuple[int, str]] = []
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.startswith("["):
            name, _, value = line[1:-1].partition(" ")
            if not (line.endswith("]") and value.startswith('"') and value.endswith('"')):
                raise ValueError(f"not a header: {line[:80]!r}")
            headers[name] = value[1:-1]
            continue
        number, _, rest = line.partition(". ")
        if not number.isdigit() or int(number) != len(moves) + 1:
            raise ValueError(f"not move {len(moves) + 1}: {line[:80]!r}")
        played = rest.split(" {", 1)[0]
        moves.append(parse_seat_move(played))
    if "Game" not in headers:
        raise ValueError("no [Game ...] header: not a game's text")
    return {
        "game": headers["Game"],
        "game_id": headers.get("GameId", ""),
        "edition": int(headers.get("Edition", "1")),
        "options": json.loads(headers.get("Options", "{}")),
        "time_control": json.loads(headers.get("TimeControl", "null")),
        "winners": headers.get("Winners", ""),
        "moves": moves,
    }


def replayed(game: str, edition: int, options: Mapping[str, Any], time_control: Any,
             moves: Sequence[tuple[int, str]]) -> dict[str, Any] | None:  # fmt: skip
    """A public record's moves replayed from a new game: the replay's report (games.replay),
    or None for a game with hidden information, whose record cannot be replayed (its deal is
    never shown)."""
    if games.get(game).hidden:
        return None
    tc = UNTIMED if time_control is None else TimeControl.from_json(time_control)
    return replay(game, moves, options=options, edition=edition, time_control=tc)


def winners_text(result: Mapping[str, Any] | None) -> str:
    """The `Winners` header of a result: seats, "draw" or "none"."""
    if result is None:
        return "none"
    return " ".join(str(s) for s in result["winners"]) or "draw"


@dataclass(frozen=True)
class ReadBack:
    """One exported game, read back and replayed."""

    game_id: str
    winners: str
    """As recorded (the `Winners` header)."""
    report: dict[str, Any] | None
    """The replay's report; None for a game with hidden information."""

    @property
    def replayed_winners(self) -> str:
        return "" if self.report is None else winners_text(self.report["result"])

    @property
    def same(self) -> bool:
        return self.report is not None and self.replayed_winners == self.winners


def read_records(text: str) -> list[ReadBack]:
    """The games of an export, replayed: one game's text (`game_text`), or public records as
    NDJSON, one per line (the archive's monthly export)."""
    if text.lstrip().startswith("["):
        found = read_text(text)
        report = replayed(
            found["game"], found["edition"], found["options"], found["time_control"],
            found["moves"],
        )  # fmt: skip
        return [ReadBack(found.get("game_id", ""), found["winners"], report)]
    read = []
    for line in text.splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        moves = [(actor, move) for actor, move, _ms, _clocks in record["moves"]]
        report = replayed(
            record["game"], record["edition"], record["options"], record["time_control"], moves
        )
        read.append(ReadBack(record["game_id"], winners_text(record["result"]), report))
    return read
