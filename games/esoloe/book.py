"""e-SOLO-e's book: positions the strong bot reaches as the second player, solved offline.

The strong bot loses its games against greedy as the second player (the seat that did not
begin), by a placement between the 4th and the 10th cube that its search can neither prove nor
value in a second. The book holds those positions solved in advance, with a move keeping each
proved value; the bots load it with the solved record (`solver.recorded_solver`) and play a
booked position by its move (`solver.book_move`).

``python -m games.esoloe.book collect|build|stats``:

- ``collect --seeds A:B``: plays greedy (first) against strong (second) on deals A..B-1, as the
  arena does, and counts the positions where strong is to move from the 4th to the 10th cube,
  up to symmetry (`solver.canonical`), into a work file (a JSON line a position). A deal
  already collected is skipped; the deals are kept in the file's header (and the book's), so an
  evaluation can use others.
- ``build``: solves the collected positions, most often reached first (then those with the most
  cubes, the quickest to solve), each within a node cap,
  and appends each result to a work file as it comes (a later run skips the positions in it);
  the book (`solver.BOOKS`, the record's format with a move on each line that has one) is
  rewritten from that file every so often and at the end.
- ``stats``: positions collected, solved (by value), unsolved, the book's size.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from games import DEFAULT_BUDGETS
from games.arena import Seating, next_action
from games.esoloe import bots
from games.esoloe import solver as exact
from games.esoloe.rules import RULES, EsoloeState

SECOND: Final = 1
"""The seat that does not begin (seat 0 places the first cube)."""
WORK: Final = Path(".bench")
"""Where the work files go by default (ignored by git)."""


def positions_path(edition: int) -> Path:
    return WORK / f"esoloe-book-e{edition}.positions.jsonl"


def results_path(edition: int) -> Path:
    return WORK / f"esoloe-book-e{edition}.results.jsonl"


# --------------------------------------------------------------------------------- collect


def game_positions(
    deal: int, edition: int, budget: float, first_cube: int, last_cube: int
) -> list[EsoloeState]:
    """The positions of one game, greedy (seat 0) against strong (seat 1) at `budget` seconds
    a decision, where strong is to place its cube number `first_cube`..`last_cube` of the game
    (counting both seats' cubes) and has no win at once."""
    levels = bots.LEVELS
    state = RULES.new_game(deal, edition=edition)
    seating = Seating(
        game="esoloe",
        levels=["greedy", "strong"],
        bots=[levels["greedy"](), levels["strong"]()],
        rngs=[random.Random(f"esoloe-book:{deal}:{seat}") for seat in (0, 1)],
        budgets={**DEFAULT_BUDGETS, "strong": budget},
    )
    out = []
    while state.to_act():
        cube = state._ply + 1
        if (
            state.to_move == SECOND
            and first_cube <= cube <= last_cube
            and not state.winning_placements(SECOND)
        ):
            out.append(state)
        seat, move = next_action(seating, state)
        state, _ = state.apply(seat, move)
    return out


def read_positions(path: Path) -> tuple[dict[str, object], dict[str, int]]:
    """The work file of `collect`: its header and, per position (key_text), how often it was
    reached."""
    if not path.exists():
        return {}, {}
    with path.open(encoding="ascii") as src:
        header = json.loads(src.readline())
        counts = {}
        for line in src:
            item = json.loads(line)
            counts[item["key"]] = item["count"]
    return header, counts


def write_positions(path: Path, header: dict[str, object], counts: dict[str, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("w", encoding="ascii") as out:
        out.write(json.dumps(header) + "\n")
        for key in sorted(counts, key=lambda k: (-counts[k], k)):
            out.write(json.dumps({"key": key, "count": counts[key]}) + "\n")
    tmp.replace(path)


def collect(
    path: Path,
    deals: range,
    edition: int,
    budget: float,
    first_cube: int = 4,
    last_cube: int = 10,
) -> tuple[int, int]:
    """Play the deals not collected yet into `path` (saved after each game); returns (games
    played, positions in the file)."""
    header, counts = read_positions(path)
    if header and header.get("edition") != edition:
        raise ValueError(f"{path} is edition {header.get('edition')}, not {edition}")
    done = set(_ints(header.get("deals")))
    header = {
        "game": "esoloe",
        "edition": edition,
        "budget": budget,
        "cubes": [first_cube, last_cube],
        "deals": sorted(done),
    }
    played = 0
    for deal in deals:
        if deal in done:
            continue
        for state in game_positions(deal, edition, budget, first_cube, last_cube):
            text = exact.key_text(exact.canonical(state))
            counts[text] = counts.get(text, 0) + 1
        done.add(deal)
        header["deals"] = sorted(done)
        write_positions(path, header, counts)
        played += 1
        print(f"deal {deal}: {len(counts)} positions", flush=True)
    return played, len(counts)


# --------------------------------------------------------------------------------- build


def read_results(path: Path) -> Iterator[dict[str, object]]:
    if path.exists():
        with path.open(encoding="ascii") as src:
            for line in src:
                if line.strip():
                    yield json.loads(line)


def solve_one(
    search: exact.Solver, state: EsoloeState, max_nodes: int, seconds: float | None
) -> tuple[int | None, str | None]:
    """The position's value (None when the cap ran out first) and, for a win or a draw, a
    move keeping it if the rest of the cap finds one."""
    start = search.nodes
    value = search.value(state, max_nodes, seconds)
    if value is None or value == exact.LOSS:
        return value, None
    left = max(1, max_nodes - (search.nodes - start))
    got = search.solve_move(state, max_nodes=left, seconds=seconds)
    return value, None if got is None or got[0] != value else got[1]


def write_book(
    path: Path, edition: int, results: Sequence[dict[str, object]], about: dict[str, object]
) -> int:
    """The book from the build's results: the record's format (a JSON header, then ``KEY VALUE``
    a position, sorted) with the move after the value where there is one; returns how many."""
    solved = sorted(
        (str(r["key"]), int(str(r["value"])), str(r.get("move") or ""))
        for r in results
        if r.get("value") is not None
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    return exact.write_values(path, edition, solved, about)


def build(
    positions: Path,
    results: Path,
    out: Path,
    edition: int,
    max_nodes: int,
    seconds: float | None = None,
    limit: int | None = None,
    every: int = 25,
) -> dict[str, int]:
    """Solve the collected positions not in `results` yet (at most `limit` of them), appending
    each result there, and write the book `out` from all of them."""
    header, counts = read_positions(positions)
    if not header:
        raise ValueError(f"{positions} is empty: run collect first")
    if header.get("edition") != edition:
        raise ValueError(f"{positions} is edition {header.get('edition')}, not {edition}")
    done = list(read_results(results))
    seen = {str(r["key"]) for r in done}
    # Most often reached first; then the positions nearest the end (the quickest to solve).
    order = sorted(counts, key=lambda k: (-counts[k], -len(k.replace("/", "")), k))
    todo = [key for key in order if key not in seen]
    if limit is not None:
        todo = todo[:limit]
    about = {
        "deals": _ranges(_ints(header.get("deals"))),
        "budget": header.get("budget"),
        "cubes": header.get("cubes"),
        "max_nodes": max_nodes,
        "positions": len(counts),
    }
    search = exact.recorded_solver(edition)
    base = len(search.table)
    solved = sum(1 for r in done if r.get("value") is not None)
    nodes, cpu = 0, 0.0
    results.parent.mkdir(parents=True, exist_ok=True)
    with results.open("a", encoding="ascii") as log:
        for i, text in enumerate(todo, 1):
            if len(search.table) > base + exact.TABLE_LIMIT * 4:
                search = exact.recorded_solver(edition)  # about 200 MB at most
            state = exact.state_from_key(exact.key_from_text(text), edition)
            began, start = time.process_time(), search.nodes
            value, move = solve_one(search, state, max_nodes, seconds)
            spent = time.process_time() - began
            nodes += search.nodes - start
            cpu += spent
            item: dict[str, object] = {
                "key": text,
                "value": value,
                "move": move,
                "nodes": search.nodes - start,
                "cpu": round(spent, 3),
            }
            log.write(json.dumps(item) + "\n")
            log.flush()
            done.append(item)
            solved += value is not None
            if i % every == 0 or i == len(todo):
                write_book(out, edition, done, about)
                print(
                    f"{len(done)}/{len(counts)} done, {solved} solved, {len(done) - solved} "
                    f"unsolved; {nodes / cpu if cpu else 0:.0f} positions/s, "
                    f"{cpu / i:.2f} s of CPU a position",
                    flush=True,
                )
    written = write_book(out, edition, done, about)
    return {"positions": len(counts), "done": len(done), "solved": solved, "written": written}


def _ints(value: object) -> list[int]:
    return [int(v) for v in value] if isinstance(value, list) else []


def _ranges(values: Sequence[int]) -> list[list[int]]:
    """Sorted integers as [first, last] runs."""
    out: list[list[int]] = []
    for v in sorted(values):
        if out and out[-1][1] == v - 1:
            out[-1][1] = v
        else:
            out.append([v, v])
    return out


# --------------------------------------------------------------------------------- stats


def stats(positions: Path, results: Path, out: Path) -> list[str]:
    lines = []
    header, counts = read_positions(positions)
    if header:
        reached = sum(counts.values())
        deals = _ranges(_ints(header.get("deals")))
        lines.append(
            f"collected: {len(counts)} positions ({reached} reached) from deals {deals}, "
            f"strong at {header.get('budget')} s, cubes {header.get('cubes')}"
        )
    done = list(read_results(results))
    if done:
        values = [r.get("value") for r in done]
        by = {exact.NAMES[v]: values.count(v) for v in (exact.WIN, exact.DRAW, exact.LOSS)}
        cpu = sum(float(str(r.get("cpu", 0.0))) for r in done)
        nodes = sum(int(str(r.get("nodes", 0))) for r in done)
        lines.append(
            f"built: {len(done)} positions, {len(done) - values.count(None)} solved {by}, "
            f"{values.count(None)} unsolved; {cpu:.0f} s of CPU, {nodes / cpu if cpu else 0:.0f}"
            " positions/s"
        )
    if out.exists():
        with gzip.open(out, "rt", encoding="ascii") as src:
            header = json.loads(src.readline())
            moves = sum(1 for line in src if len(line.split()) == 3)
        lines.append(
            f"book {out}: {header.get('values')} values ({moves} with a move), "
            f"{out.stat().st_size:,} bytes; {json.dumps(header.get('book'))}"
        )
    return lines or ["nothing collected or built yet"]


# --------------------------------------------------------------------------------- CLI


def _span(text: str) -> tuple[int, int]:
    """`A:B` on the command line, as two integers."""
    first, _, last = text.partition(":")
    try:
        return int(first), int(last)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not A:B, two whole numbers") from None


def _deals(text: str) -> range:
    return range(*_span(text))


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m games.esoloe.book", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("command", choices=["collect", "build", "stats"])
    parser.add_argument("--edition", type=int, default=RULES.edition, choices=RULES.editions)
    parser.add_argument("--positions", type=Path, help="collect's work file")
    parser.add_argument("--results", type=Path, help="build's work file")
    parser.add_argument("--out", type=Path, help="the book (default games/esoloe/book-eE...)")
    parser.add_argument("--seeds", type=_deals, help="collect: deals A:B (A..B-1)")
    parser.add_argument("--budget", type=float, default=0.25, help="collect: strong's seconds")
    parser.add_argument(
        "--cubes", type=_span, default=(4, 10), help="collect: strong's cubes, e.g. 4:10"
    )
    parser.add_argument("--max-nodes", type=int, default=20_000, help="build: cap a position")
    parser.add_argument("--seconds", type=float, default=None, help="build: time cap a position")
    parser.add_argument("--limit", type=int, default=None, help="build: at most this many")
    args = parser.parse_args(argv)
    edition = args.edition
    positions = args.positions or positions_path(edition)
    results = args.results or results_path(edition)
    out = args.out or exact.BOOKS[edition]
    if args.command == "collect":
        if args.seeds is None:
            parser.error("collect needs --seeds A:B")
        first, last = args.cubes
        played, n = collect(positions, args.seeds, edition, args.budget, first, last)
        print(f"{played} games played; {n} positions in {positions}")
    elif args.command == "build":
        got = build(positions, results, out, edition, args.max_nodes, args.seconds, args.limit)
        print(f"{got['written']} values in {out} ({got['done']}/{got['positions']} done)")
    else:
        for line in stats(positions, results, out):
            print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
