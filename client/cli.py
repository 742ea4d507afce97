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
import json
import os
import re
import signal
import sys
from collections.abc import Coroutine, Sequence
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

    rp = commands.add_parser("replay", help="replay a game from a move list; prints JSON")
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

    hs = commands.add_parser(
        "hotseat", help="people at one terminal, taking turns, through the gateway"
    )
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

    hc = commands.add_parser("health", help="ask a server whether it is SERVING")
    _gateway_flag(hc)

    pl = commands.add_parser(
        "play",
        help="play a game against bots (or people) at the terminal, or rejoin one (--game ID)",
    )
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
    _gateway_flag(pl)
    pl.add_argument("--name", default=None, help=NAME_HELP)

    gl = commands.add_parser("games", help="your live and recent games on the gateway")
    gl.add_argument("--live", action="store_true", help="only games still being played")
    _gateway_flag(gl)

    wt = commands.add_parser(
        "watch", help="watch a game as a spectator (a finished one is replayed from its log)"
    )
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
    _gateway_flag(wt)
    wt.add_argument("--name", default=None, help=NAME_HELP)

    st = commands.add_parser(
        "stop", help="end a game of bots that you watch (one `tabletop watch GAME` made)"
    )
    st.add_argument("game_id", metavar="GAME_ID")
    _gateway_flag(st)

    rg = commands.add_parser(
        "register", help="make an account (your games as a guest here stay yours)"
    )
    rg.add_argument("username")
    rg.add_argument(
        "--bot", action="store_true", help="a bot account (it plays with a 'bot' API token)"
    )
    _gateway_flag(rg)
    li = commands.add_parser("login", help="log in to your account")
    li.add_argument("username")
    _gateway_flag(li)
    lo = commands.add_parser("logout", help="end your session on this gateway")
    lo.add_argument("--everywhere", action="store_true", help="end every session of the account")
    _gateway_flag(lo)
    wh = commands.add_parser("whoami", help="who you play as on this gateway")
    _gateway_flag(wh)
    rt = commands.add_parser(
        "rating",
        help="your (or another player's) rating in each game (rated games), Solace scores",
    )
    rt.add_argument(
        "game", nargs="?", default="", help="esoloe, solo, zoxso or solace (default: each)"
    )
    rt.add_argument("player", nargs="?", default="", help="a username or player id (default: you)")
    rt.add_argument("--player", dest="player_flag", default="", help="the same as PLAYER")
    _gateway_flag(rt)
    tp = commands.add_parser("top", help="a game's leaderboard (Solace: its score table)")
    tp.add_argument("game", choices=("esoloe", "solo", "zoxso", "solace"))
    tp.add_argument(
        "--day", default="", help="Solace: a deal of the day's table (today, or YYYY-MM-DD)"
    )
    tp.add_argument("--limit", type=int, default=20, help="how many places (1 to 100)")
    tp.add_argument("--me", action="store_true", help="the places around you")
    _gateway_flag(tp)
    hi = commands.add_parser("history", help="a player's finished games (yours by default)")
    hi.add_argument("player", nargs="?", default="", help="a username or player id (default: you)")
    hi.add_argument("--game", default="", choices=("", *games.names()), help="one game only")
    hi.add_argument("--outcome", default="", choices=("", "win", "loss", "draw"))
    hi.add_argument(
        "--opponent", default="", help="only games with this player (a username or player id)"
    )
    hi.add_argument("--limit", type=int, default=20, help="how many games (1 to 100)")
    _gateway_flag(hi)
    ex = commands.add_parser(
        "export", help="a month of the archive's public games, as gzipped NDJSON"
    )
    ex.add_argument("--month", required=True, help="YYYY-MM (UTC)")
    ex.add_argument("--game", default="", choices=("", *games.names()), help="one game only")
    ex.add_argument("--out", default="", help="the file (default: tabletop-YYYY-MM.ndjson.gz)")
    _gateway_flag(ex)
    lv = commands.add_parser("live", help="games being played now, best-rated first, to watch")
    lv.add_argument("game", nargs="?", default="", choices=("", *games.names()))
    lv.add_argument("--limit", type=int, default=20, help="how many games (1 to 50)")
    _gateway_flag(lv)
    sh = commands.add_parser("show", help="replay a finished game from the archive")
    sh.add_argument("game_id")
    sh.add_argument("--every", action="store_true", help="the board after every move")
    sh.add_argument("--move", type=int, default=None, help="the board after move N (0: the start)")
    sh.add_argument(
        "--text", action="store_true", help="the game as text (`tabletop replay --file` reads it)"
    )
    _gateway_flag(sh)
    tk = commands.add_parser("tokens", help="your account's API tokens (for your programs)")
    tk.add_argument("action", nargs="?", choices=("list", "create", "revoke"), default="list")
    tk.add_argument("what", nargs="?", default="", help="create: its name; revoke: its id")
    tk.add_argument(
        "--scope", action="append", choices=("play", "bot"), default=[], help="what it may do"
    )
    tk.add_argument("--days", type=int, default=0, help="how long it works (default 90)")
    _gateway_flag(tk)

    ch = commands.add_parser(
        "challenge", help="challenge a player to a game; plays it once they accept"
    )
    ch.add_argument("player", help="a player id, or an account's username")
    ch.add_argument("game", choices=games.names())
    cs = commands.add_parser(
        "challenges", help="your challenges, invites and tables; accept, decline, cancel"
    )
    cs.add_argument(
        "action", nargs="?", choices=("list", "accept", "decline", "cancel", "refuse", "allow"),
        default="list",
        help="refuse: take no challenges from now on; allow: take them again",
    )  # fmt: skip
    cs.add_argument("challenge_id", nargs="?", default="", metavar="ID")
    iv = commands.add_parser(
        "invite", help="a private table: prints its invite code, plays once it is full"
    )
    iv.add_argument("game", choices=games.names())
    jn = commands.add_parser("join", help="take a seat at a private table by its invite code")
    jn.add_argument("code")
    tb = commands.add_parser("tables", help="open tables: list, join or open one")
    tb.add_argument("words", nargs="*", metavar="[GAME] | join ID | open GAME")
    rm = commands.add_parser(
        "rematch", help="offer the players of a finished game the same game again"
    )
    rm.add_argument("game_id_of", metavar="GAME_ID")
    for friendly in (ch, iv, tb):
        friendly.add_argument("--rated", action="store_true", help="a rated game (accounts)")
        friendly.add_argument(
            "--options", type=_json_arg, default=None, help="options as a JSON object"
        )
        _time_flags(friendly)
    for friendly in (iv, tb):
        friendly.add_argument(
            "--seats", type=int, default=0, help="seats at the table (Solo: 2..10)"
        )
    fo = commands.add_parser("follow", help="follow a player (accounts): see them online")
    fo.add_argument("username")
    uf = commands.add_parser("unfollow", help="stop following a player")
    uf.add_argument("username")
    fg = commands.add_parser(
        "following", help="whom you follow: online or not, the game they play now"
    )
    fs = commands.add_parser("followers", help="who follows you; refuse or allow followers")
    fs.add_argument(
        "action", nargs="?", choices=("list", "refuse", "allow"), default="list",
        help="refuse: nobody follows you (those who do stop); allow: anyone may",
    )  # fmt: skip
    nt = commands.add_parser(
        "notifications", help="challenges, answers, followed players' games: as they come"
    )
    nt.add_argument("--all", action="store_true", help="those kept first (the last 100)")
    nt.add_argument("--count", type=int, default=0, help="stop after this many")
    for friendly in (ch, cs, iv, jn, tb, rm, fo, uf, fg, fs, nt):
        _gateway_flag(friendly)
        friendly.add_argument("--name", default=None, help=NAME_HELP)

    mg = commands.add_parser(
        "migrate", help="bring the database's schema up to date (operators: DATABASE_URL)"
    )
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

    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["migrate"]:
        migrating = mg.parse_args(argv[1:])
        return _migrate(migrating.database, migrating.wait)
    if argv[:1] == ["replay"]:
        # Options may come anywhere among the moves: `replay solo --seed 3 0:draw 1:pass`.
        return _replay(rp.parse_intermixed_args(argv[1:]))
    args = parser.parse_args(argv)
    if args.command == "rating":
        _rating_args(rt, args)
    args.gateway = gateway_address(args.gateway)
    args.tls = _tls(args)
    args.default_name = _default_name()
    timed = {"play": pl, "challenge": ch, "invite": iv, "tables": tb}.get(args.command)
    if args.command in ("challenge", "challenges", "invite", "join", "tables", "rematch"):
        args.game_id = None  # a new game (client.play.run_table reads it)
        words = getattr(args, "words", [])
        opening = words[:1] == ["open"] and len(words) == 2
        args.game = getattr(args, "game", words[1] if opening else "")
        if opening and args.game not in games.names():
            tb.error(f"no game {args.game!r}; games are: {', '.join(games.names())}")
    args.time_control = _time_control(timed, args) if timed is not None else None
    if args.command == "health":
        return asyncio.run(_health(args.gateway, args.tls))
    if args.command in ("history", "show", "export", "live"):
        from client import archive

        archived = {
            "history": archive.history,
            "show": archive.show,
            "export": archive.export,
            "live": archive.live,
        }
        return asyncio.run(archived[args.command](args))
    if args.command in ("rating", "top"):
        from client import ratings

        return asyncio.run((ratings.rating if args.command == "rating" else ratings.top)(args))
    if args.command in ("register", "login", "logout", "whoami", "tokens"):
        from client import accounts

        command = {
            "register": accounts.register,
            "login": accounts.login,
            "logout": accounts.logout,
            "whoami": accounts.whoami,
            "tokens": accounts.tokens,
        }[args.command]
        return asyncio.run(command(args))
    if args.command in ("challenge", "challenges", "invite", "join", "tables", "rematch"):
        from client import friends

        command = {
            "challenge": friends.challenge,
            "challenges": friends.challenges,
            "invite": friends.invite,
            "join": friends.join,
            "tables": friends.tables,
            "rematch": friends.rematch,
        }[args.command]
        try:
            return asyncio.run(_interruptible(command(args)))
        except (KeyboardInterrupt, asyncio.CancelledError):
            return 130
    if args.command in ("follow", "unfollow", "following", "followers", "notifications"):
        from client import following

        command = {
            "follow": following.follow,
            "unfollow": following.unfollow,
            "following": following.following,
            "followers": following.followers,
            "notifications": following.notifications,
        }[args.command]
        try:
            return asyncio.run(_interruptible(command(args)))
        except (KeyboardInterrupt, asyncio.CancelledError):
            return 130
    if args.command in ("play", "watch", "games", "stop", "hotseat"):
        from client.games import list_games
        from client.hotseat import hotseat
        from client.play import run_table, stop_game

        runs = {"games": list_games, "stop": stop_game, "hotseat": hotseat}
        work = runs.get(args.command, run_table)(args)
        try:
            return asyncio.run(_interruptible(work))
        except (KeyboardInterrupt, asyncio.CancelledError):
            return 130
    raise AssertionError(f"no command {args.command}")


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
