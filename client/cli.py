"""The `tabletop` command.

tabletop play GAME [--bots N] [--level LEVEL] [--options JSON] [--seat N] [--name NAME]
tabletop play GAME --match [--bots-after SECONDS]
tabletop play GAME ... [--clock MIN+INC] [--move-time SECONDS] [--abort-after SECONDS]
                       [--on-timeout bot|forfeit] [--timeout-level LEVEL] [--untimed]
tabletop play --game ID            sit back down at one of your games (any kind)
tabletop games [--live]            your live and recent games
tabletop watch GAME [GAME_ID]
tabletop stop GAME_ID              end a game of bots you watch (one `watch GAME` made)
tabletop replay GAME [--seed N] [--options JSON] [--setup JSON] [--edition N] SEAT:MOVE ...
tabletop hotseat GAME [--names A,B] [MOVE ...]   (esoloe, zoxso: people at one terminal)
tabletop health
tabletop register USERNAME [--bot] | login USERNAME | logout [--everywhere] | whoami
tabletop tokens [list] | tokens create NAME [--scope play|bot] [--days N] | tokens revoke ID
tabletop rating [GAME] [PLAYER] | top GAME [--limit N] [--me]   (PLAYER: a username or an id)
tabletop history [PLAYER] [--game GAME] | show GAME_ID [--move N] [--every] [--text]
tabletop challenge PLAYER GAME [--rated] [--options JSON]   (a player id or a username)
tabletop challenges [list] | challenges accept|decline|cancel ID | challenges refuse|allow
tabletop invite GAME [--seats N] | join CODE        (a private table and its invite code)
tabletop tables [GAME] | tables join ID | tables open GAME [--seats N] | rematch GAME_ID
tabletop follow USERNAME | unfollow USERNAME | following | followers [list|refuse|allow]
tabletop notifications [--all] [--count N]   (what concerns you, as it comes)
tabletop migrate [--database URL] [--wait SECONDS]   (operators: the database's schema)

Every command that calls the platform takes --gateway HOST:PORT; without it, TABLETOP_GATEWAY,
else the address a local platform (`make run`) announced, else 127.0.0.1:50050. A gateway that
speaks TLS: --tls (the system's roots), --ca-file PEM (a private CA), --server-name NAME. Who
you are on a gateway (your login) is kept in the state directory, so that `tabletop games` and
`tabletop play --game ID` find your games again; `--name` logs in anew under another name.
An account (`register`, `login`) keeps you for good, on any machine; the password is asked at
the terminal (or read from the first line of standard input), never given as an argument.

At the table, type a move in the game's notation (any case; in Solo a card alone plays it), or:
help (legal moves), board, clock, wait, auto, resign, quit. docs/client.md shows each game.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import json
import os
import re
import signal
import sys
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import games
from client.clocks import OUTCOMES, parse_clock, time_control
from client.session import Tls, gateway_channel
from engines.contract import GameError
from games.replay import parse_seat_move, replay
from runtime.config import gateway_address
from runtime.tasks import keep_cancelling
from tabletop.common.v1 import common_pb2

LEVELS = ("random", "greedy", "strong", "expert")
NAME_HELP = (
    "your display name; without it the name you last played under on this gateway (first time: "
    "your user name). Another name is a new login: a new player"
)


def _default_name() -> str:
    """The login name, made acceptable to Login (1..32 letters, digits, spaces, - or _)."""
    name = re.sub(r"[^A-Za-z0-9 _-]", "", os.environ.get("USER", ""))[:32].strip()
    return name or "player"


def _gateway_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--gateway",
        "--target",
        dest="gateway",
        default=None,
        metavar="HOST:PORT",
        help="the platform's gateway (default: TABLETOP_GATEWAY, else the address `make run` "
        "announced, else 127.0.0.1:50050)",
    )
    parser.add_argument(
        "--tls",
        action="store_true",
        help="the gateway speaks TLS (implied by --ca-file and --server-name)",
    )
    parser.add_argument(
        "--ca-file",
        default="",
        metavar="PEM",
        help="trust these certificates for the gateway's (default: the system's roots)",
    )
    parser.add_argument(
        "--server-name",
        default="",
        metavar="NAME",
        help="the name the gateway's certificate must carry, when it is not the address called",
    )


def _tls(args: argparse.Namespace) -> Tls | None:
    if args.tls or args.ca_file or args.server_name:
        return Tls(ca_file=args.ca_file, server_name=args.server_name)
    return None


def _json_arg(text: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as error:
        raise argparse.ArgumentTypeError(f"not JSON: {error}") from None


def _clock_arg(text: str) -> tuple[int, int]:
    try:
        return parse_clock(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _time_flags(parser: argparse.ArgumentParser) -> None:
    timing = parser.add_argument_group(
        "time control (a new game; without these flags, the game's default; with any, no "
        "clock or limit they leave out, the game's outcome and abort otherwise)"
    )
    timing.add_argument(
        "--clock",
        type=_clock_arg,
        default=None,
        metavar="MIN+INC",
        help="a chess clock: minutes per seat (may be fractional) + seconds added per move, "
        "e.g. 5+3",
    )
    timing.add_argument(
        "--move-time", type=int, default=None, metavar="SECONDS", help="a limit per move"
    )
    timing.add_argument(
        "--abort-after",
        type=int,
        default=None,
        metavar="SECONDS",
        help="abort the game (no result) if nobody at the table moves within this time",
    )
    timing.add_argument(
        "--on-timeout",
        choices=tuple(OUTCOMES),
        default=None,
        help="a seat out of time forfeits, or a bot plays it (default: the game's)",
    )
    timing.add_argument(
        "--timeout-level",
        choices=LEVELS,
        default=None,
        help="the level of the bot that takes over a seat out of time (default: greedy)",
    )
    timing.add_argument(
        "--untimed", action="store_true", help="no clock at all (nobody runs out of time)"
    )


def _time_control(
    parser: argparse.ArgumentParser, args: argparse.Namespace
) -> common_pb2.TimeControl | None:
    """The TimeControl `tabletop play` asks for (None: the game's default), or a usage error."""
    try:
        found = time_control(
            clock=args.clock,
            move_seconds=args.move_time,
            abort_seconds=args.abort_after,
            untimed=args.untimed,
            on_timeout=args.on_timeout,
            level=args.timeout_level,
            default_abort=games.get(args.game).time_control.abort_seconds if args.game else 0,
        )
    except ValueError as error:
        parser.error(str(error))
    if found is not None and args.game_id:
        parser.error("a time control is for a new game: --game ID keeps the game's own")
    allowed = games.get(args.game).timeouts if args.game else OUTCOMES
    if args.on_timeout and args.on_timeout not in allowed:
        parser.error(
            f"a {args.game} seat out of time cannot {args.on_timeout}; "
            f"--on-timeout may be: {', '.join(allowed)}"
        )
    return found


def _replay(args: argparse.Namespace) -> int:
    if args.file:
        return _replay_file(args.file)
    if args.game is None:
        print("tabletop replay: name a GAME and its moves, or give --file", file=sys.stderr)
        return 2
    try:
        moves = [parse_seat_move(text) for text in args.moves]
        report = replay(
            args.game,
            moves,
            seed=args.seed,
            options=args.options,
            setup=args.setup,
            edition=args.edition,
        )
    except (ValueError, KeyError, GameError) as error:
        message = error.args[0] if error.args else str(error)
        print(f"tabletop replay: {message}", file=sys.stderr)
        return 2
    print(json.dumps(report, sort_keys=True))
    return 0


def _replay_file(path: str) -> int:
    """Replay an export: one game's text (`tabletop show --text`) or a month's NDJSON (`tabletop
    export`, gzipped or not); each game's replayed result against the one recorded."""
    import gzip

    from games.records import read_records

    try:
        raw = Path(path).read_bytes()
        games_read = read_records((gzip.decompress(raw) if path.endswith(".gz") else raw).decode())
    except (OSError, ValueError, KeyError) as error:
        print(f"tabletop replay: {path}: {error}", file=sys.stderr)
        return 2
    same = hidden = differ = 0
    for game in games_read:
        if game.report is None:
            hidden += 1
        elif game.same:
            same += 1
        else:
            differ += 1
            print(f"{game.game_id}: replayed {game.replayed_winners!r}, recorded {game.winners!r}")
    if len(games_read) == 1 and games_read[0].report is not None:
        print(json.dumps(games_read[0].report, sort_keys=True))
    print(
        f"{len(games_read)} game(s): {same} replayed to the recorded result, {differ} not; "
        f"{hidden} with hidden information (their deals are never shown: not replayable)"
    )
    return 1 if differ else 0


async def _health(target: str, tls: Tls | None) -> int:
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    async with gateway_channel(target, tls) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        try:
            reply = await stub.Check(health_pb2.HealthCheckRequest(), timeout=5)
        except grpc.aio.AioRpcError as error:
            print(f"{target}: {error.code().name} {error.details()}")
            return 1
    status = health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)
    print(f"{target}: {status}")
    return 0 if reply.status == health_pb2.HealthCheckResponse.SERVING else 1


def _rating_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    """`rating [GAME] [PLAYER]`: a lone word that is no game with ratings or scores is the
    player (`tabletop rating bob`)."""
    rated = ("esoloe", "solo", "zoxso", "solace")
    if args.game and args.game not in rated and not args.player:
        args.game, args.player = "", args.game
    if args.game and args.game not in rated:
        parser.error(f"no game {args.game!r} with a rating or scores: {', '.join(rated)}")
    if args.player and args.player_flag and args.player != args.player_flag:
        parser.error("name the player once: PLAYER or --player")
    args.player = args.player or args.player_flag


def main(argv: Sequence[str] | None = None) -> int:
    """The `tabletop` command; its exit status. An output closed before the command is done
    (`tabletop games | head -4`) ends it quietly, as it ends other programs: no traceback, the
    status of a program SIGPIPE ended (141)."""
    try:
        status = _main(argv)
        sys.stdout.flush()  # here, not at exit, where a closed pipe can no longer be caught
        return status
    except BrokenPipeError:
        # Python flushes the standard output once more as it exits: make that write go nowhere.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + signal.SIGPIPE


def _main(argv: Sequence[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="tabletop", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    commands = parser.add_subparsers(dest="command", required=True)
    parsers = {command.name: _command_parser(commands, command) for command in COMMANDS}
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["migrate"]:
        migrating = parsers["migrate"].parse_args(argv[1:])
        return _migrate(migrating.database, migrating.wait)
    if argv[:1] == ["replay"]:
        # Options may come anywhere among the moves: `replay solo --seed 3 0:draw 1:pass`.
        return _replay(parsers["replay"].parse_intermixed_args(argv[1:]))
    args = parser.parse_args(argv)
    _complete(args, parsers[args.command])
    return _run(next(c for c in COMMANDS if c.name == args.command), args)


def _command_parser(
    commands: argparse._SubParsersAction[argparse.ArgumentParser], command: Command
) -> argparse.ArgumentParser:
    """The command's parser: its own arguments, then those of its kind."""
    parser = commands.add_parser(command.name, help=command.help)
    command.arguments(parser)
    if command.timed:
        _time_flags(parser)
    if command.seats:
        parser.add_argument("--seats", type=int, default=0, help="seats at the table (Solo: 2..10)")
    if command.gateway:
        _gateway_flag(parser)
    if command.named:
        parser.add_argument("--name", default=None, help=NAME_HELP)
    return parser


def _complete(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """What every command calling the platform reads beside its arguments (the gateway, TLS,
    the default name, the time control a new game asks for), or a usage error."""
    if args.command == "rating":
        _rating_args(parser, args)
    args.gateway = gateway_address(args.gateway)
    args.tls = _tls(args)
    args.default_name = _default_name()
    if args.command in FRIENDLY:
        args.game_id = None  # a new game (client.play.run_table reads it)
        words = getattr(args, "words", [])
        opening = words[:1] == ["open"] and len(words) == 2
        args.game = getattr(args, "game", words[1] if opening else "")
        if opening and args.game not in games.names():
            parser.error(f"no game {args.game!r}; games are: {', '.join(games.names())}")
    timed = args.command in TIMED
    args.time_control = _time_control(parser, args) if timed else None


def _run(command: Command, args: argparse.Namespace) -> int:
    """The command's work, to its end; Ctrl-C ends one that may wait long (130)."""
    work = command.run(args)
    if not command.interruptible:
        return asyncio.run(work)
    try:
        return asyncio.run(_interruptible(work))
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 130


# -- each command's arguments ---------------------------------------------------------------


def _replay_arguments(rp: argparse.ArgumentParser) -> None:
    rp.add_argument("game", nargs="?", choices=games.names())
    rp.add_argument(
        "--file", default="", help="replay an exported game (text) or month (NDJSON, .gz)"
    )
    rp.add_argument("--seed", type=int, default=0)
    rp.add_argument("--options", type=_json_arg, default=None, help="options as a JSON object")
    rp.add_argument("--setup", type=_json_arg, default=None, help="explicit setup as JSON")
    rp.add_argument(
        "--edition",
        type=int,
        default=None,
        help="the rules edition (default: the current one; older games keep theirs)",
    )
    rp.add_argument("moves", nargs="*", metavar="SEAT:MOVE")


def _hotseat_arguments(hs: argparse.ArgumentParser) -> None:
    hs.add_argument("game", choices=games.names(), help="a game with nothing hidden: esoloe, zoxso")
    _gateway_flag(hs)
    hs.add_argument(
        "--names",
        default=None,
        metavar="A,B",
        help="the players' names, in seat order (default: player 1, player 2)",
    )
    hs.add_argument(
        "moves",
        nargs="*",
        metavar="MOVE",
        help="moves to play in turn; without them, read lines from standard input, as at "
        "`tabletop play`'s table",
    )


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    pass


def _play_arguments(pl: argparse.ArgumentParser) -> None:
    pl.add_argument("game", nargs="?", choices=games.names(), help="the game to start")
    pl.add_argument(
        "--game",
        dest="game_id",
        default=None,
        metavar="ID",
        help="sit back down at one of your games (`tabletop games` lists them)",
    )
    pl.add_argument(
        "--bots", type=int, default=None, help="bots at the table (Solo: 1..9; default: all seats)"
    )
    pl.add_argument(
        "--match", action="store_true", help="find a match with other people instead of bots"
    )
    pl.add_argument(
        "--bots-after",
        type=int,
        default=0,
        metavar="SECONDS",
        help="with --match: fill empty seats with bots after this wait (default: never)",
    )
    pl.add_argument("--seat", type=int, default=None, help="the seat you want (default: random)")
    pl.add_argument("--level", choices=LEVELS, default="random", help="the bots' level")
    pl.add_argument("--options", type=_json_arg, default=None, help="options as a JSON object")
    pl.add_argument(
        "--daily", action="store_true", help="Solace: the deal of the day (once a day, accounts)"
    )
    pl.add_argument("--rated", action="store_true", help="a rated game (accounts; docs/ratings.md)")
    _time_flags(pl)


def _games_arguments(gl: argparse.ArgumentParser) -> None:
    gl.add_argument("--live", action="store_true", help="only games still being played")


def _watch_arguments(wt: argparse.ArgumentParser) -> None:
    wt.add_argument("game", choices=games.names())
    wt.add_argument("game_id", nargs="?", help="default: a new game with bots in every seat")
    wt.add_argument(
        "--level",
        choices=LEVELS,
        default="greedy",
        help="the bots' level in a new game (default greedy: random Solo bots can take "
        "thousands of moves over a round)",
    )
    wt.add_argument("--options", type=_json_arg, default=None, help="options as a JSON object")
    wt.add_argument(
        "--pace",
        type=int,
        default=None,
        metavar="MS",
        help="how long the bots of a new game let pass after each move, 0..5000 ms "
        "(default 1000: a pace you can follow)",
    )


def _game_id_argument(st: argparse.ArgumentParser) -> None:
    st.add_argument("game_id", metavar="GAME_ID")


def _register_arguments(rg: argparse.ArgumentParser) -> None:
    rg.add_argument("username")
    rg.add_argument(
        "--bot", action="store_true", help="a bot account (it plays with a 'bot' API token)"
    )


def _username_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("username")


def _logout_arguments(lo: argparse.ArgumentParser) -> None:
    lo.add_argument("--everywhere", action="store_true", help="end every session of the account")


def _rating_arguments(rt: argparse.ArgumentParser) -> None:
    rt.add_argument(
        "game", nargs="?", default="", help="esoloe, solo, zoxso or solace (default: each)"
    )
    rt.add_argument("player", nargs="?", default="", help="a username or player id (default: you)")
    rt.add_argument("--player", dest="player_flag", default="", help="the same as PLAYER")


def _top_arguments(tp: argparse.ArgumentParser) -> None:
    tp.add_argument("game", choices=("esoloe", "solo", "zoxso", "solace"))
    tp.add_argument(
        "--day", default="", help="Solace: a deal of the day's table (today, or YYYY-MM-DD)"
    )
    tp.add_argument("--limit", type=int, default=20, help="how many places (1 to 100)")
    tp.add_argument("--me", action="store_true", help="the places around you")


def _history_arguments(hi: argparse.ArgumentParser) -> None:
    hi.add_argument("player", nargs="?", default="", help="a username or player id (default: you)")
    hi.add_argument("--game", default="", choices=("", *games.names()), help="one game only")
    hi.add_argument("--outcome", default="", choices=("", "win", "loss", "draw"))
    hi.add_argument(
        "--opponent", default="", help="only games with this player (a username or player id)"
    )
    hi.add_argument("--limit", type=int, default=20, help="how many games (1 to 100)")


def _export_arguments(ex: argparse.ArgumentParser) -> None:
    ex.add_argument("--month", required=True, help="YYYY-MM (UTC)")
    ex.add_argument("--game", default="", choices=("", *games.names()), help="one game only")
    ex.add_argument("--out", default="", help="the file (default: tabletop-YYYY-MM.ndjson.gz)")


def _live_arguments(lv: argparse.ArgumentParser) -> None:
    lv.add_argument("game", nargs="?", default="", choices=("", *games.names()))
    lv.add_argument("--limit", type=int, default=20, help="how many games (1 to 50)")


def _show_arguments(sh: argparse.ArgumentParser) -> None:
    sh.add_argument("game_id")
    sh.add_argument("--every", action="store_true", help="the board after every move")
    sh.add_argument("--move", type=int, default=None, help="the board after move N (0: the start)")
    sh.add_argument(
        "--text", action="store_true", help="the game as text (`tabletop replay --file` reads it)"
    )


def _tokens_arguments(tk: argparse.ArgumentParser) -> None:
    tk.add_argument("action", nargs="?", choices=("list", "create", "revoke"), default="list")
    tk.add_argument("what", nargs="?", default="", help="create: its name; revoke: its id")
    tk.add_argument(
        "--scope", action="append", choices=("play", "bot"), default=[], help="what it may do"
    )
    tk.add_argument("--days", type=int, default=0, help="how long it works (default 90)")


def _friendly(parser: argparse.ArgumentParser) -> None:
    """A new game with friends: rated or not, its options."""
    parser.add_argument("--rated", action="store_true", help="a rated game (accounts)")
    parser.add_argument("--options", type=_json_arg, default=None, help="options as a JSON object")


def _challenge_arguments(ch: argparse.ArgumentParser) -> None:
    ch.add_argument("player", help="a player id, or an account's username")
    ch.add_argument("game", choices=games.names())
    _friendly(ch)


def _challenges_arguments(cs: argparse.ArgumentParser) -> None:
    cs.add_argument(
        "action", nargs="?", choices=("list", "accept", "decline", "cancel", "refuse", "allow"),
        default="list",
        help="refuse: take no challenges from now on; allow: take them again",
    )  # fmt: skip
    cs.add_argument("challenge_id", nargs="?", default="", metavar="ID")


def _invite_arguments(iv: argparse.ArgumentParser) -> None:
    iv.add_argument("game", choices=games.names())
    _friendly(iv)


def _join_arguments(jn: argparse.ArgumentParser) -> None:
    jn.add_argument("code")


def _tables_arguments(tb: argparse.ArgumentParser) -> None:
    tb.add_argument("words", nargs="*", metavar="[GAME] | join ID | open GAME")
    _friendly(tb)


def _rematch_arguments(rm: argparse.ArgumentParser) -> None:
    rm.add_argument("game_id_of", metavar="GAME_ID")


def _followers_arguments(fs: argparse.ArgumentParser) -> None:
    fs.add_argument(
        "action", nargs="?", choices=("list", "refuse", "allow"), default="list",
        help="refuse: nobody follows you (those who do stop); allow: anyone may",
    )  # fmt: skip


def _notifications_arguments(nt: argparse.ArgumentParser) -> None:
    nt.add_argument("--all", action="store_true", help="those kept first (the last 100)")
    nt.add_argument("--count", type=int, default=0, help="stop after this many")


def _migrate_arguments(mg: argparse.ArgumentParser) -> None:
    mg.add_argument(
        "--database",
        default=os.environ.get("DATABASE_URL", ""),
        help="the PostgreSQL URL (default: DATABASE_URL)",
    )
    mg.add_argument(
        "--wait",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="wait up to this long for the database to answer (one starting beside it)",
    )


# -- each command's work --------------------------------------------------------------------

Work = Coroutine[Any, Any, int]


def _health_work(args: argparse.Namespace) -> Work:
    return _health(args.gateway, args.tls)


@dataclass(frozen=True)
class _In:
    """The work of a command that is the function of its name in client/<module>.py, imported
    when the command runs."""

    module: str

    def __call__(self, args: argparse.Namespace) -> Work:
        work: Callable[[argparse.Namespace], Work] = getattr(
            importlib.import_module(f"client.{self.module}"), args.command
        )
        return work(args)


_archive_work = _In("archive")
_ratings_work = _In("ratings")
_accounts_work = _In("accounts")
_friends_work = _In("friends")
_following_work = _In("following")


def _table_work(args: argparse.Namespace) -> Work:
    from client.games import list_games
    from client.hotseat import hotseat
    from client.play import run_table, stop_game

    runs = {"games": list_games, "stop": stop_game, "hotseat": hotseat}
    return runs.get(args.command, run_table)(args)


def _parsed_first(args: argparse.Namespace) -> Work:
    raise AssertionError(f"no command {args.command}")  # `replay` and `migrate`: in _main


Arguments = Callable[[argparse.ArgumentParser], None]
"""Adds a command's own arguments to its parser."""


@dataclass(frozen=True)
class Command:
    """A command: its name and help, a function adding its own arguments, its work."""

    name: str
    help: str
    arguments: Arguments
    run: Callable[[argparse.Namespace], Work]
    interruptible: bool = False
    """Ctrl-C ends it (it may wait long: at a table, for an answer)."""
    gateway: bool = True
    """It calls the platform: --gateway and the TLS flags, after its own arguments."""
    timed: bool = False
    """A new game with a time control: the time flags, after its own arguments (`play` has
    them among its own)."""
    seats: bool = False
    """A new table with a number of seats (--seats)."""
    named: bool = False
    """It signs in as a player: --name."""


def _friends(
    name: str, about: str, arguments: Arguments, *, timed: bool = False, seats: bool = False
) -> Command:
    """A command of games with friends (client/friends.py)."""
    return Command(
        name, about, arguments, _friends_work, True, timed=timed, seats=seats, named=True
    )


def _follows(name: str, about: str, arguments: Arguments) -> Command:
    """A command of following (client/following.py)."""
    return Command(name, about, arguments, _following_work, True, named=True)


COMMANDS = (
    Command("replay", "replay a game from a move list; prints JSON", _replay_arguments,
            _parsed_first, gateway=False),
    Command("hotseat", "people at one terminal, taking turns, through the gateway",
            _hotseat_arguments, _table_work, True, gateway=False),
    Command("health", "ask a server whether it is SERVING", _no_arguments, _health_work),
    Command("play", "play a game against bots (or people) at the terminal, or rejoin one "
            "(--game ID)", _play_arguments, _table_work, True, named=True),
    Command("games", "your live and recent games on the gateway", _games_arguments, _table_work,
            True),
    Command("watch", "watch a game as a spectator (a finished one is replayed from its log)",
            _watch_arguments, _table_work, True, named=True),
    Command("stop", "end a game of bots that you watch (one `tabletop watch GAME` made)",
            _game_id_argument, _table_work, True),
    Command("register", "make an account (your games as a guest here stay yours)",
            _register_arguments, _accounts_work),
    Command("login", "log in to your account", _username_argument, _accounts_work),
    Command("logout", "end your session on this gateway", _logout_arguments, _accounts_work),
    Command("whoami", "who you play as on this gateway", _no_arguments, _accounts_work),
    Command("rating", "your (or another player's) rating in each game (rated games), Solace "
            "scores", _rating_arguments, _ratings_work),
    Command("top", "a game's leaderboard (Solace: its score table)", _top_arguments,
            _ratings_work),
    Command("history", "a player's finished games (yours by default)", _history_arguments,
            _archive_work),
    Command("export", "a month of the archive's public games, as gzipped NDJSON",
            _export_arguments, _archive_work),
    Command("live", "games being played now, best-rated first, to watch", _live_arguments,
            _archive_work),
    Command("show", "replay a finished game from the archive", _show_arguments, _archive_work),
    Command("tokens", "your account's API tokens (for your programs)", _tokens_arguments,
            _accounts_work),
    _friends("challenge", "challenge a player to a game; plays it once they accept",
             _challenge_arguments, timed=True),
    _friends("challenges", "your challenges, invites and tables; accept, decline, cancel",
             _challenges_arguments),
    _friends("invite", "a private table: prints its invite code, plays once it is full",
             _invite_arguments, timed=True, seats=True),
    _friends("join", "take a seat at a private table by its invite code", _join_arguments),
    _friends("tables", "open tables: list, join or open one", _tables_arguments, timed=True,
             seats=True),
    _friends("rematch", "offer the players of a finished game the same game again",
             _rematch_arguments),
    _follows("follow", "follow a player (accounts): see them online", _username_argument),
    _follows("unfollow", "stop following a player", _username_argument),
    _follows("following", "whom you follow: online or not, the game they play now",
             _no_arguments),
    _follows("followers", "who follows you; refuse or allow followers", _followers_arguments),
    _follows("notifications", "challenges, answers, followed players' games: as they come",
             _notifications_arguments),
    Command("migrate", "bring the database's schema up to date (operators: DATABASE_URL)",
            _migrate_arguments, _parsed_first, gateway=False),
)  # fmt: skip
"""Every command, in the order `tabletop --help` lists them."""
FRIENDLY = ("challenge", "challenges", "invite", "join", "tables", "rematch")
"""The commands of games with friends (a new game each, `args.game` the game named)."""
TIMED = ("play", *(command.name for command in COMMANDS if command.timed))
"""The commands that make a new game with a time control (`args.time_control`)."""


def _migrate(url: str, wait_seconds: float = 0.0) -> int:
    """Applies the migrations the database lacks (each once, whoever else runs it at once),
    once the database answers (waiting up to `wait_seconds` for it)."""
    if not url:
        print("no database: give --database or set DATABASE_URL", file=sys.stderr)
        return 2
    from runtime import db

    def waiting(error: str) -> None:
        print(f"waiting up to {wait_seconds:g} s for the database: {error}", file=sys.stderr)

    try:
        applied = db.migrate(url, wait_seconds, waiting)
    except Exception as error:  # a command's answer: what failed, not a traceback
        print(f"migration failed: {error}", file=sys.stderr)
        return 1
    print(f"applied {', '.join(applied)}" if applied else "the schema is up to date")
    return 0


async def _interruptible(work: Coroutine[Any, Any, int]) -> int:
    """`work`, stopped by Ctrl-C for sure: the interrupt cancels it, and again until it has
    ended (a single cancellation can be lost inside a call on Python 3.11: runtime/tasks.py),
    so that it prints how to come back and exits."""
    task = asyncio.current_task()
    assert task is not None
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, keep_cancelling, task)
    try:
        return await work
    finally:
        loop.remove_signal_handler(signal.SIGINT)


if __name__ == "__main__":
    sys.exit(main())
