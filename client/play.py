"""Playing and watching games from the terminal, through the gateway only.

A `Table` follows one game for one seat (or a spectator): a Watch stream prints every move as it
comes, in sentences, and shows the board when it is the seat's turn, while typed lines are read at
any time, so that in a game played out of turn (`games.Game.out_of_turn`: Solo's jump-ins) a seat
can act during other seats' turns (the client says the moment it may). Input is read line by line
from any stream (a terminal, a pipe, a file), which is how the tests script whole games. What a
typed line means is decided by `client.interpret.interpret`, a pure function. Whatever differs
between games (the board, the sentences, the shorthand) is the game's board
(`games/<game>/board.py`, found with `client.boards.board_of`).

Commands at the table (any case): a move in the game's notation (or its shorthand: in Solo a bare
card plays it);
`help` (or `moves`) lists the legal moves; `board`; `clock` (the time each seat has left, in a
timed game); `wait` (until it is your turn: for scripts);
`auto` (from now on play the first legal move whenever it is your turn); `resign` (asks first,
as does a move that ends the game by the player's choice: the board's `confirm`, Solace's
`stop`); `quit` (leave; the game goes on and `tabletop play --game ID` takes you back to your
seat).

In a timed game the clocks (`client.clocks`) are shown with the board and when the player's own
time starts or stops running, the player is warned once per turn when little time is left to
move (`client.clocks.hurry_at`), and a seat whose time ran out is told so: it forfeited, or a bot
plays it from then on and its player watches the rest.

The same table serves people sharing a terminal (`client.hotseat`): it then acts for whichever
seat is to move.
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import os
import sys
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

import grpc
from rich.console import Console

import games
from client.boards import board_of
from client.clocks import clock_line, deadline_of, format_duration, hurry_at, running_seats
from client.games import my_seat
from client.identity import Account
from client.interpret import Command, Nothing, Send, Tell, command_of, interpret
from client.narrate import (
    actor_name,
    actor_names,
    describe_result,
    describe_update,
    seat_label,
    short_result,
)
from client.notifications import told_meanwhile
from client.ratings import change_line, seats_line
from client.runner import FAILURES, UsageError, failed
from client.session import Session
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc
from wire import options as wire_options
from wire.api import api
from wire.clock import DEAL_OF_THE_DAY
from wire.errors import error_info

CALL_TIMEOUT = 10.0
RATING_CHANGE_WAIT = 5.0
"""How long the end of a rated game waits for its rating change to be counted."""
WATCH_RETRIES = 5
RATE_RETRIES = 20
UNAVAILABLE_RETRIES = 6
"""Calls answered UNAVAILABLE are tried again this many times, over about 9 s in all."""
RECENT_MOVES = 6
"""Moves shown again when a player sits back down at a game."""

COMMANDS = (
    "commands: a move in the game's notation | help, moves: legal moves | board | "
    "clock: the time left | wait: until your turn | auto: play the first legal move on each turn | "
    "resign (asks first) | quit: leave, the game goes on"
)


def now_ms() -> int:
    return int(time.time() * 1000)


def rejoin_hint(game_id: str) -> str:
    return f"rejoin with `tabletop play --game {game_id}`"


def left_message(game_id: str) -> str:
    """What a player who leaves a running game is told (quit, end of input, Ctrl-C)."""
    return f"you left game {game_id}; it goes on: {rejoin_hint(game_id)}"


def read_lines(stream: TextIO) -> asyncio.Queue[str | None]:
    """The stream's lines as they are typed, then None at its end.

    A daemon thread reads the raw file descriptor: unlike a buffered `for line in stream`, a
    read still blocked on a terminal when the game ends holds no lock that exiting must take.
    """
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def post(item: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # a closed loop: the client has left
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def pump() -> None:
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        fd = stream.fileno()
        try:
            while chunk := os.read(fd, 4096):
                pending += decoder.decode(chunk)
                *lines, pending = pending.split("\n")
                for line in lines:
                    post(line.strip())
        except OSError:
            pass
        if pending.strip():
            post(pending.strip())
        post(None)

    threading.Thread(target=pump, name="tabletop-input", daemon=True).start()
    return queue


# --------------------------------------------------------------------------------------------
# Options


def game_options(game: str, options: Mapping[str, Any] | None) -> lobby_pb2.GameOptions:
    """Options given as JSON (`{"players": 2, "mode": "rounds", "max_plies": 100}`) as the
    lobby's GameOptions (wire.options.game_options), or a UsageError saying what is wrong."""
    try:
        return wire_options.game_options(game, options)
    except ValueError as error:
        raise UsageError(str(error)) from None


def with_bots(game: str, options: Mapping[str, Any] | None, bots: int | None) -> dict[str, Any]:
    """The options for a table of one player and `bots` bots (None: the game's usual count)."""
    merged = dict(options or {})
    if bots is None:
        return merged
    rules = games.rules(game)
    seats = bots + 1
    if "players" in rules.default_options():
        if not rules.min_seats <= seats <= rules.max_seats:
            raise UsageError(
                f"{game} seats {rules.min_seats}..{rules.max_seats} players: "
                f"--bots must be {rules.min_seats - 1}..{rules.max_seats - 1}"
            )
        merged["players"] = seats
    elif seats != rules.max_seats:
        raise UsageError(
            f"{game} is played by {rules.max_seats}: --bots must be {rules.max_seats - 1}"
        )
    return merged


def game_of_id(game_id: str) -> str:
    """The game kind a game id names (ids start with it: `zoxso-4f1c...`)."""
    kind = game_id.split("-", 1)[0]
    if kind not in games.names() or "-" not in game_id:
        raise UsageError(
            f"{game_id!r} is not a game id; ids start with the game's name, e.g. solo-4f1c..., "
            "and `tabletop games` lists yours"
        )
    return kind


# --------------------------------------------------------------------------------------------
# Getting a seat


async def bot_game(
    session: Session,
    game: str,
    options: lobby_pb2.GameOptions,
    *,
    level: str,
    seat: int | None = None,
    watch_only: bool = False,
    time_control: common_pb2.TimeControl | None = None,
    rated: bool = False,
    pace_ms: int | None = None,
) -> tuple[str, int]:
    """A new game with bots in the other seats (or in all of them): its id and the caller's seat.
    `time_control` None: the game's default; `pace_ms` None: the bots' default pace."""
    request = lobby_pb2.PlayAgainstBotsRequest(
        game=game, options=options, level=level, watch_only=watch_only, time_control=time_control,
        rated=rated,
    )  # fmt: skip
    if seat is not None:
        request.seat = seat
    if pace_ms is not None:
        request.bot_pace_ms = pace_ms
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    reply = await lobby.PlayAgainstBots(request, metadata=session.metadata, timeout=CALL_TIMEOUT)
    return reply.status.game_id, reply.seat if reply.HasField("seat") else -1  # unset: watch_only


async def find_match(
    session: Session,
    game: str,
    options: lobby_pb2.GameOptions,
    *,
    level: str,
    bots_after: int,
    console: Console,
    time_control: common_pb2.TimeControl | None = None,
    rated: bool = False,
) -> tuple[str, int]:
    """Queue for a game with other people (bots fill the empty seats after `bots_after` seconds,
    or never when it is 0) and wait until the matchmaker seats the caller. `time_control` None:
    the game's default (only tickets asking for the same one are matched)."""
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    request = lobby_pb2.FindMatchRequest(
        game=game, options=options, level=level, time_control=time_control, rated=rated
    )
    if bots_after > 0:
        request.bots = lobby_pb2.BOT_FILL_AFTER
        request.bots_after_seconds = bots_after
    queued = await lobby.FindMatch(request, metadata=session.metadata, timeout=CALL_TIMEOUT)
    console.print(f"waiting for other players (ticket {queued.ticket_id}); Ctrl-C gives up")
    ticket = queued
    try:
        async for ticket in lobby.WatchTicket(
            lobby_pb2.WatchTicketRequest(ticket_id=queued.ticket_id), metadata=session.metadata
        ):
            if ticket.state != lobby_pb2.TICKET_STATE_QUEUED:
                break
    except asyncio.CancelledError:
        await lobby.CancelTicket(
            lobby_pb2.CancelTicketRequest(ticket_id=queued.ticket_id),
            metadata=session.metadata,
            timeout=CALL_TIMEOUT,
        )
        console.print("you stopped waiting; the ticket is cancelled")
        raise
    if ticket.state != lobby_pb2.TICKET_STATE_MATCHED:
        state = lobby_pb2.TicketState.Name(ticket.state).removeprefix("TICKET_STATE_").lower()
        raise UsageError(f"no match: the ticket was {state}")
    return ticket.game_id, ticket.seat if ticket.HasField("seat") else -1


# --------------------------------------------------------------------------------------------
# The table


@dataclass(frozen=True)
class Pending:
    """What waits for a `yes`: a resignation (no `move`), or a move that ends the game by the
    player's own choice (Solace's `stop`), with the hint to show if the server refuses it."""

    question: str
    move: str = ""
    hint: str = ""


class Table:
    """One game followed by one seat (`seat` -1: a spectator, who sees the public view).

    `hotseat`: people share the terminal and every seat is theirs (`tabletop hotseat`, for a
    game that hides nothing): `seat` is always the seat to move, the game is told as a
    spectator sees it, and `names` (one per seat) call the seats instead of the one login that
    holds them all. `started_to_watch`: the client made this game of bots for a spectator to
    watch (`tabletop watch GAME`), which goes on when the spectator leaves."""

    def __init__(
        self,
        session: Session,
        game: str,
        game_id: str,
        seat: int,
        console: Console,
        *,
        hotseat: bool = False,
        names: Sequence[str] = (),
        started_to_watch: bool = False,
    ) -> None:
        self.session = session
        self.game = game
        self.game_id = game_id
        self.seat = seat
        self.console = console
        self.stub = session.game(game)
        self.board = board_of(game)
        self.out_of_turn = games.get(game).out_of_turn
        """Seats may act out of turn: ask LegalMoves at every version, say when one may act."""
        self.status = common_pb2.GameStatus()
        self.auto = False
        self.ready = asyncio.Event()
        """Set while the seat may act in turn, or once the game is over (what `wait` waits for)."""
        self.hotseat = hotseat
        self.names = list(names)
        self.started_to_watch = started_to_watch
        self.pending: Pending | None = None
        """What waits for a `yes` (after `resign`, or a move that ends the game), until the next
        line says whether it is meant."""
        self.left = False
        """True once the player left a running game (quit, end of input), or the spectator
        stopped watching (quit): nothing more is shown."""
        self._shown = -1
        self._auto_version = -1
        self._offered_at = -1
        self._offered: list[str] = []
        self._final_events: Sequence[Any] = ()
        self._before: common_pb2.GameStatus | None = None
        """The status of the last update told (names a seat as it was before a bot took it)."""
        self._deadline: int | None = None
        """When the seat's time to move runs out (ms), while it runs."""
        self._warning: asyncio.TimerHandle | None = None
        self._running: tuple[int, ...] = ()
        """The seats whose time ran at the last update told (their clocks are shown again when
        this changes for the player's own seat)."""
        self._told = -1
        """The last version the Watch stream told."""
        self._progress = asyncio.Event()
        """Set when the stream tells a version (or ends)."""
        self._follower: asyncio.Task[None] | None = None

    @property
    def me(self) -> int:
        """The seat the game is told to, `you` in sentences (-1: as a spectator sees it, which
        is how a table shared by several people tells it)."""
        return -1 if self.hotseat else self.seat

    def say(self, text: str, style: str | None = None) -> None:
        self.console.print(text, style=style)

    async def _call(self, method: str, request: Any) -> Any:
        """A unary call of the game's service. A RATE_LIMITED refusal is waited out as the
        server asks (auto play against quick bots reaches the per-player rate); UNAVAILABLE (the
        gateway or a service restarting, a connection lost) is tried again a few times, waiting
        longer each time. Retrying a Play is safe: its request id makes the server apply it
        once."""
        limited = unavailable = 0
        while True:
            try:
                return self._named(
                    await getattr(self.stub, method)(
                        request, metadata=self.session.metadata, timeout=CALL_TIMEOUT
                    )
                )
            except grpc.aio.AioRpcError as error:
                reason, info = error_info(error)
                if reason == "RATE_LIMITED" and limited < RATE_RETRIES - 1:
                    limited += 1
                    await asyncio.sleep(int(info.get("retry_after_ms", "100")) / 1000)
                elif (
                    error.code() == grpc.StatusCode.UNAVAILABLE
                    and unavailable < UNAVAILABLE_RETRIES
                ):
                    unavailable += 1
                    await asyncio.sleep(min(2.0, 0.25 * 2**unavailable))
                else:
                    raise

    def _seat_of(self, request: Any) -> Any:
        if self.seat >= 0:
            request.seat = self.seat
        return request

    def _watch_request(self, from_version: int) -> common_pb2.WatchRequest:
        """A Watch of the game from `from_version`: the seat's, or the public one (a spectator's,
        and a shared table's, whose seat changes with every move)."""
        public = self.seat < 0 or self.hotseat
        request = common_pb2.WatchRequest(
            game_id=self.game_id, from_version=from_version, public=public
        )
        return request if public else self._seat_of(request)

    def _named(self, message: Any) -> Any:
        """`message` (a reply or a Watch update) with its seats called by `names`, if given."""
        status = getattr(message, "status", None)
        if self.names and status is not None:
            for index, seat in enumerate(status.seats):
                if index < len(self.names):
                    seat.name = self.names[index]
        return message

    # ---- what the table knows

    def _learn(self, status: common_pb2.GameStatus) -> None:
        if status.version < self.status.version:
            return  # an answer that crossed a newer one
        self.status.CopyFrom(status)
        if self.hotseat and status.to_act and not status.finished:
            self.seat = status.to_act[0]  # every seat is the table's: the one to move acts
        if status.finished or self.my_turn:
            self.ready.set()
        else:
            self.ready.clear()
        self._watch_time()

    def _watch_time(self) -> None:
        """Warn the player once per turn when little time is left to move (`hurry_at`)."""
        deadline = warn_at = None
        if self.seat >= 0 and not self.status.finished:
            deadline = deadline_of(self.status, self.seat)
            warn_at = hurry_at(self.status, self.seat)
        if deadline == self._deadline:
            return
        self._deadline = deadline
        if self._warning is not None:
            self._warning.cancel()
            self._warning = None
        if deadline is not None and warn_at is not None:
            delay = max(0, warn_at - now_ms()) / 1000
            self._warning = asyncio.get_running_loop().call_later(delay, self._warn, deadline)

    def _warn(self, deadline: int) -> None:
        self._warning = None
        if deadline == self._deadline:
            left = format_duration(deadline - now_ms())
            self.say(f"hurry: {left} left to move", style="bold red")

    def show_clocks(self, *, always: bool = False) -> None:
        """Print the clocks of a timed game (`always`: say so for an untimed one)."""
        names = actor_names(self.game, self.status, self.me)
        line = clock_line(self.status, self.me, now_ms(), names)
        if line:
            self.say(line, style="dim")
        elif always:
            self.say("this game is untimed: nobody can run out of time")

    def _lose_seat(self) -> None:
        """A bot took the seat over (its time ran out): the player watches, until they come
        back with `tabletop play --game ID`, which takes the seat back."""
        if self.seat < 0:
            return
        self.seat = -1
        self.auto = False
        self._watch_time()
        self.ready.set()
        if self.status.finished:
            return
        self.say(
            "a bot plays your seat: you are watching it now; to take your seat back, quit and "
            f"`tabletop play --game {self.game_id}`",
            style="bold",
        )

    def _seat_lost(self, reason: str | None) -> bool:
        """Whether a refusal says that a bot took the seat over (after a timeout, the only way
        a seat stops being its player's); if so, watch from now on."""
        bots = self.status.time_control.on_timeout == common_pb2.TIMEOUT_BOT
        if reason != "NOT_YOUR_SEAT" or self.seat < 0 or not bots:
            return False
        self._lose_seat()
        return True

    @property
    def my_turn(self) -> bool:
        return not self.status.finished and self.seat in self.status.to_act

    async def _view(self) -> Any:
        request = common_pb2.GetViewRequest(game_id=self.game_id, public=self.seat < 0)
        reply = await self._call("GetView", self._seat_of(request))
        self._learn(reply.status)
        return reply

    async def _legal(self) -> Any:
        request = common_pb2.LegalMovesRequest(game_id=self.game_id)
        return await self._call("LegalMoves", self._seat_of(request))

    async def show_board(self, *, at: int | None = None) -> bool:
        """Draw the board (and the clocks of a running timed game); whether it was drawn. With
        `at`, only while the game is still at that version (the board then belongs to that move;
        a replay from the log draws no later board too early) and only once per version."""
        if at is not None and at < self.status.version:
            return False  # a move from the log, already followed by others: no RPC needed
        reply = await self._view()
        version = reply.status.version
        if at is not None and (version != at or version <= self._shown):
            return False
        self._shown = version
        self.console.print(self.board.draw(reply, self.me))
        if not self.status.finished:
            self.show_clocks()
        return True

    def whose_turn(self) -> str:
        """`your turn`, `strong bot to move`, or the result once the game is over."""
        if self.status.finished:
            return "game over. " + describe_result(self.status, self.me, self._final_events)
        if self.my_turn:
            return self.turn_prompt()
        acting = [actor_name(self.game, self.status, s, self.me) for s in self.status.to_act]
        return f"{', '.join(acting) or 'nobody'} to move"

    def turn_prompt(self) -> str:
        """What the seat is told when its turn begins (at a shared table: who is to move)."""
        if self.hotseat:
            return f"{self.acting_name()} to move: type a move (help lists them)"
        return "your turn: type a move (help lists them)"

    def acting_name(self) -> str:
        """Who acts at this table: `you`, or at a shared table the seat to move."""
        return actor_name(self.game, self.status, self.seat, self.me)

    def leave_message(self) -> str:
        """What a player (or spectator) who leaves the running game is told (quit, the end of
        the input, Ctrl-C)."""
        if self.seat < 0:
            text = f"stopped watching game {self.game_id}"
            if self.started_to_watch and not self.status.finished:
                text += (
                    "; it goes on: the bots play it to its end, and it counts among your live "
                    f"games until then (`tabletop stop {self.game_id}` ends it; "
                    f"`tabletop watch {self.game} {self.game_id}` watches it again)"
                )
            return text
        if self.hotseat:
            return (
                f"you left game {self.game_id}; nobody plays it now (a game played at one "
                "terminal cannot be rejoined)"
            )
        return left_message(self.game_id)

    async def show_moves(self) -> None:
        if self.seat < 0:
            self.say("you are watching: no moves. " + COMMANDS)
            return
        legal = await self._legal()
        if legal.moves:
            self.say(f"legal moves ({len(legal.moves)}): " + ", ".join(legal.moves))
        else:
            self.say(f"no legal move now ({self.whose_turn()})")
        self.say(COMMANDS, style="dim")
        if self.board.help_note:
            self.say(self.board.help_note, style="dim")

    # ---- acting

    async def play(self, move: str, expected_version: int | None = None, hint: str = "") -> bool:
        """Send a move; a refusal is printed with the server's reason and message (and `hint`),
        except a stale `expected_version` (auto play lost a race: the next update brings a new
        turn)."""
        request = common_pb2.PlayRequest(
            game_id=self.game_id, move=move, request_id=uuid.uuid4().hex
        )
        if expected_version is not None:
            request.expected_version = expected_version
        try:
            reply = await self._call("Play", self._seat_of(request))
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            if expected_version is not None and reason == "STALE_VERSION":
                return False
            if self._seat_lost(reason):
                return False
            if reason == "TIME_UP":
                self.say("Too late: your time ran out before the move arrived.", style="bold red")
                return False
            if reason == "STALE_VERSION":
                text = f"{move} came too late: the game moved on first"
            else:
                text = f"refused by the server ({reason or error.code().name}): {error.details()}"
            self.say(text + (f"; {hint}" if hint else ""), style="bold red")
            return False
        self._learn(reply.status)
        return True

    async def resign(self) -> bool:
        who = self.acting_name() if self.hotseat else "you"
        request = common_pb2.ResignRequest(game_id=self.game_id, request_id=uuid.uuid4().hex)
        try:
            reply = await self._call("Resign", self._seat_of(request))
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            self.say(f"resign refused ({reason}): {error.details()}", style="bold red")
            return False
        self._learn(reply.status)
        self.say(f"{who} resigned")
        return True

    async def pass_jump_in(self) -> bool:
        """Say "I pass" at the version shown (PassJumpIn): no jump-in from this seat now. Once
        every person at the table has passed, the bots act without waiting out the window."""
        version = self.status.version
        request = common_pb2.PassJumpInRequest(game_id=self.game_id, version=version)
        try:
            reply = await self._call("PassJumpIn", self._seat_of(request))
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            self.say(f"pass refused ({reason}): {error.details()}", style="bold red")
            return False
        if reply.window_ended:
            self.say(f"you pass at #{version}: the bots go on now", style="dim")
        else:
            self.say(
                f"you pass at #{version}: the bots go on once everyone at the table has passed",
                style="dim",
            )
        return True

    async def _autoplay(self) -> None:
        if not self.auto or not self.my_turn or self.status.version == self._auto_version:
            return
        self._auto_version = self.status.version
        legal = await self._legal()
        if legal.moves:
            self.say(f"auto: {legal.moves[0]}", style="dim")
            await self.play(legal.moves[0], expected_version=legal.version)

    async def command(self, line: str) -> bool:
        """Carry out one typed line; False when the player leaves the table. A call the server
        refuses or cannot answer is reported, never raised."""
        try:
            return await self._command(line)
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            if self._seat_lost(reason):
                return True
            text = f"the server did not answer ({reason or error.code().name}): {error.details()}"
            if error.code() == grpc.StatusCode.UNAUTHENTICATED:
                text += (
                    "; your login has run out (a login lasts a day, and a new login is a new "
                    "player, who holds no seat here)"
                )
            self.say(text, style="bold red")
            return True

    async def _command(self, line: str) -> bool:
        if self.pending is not None:
            pending, self.pending = self.pending, None
            if command_of(line) == "yes":
                return await self._confirmed(pending)
            not_done = f"{pending.move} not played" if pending.move else "not resigned"
            self.say(f"{not_done}; the game goes on")
            if command_of(line) == "no":
                return True
        verb = command_of(line)
        if verb == "quit":
            if self.seat >= 0 and not self.status.finished:
                await self._catch_up()
                self.say(self.leave_message())
                self.left = True
            elif self.seat < 0:
                self.say(self.leave_message())
                self.left = True
            return False
        if verb == "help":
            await self.show_moves()
            return True
        if verb == "board":
            await self.show_board()
            if self.seat >= 0:
                self.say(self.whose_turn())
            return True
        if verb == "clock":
            self.show_clocks(always=True)
            return True
        if self.seat < 0:
            if line.strip():
                self.say(f"you are watching: {line.strip()[:40]!r} is not a spectator command")
            return True
        if self.status.finished and verb != "wait":
            if line.strip():
                self.say(f"game {self.game_id} is over: " + short_result(self.status, self.seat))
            return True
        if verb == "resign":
            who = f" for {self.acting_name()}" if self.hotseat else ""
            self._ask(Pending(f"resign game {self.game_id}{who}?"))
        elif verb == "auto":
            self.auto = True
            self.say("auto: playing the first legal move on each of your turns")
            await self._autoplay()
        elif verb == "wait":
            await self.ready.wait()
        elif verb in ("yes", "no"):
            self.say("nothing to confirm")
        elif line.strip().lower() == "j" and (jump := self.board.quick(self._offered)):
            await self.play(jump)  # one keystroke: a jump-in is a race
        elif line.strip().lower() == "n" and self.out_of_turn:
            await self.pass_jump_in()
        elif line.strip():
            await self._move(line)
        return True

    def _ask(self, pending: Pending) -> None:
        self.pending = pending
        self.say(f"{pending.question} type yes")

    async def _confirmed(self, pending: Pending) -> bool:
        """Carry out what the player said `yes` to; False when it ended the game."""
        if not pending.move:
            return not await self.resign()
        played = await self.play(pending.move, hint=pending.hint)
        return not (played and self.status.finished)

    async def _move(self, line: str) -> None:
        legal, view = await asyncio.gather(self._legal(), self._view())
        action = interpret(line, self.game, list(legal.moves), view)
        if isinstance(action, Send):
            if action.note:
                self.say(action.note, style="dim")
            question = self.board.confirm(action.move, view)
            if question:
                self._ask(Pending(question, action.move, action.hint))
                return
            await self.play(action.move, hint=action.hint)
        elif isinstance(action, Tell):
            self.say(action.text)
        elif isinstance(action, Command):  # already handled above; kept for completeness
            self.say(f"{action.name}: type it alone on a line")
        else:
            assert isinstance(action, Nothing)

    # ---- following the game

    async def follow(self, from_version: int) -> None:
        """Print each move from `from_version` on until the game ends; resume after a dropped
        stream from the next version (the API's promise: no gap, no duplicate)."""
        try:
            await self._follow(from_version)
        finally:
            self._progress.set()

    async def _follow(self, from_version: int) -> None:
        failures = 0
        while True:
            try:
                async for update in self.stub.Watch(
                    self._watch_request(from_version), metadata=self.session.metadata
                ):
                    failures = 0
                    from_version = update.envelope.version + 1
                    await self._on_update(self._named(update))
                return
            except grpc.aio.AioRpcError as error:
                failures += 1
                retry = error.code() in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                )
                if not retry or failures > WATCH_RETRIES:
                    raise
                self.say(f"connection lost ({error.details()}); reconnecting")
                await asyncio.sleep(0.5 * failures)

    def _tell(self, update: Any) -> None:
        """Say what a Watch message brings, in words."""
        version = update.envelope.version
        before = self._before
        if before is not None and before.version != version - 1:
            before = None
        self.say(describe_update(self.game, update, self.me, before))
        self._before = update.status

    async def _on_update(self, update: Any) -> None:
        try:
            await self._follow_update(update)
        finally:
            self._told = max(self._told, update.envelope.version)
            self._progress.set()

    async def _follow_update(self, update: Any) -> None:
        self._tell(update)
        self._learn(update.status)
        event = update.envelope.table_event
        if event.outcome == common_pb2.TIMEOUT_BOT and event.seat == self.seat:
            self._lose_seat()  # its time ran out (a forfeit ends the game: said above)
        version = update.envelope.version
        if update.status.finished:
            self._final_events = list(update.events)
            return
        live = version >= self.status.version  # nothing newer is known yet
        clocked = False  # the clocks were shown (with the board)
        if self.seat < 0:
            clocked = await self.show_board(at=version)
        elif self.my_turn:
            self._offered = []
            if self.auto:
                await self._autoplay()
            elif live:
                if not await self.show_board(at=version):
                    self.show_clocks()
                clocked = True
                await self._your_turn()
        elif self.out_of_turn and not self.auto and live:
            await self._offer_out_of_turn()
        if live:
            self._clocks_on_turn_change(shown=clocked)

    def _clocks_on_turn_change(self, *, shown: bool) -> None:
        """Show the clocks once when the player's own time starts or stops running (the turn
        comes to them or leaves them), not after every move: the board shows them on the
        player's turn, and `clock` at any time. `shown`: they were just shown."""
        running = running_seats(self.status)
        changed = running != self._running
        mine = self.seat >= 0 and self.seat in (*running, *self._running)
        self._running = running
        if changed and mine and not shown:
            self.show_clocks()

    async def _your_turn(self) -> None:
        self.say(self.turn_prompt(), style="bold")
        if not self.board.moves_on_turn:
            return
        legal = await self._legal()
        note = self.board.turn_note(list(legal.moves))
        if note:
            self.say(note, style="bold")

    async def _offer_out_of_turn(self) -> None:
        """Tell the player the moment they may act out of turn (a Solo jump-in, S11): only
        LegalMoves shows it, since such a chance can be private (it tells a card of the hand)."""
        version = self.status.version
        if version == self._offered_at:
            return
        self._offered_at = version
        legal = await self._legal()
        moves = list(legal.moves) if legal.version == self.status.version else []
        if moves == self._offered:
            return  # the same chance, still open: said already
        self._offered = moves
        for line in self.board.offer(moves):
            self.say(line, style="bold")

    async def _catch_up(self) -> None:
        """Before a player leaves: let the stream tell the moves the table knew of when they
        left (their own last move, say), for a moment at most."""
        follower = self._follower
        if follower is None:
            return
        known = self.status.version

        async def told() -> None:
            while self._told < known and not follower.done():
                self._progress.clear()
                await self._progress.wait()

        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(told(), CALL_TIMEOUT)

    async def recent_moves(self, version: int) -> None:
        """Print the last moves up to `version` (a player sitting back down sees where the game
        is), from the game's log."""
        start = max(1, version - RECENT_MOVES + 1)
        if version < start:
            self.say("no move has been played yet")
            return
        self.say(f"the last moves (of {version}):" if start > 1 else "the moves so far:")
        stream = self.stub.Watch(self._watch_request(start), metadata=self.session.metadata)
        try:
            async for update in stream:
                self._tell(self._named(update))
                if update.status.finished:
                    self._final_events = list(update.events)
                if update.envelope.version >= version:
                    break
        finally:
            stream.cancel()

    async def run(self, lines: asyncio.Queue[str | None], *, mode: str = "new") -> int:
        """Follow the game and carry out typed lines until it ends or the player leaves.

        `mode`: "new" shows the game as it is now; "watch" shows every move since the game's
        creation first (a finished game is replayed from its log); "rejoin" shows the last moves,
        the board and whose turn it is."""
        if mode == "watch":
            await self._view()  # where the game is now: the moves before it are its log
            start_version = 0
        elif mode == "rejoin":
            await self._view()
            await self.recent_moves(self.status.version)
            await self.show_board()
            start_version = self.status.version + 1
            if self.status.finished:
                self.say(self.whose_turn(), style="bold")
                await self._say_rating_change()
                return 0
            self._say_ratings()
            if self.my_turn:
                await self._your_turn()
            else:
                self.say(self.whose_turn())
                if self.out_of_turn:
                    await self._offer_out_of_turn()
        else:
            await self.show_board()
            start_version = self.status.version + 1
            self._say_ratings()
            if self.my_turn:
                await self._your_turn()
        self._before = common_pb2.GameStatus()
        self._before.CopyFrom(self.status)  # the version before the first one followed
        self._told = start_version - 1
        self._running = running_seats(self.status)
        follower = asyncio.create_task(self.follow(start_version))
        self._follower = follower
        try:
            while not follower.done():
                line_task = asyncio.create_task(lines.get())
                await asyncio.wait({line_task, follower}, return_when=asyncio.FIRST_COMPLETED)
                if not line_task.done():
                    line_task.cancel()
                    break
                line = line_task.result()
                if line is None:  # end of input: a spectator or an auto player sees it out
                    if self.seat < 0 or self.auto:
                        await follower
                    elif not self.status.finished:
                        await self._catch_up()
                        self.say(self.leave_message())
                        self.left = True
                    break
                if not await self.command(line):
                    break
            if not self.left and not follower.done():  # resigned: see the final moves
                await asyncio.wait({follower}, timeout=CALL_TIMEOUT)
            if follower.done():
                follower.result()  # a stream that failed for good raises here
        finally:
            follower.cancel()
            if self._warning is not None:
                self._warning.cancel()
        if self.status.finished:
            if self._shown < self.status.version:
                await self.show_board()
            self.say(self.whose_turn(), style="bold")
            await self._say_rating_change()
        return 0

    def _say_ratings(self) -> None:
        """At a rated game: each seat's rating when the game was made."""
        if self.status.rated:
            self.say(seats_line(self.status, actor_names(self.game, self.status, self.me)))

    async def _say_rating_change(self) -> None:
        """At the end of a rated game the player sat at: what it did to their rating, once the
        platform has counted it (a moment after the end); if that takes longer, where to look."""
        if not self.status.rated or self.seat < 0 or self.hotseat:
            return
        request = lobby_pb2.GetRatingChangeRequest(game_id=self.game_id)
        deadline = time.monotonic() + RATING_CHANGE_WAIT
        with contextlib.suppress(grpc.aio.AioRpcError):
            while True:
                reply = await self.session.lobby.GetRatingChange(
                    request, metadata=self.session.metadata, timeout=CALL_TIMEOUT
                )
                if reply.counted:
                    line = change_line(self.game, reply, self.seat)
                    if line is not None:
                        self.say(line)
                    return
                if time.monotonic() >= deadline:
                    break
                await asyncio.sleep(0.25)
        self.say(f"your rating change is counted in a moment: `tabletop rating {self.game}`")


# --------------------------------------------------------------------------------------------
# The commands


def make_console() -> Console:
    # Server text (moves, events, messages) is never read as rich markup: `[r5]` is a card list.
    return Console(highlight=False, markup=False, soft_wrap=True)


Seating = Callable[[Session, Account, Console], Awaitable[tuple[str, str, int, str]]]
"""How a command gets its seat: the game, game id, seat and `Table.run`'s mode."""


async def run_table(args: argparse.Namespace, seating: Seating | None = None) -> int:
    """`tabletop play` and `tabletop watch`: sign in, get a seat (or a game to watch), follow it;
    with `seating`, a command that gets its seat another way (client/friends.py).

    Ctrl-C (the task is cancelled) prints how to come back before it ends the program."""
    console = make_console()
    session = Session(args.gateway, tls=args.tls)
    account = Account(session, args.name, args.default_name)
    fresh: asyncio.Task[None] | None = None
    told: asyncio.Task[None] | None = None
    at = ""  # the game the player sits at (or watches), once known

    async def seated() -> tuple[Table, str]:
        nonlocal fresh, told, at
        # before any call: a usage error needs no server
        options = None if seating else _checked_options(args)
        await account.sign_in()
        session.open_stream()  # the table's calls and events on one stream (client/link.py)
        fresh = asyncio.create_task(account.keep_fresh())
        told = asyncio.create_task(told_meanwhile(session, console, lambda: at))
        if seating is None:
            game, game_id, seat, mode = await _seat(args, session, account, console, options)
        else:
            game, game_id, seat, mode = await seating(session, account, console)
        at = game_id
        names = f", playing as {account.name}" if account.name else ""
        started_to_watch = seat < 0 and not args.game_id  # theirs to stop
        if started_to_watch:
            console.print(
                f"watching {game} game {game_id}; `tabletop stop {game_id}` ends it. A new game "
                f"of bots only, started for you to watch{_options_note(args.options, game)}: it "
                "counts among your live games until it ends, and it goes on if you stop watching"
            )
        elif seat < 0:
            console.print(f"watching {game} game {game_id}")
        elif mode == "rejoin":
            console.print(f"{game} game {game_id}, you are back in {seat_label(game, seat)}{names}")
        else:
            console.print(
                f"{game} game {game_id}, you are {seat_label(game, seat)}{names}; "
                f"{rejoin_hint(game_id)}; watch it with `tabletop watch {game} {game_id}`"
            )
        table = Table(session, game, game_id, seat, console, started_to_watch=started_to_watch)
        return table, mode

    try:
        return await at_table(args.command, console, seated)
    finally:
        for task in (fresh, told):
            if task is not None:
                task.cancel()
        await session.close()


async def at_table(
    command: str,
    console: Console,
    seated: Callable[[], Awaitable[tuple[Table, str]]],
    lines: asyncio.Queue[str | None] | None = None,
) -> int:
    """Sit at a table (`seated` gives it, and how to open it: `Table.run`'s mode) and carry out
    the typed `lines` (default: the standard input) until the game ends or the player leaves.
    What goes wrong is said as `tabletop COMMAND: ...`, with the exit status: 2 for a request
    that cannot be made, 1 for a refusal or a lost connection. Ctrl-C (the task is cancelled)
    says how to come back (or that the game goes on) before it ends the program."""
    table: Table | None = None
    try:
        table, mode = await seated()
        return await table.run(lines or read_lines(sys.stdin), mode=mode)
    except FAILURES as error:
        return failed(command, error)
    except asyncio.CancelledError:  # Ctrl-C
        if table is not None and (table.seat < 0 or not table.status.finished):
            console.print("\n" + table.leave_message())
        raise


def lines_of(texts: Sequence[str]) -> asyncio.Queue[str | None]:
    """`texts` as typed lines, then the end of the input."""
    queue: asyncio.Queue[str | None] = asyncio.Queue()
    for text in texts:
        queue.put_nowait(text)
    queue.put_nowait(None)
    return queue


def _options_note(options: Mapping[str, Any] | None, game: str) -> str:
    """` (mode rounds, rounds 1: --options sets others)`: the options of a game started to be
    watched, when the client chose them (`Board.watch_options`)."""
    if options is not None:
        return ""
    chosen = board_of(game).watch_options
    if not chosen:
        return ""
    shown = ", ".join(f"{name} {value}" for name, value in chosen.items())
    return f" ({shown}: a short game; --options sets others)"


def _checked_options(args: argparse.Namespace) -> lobby_pb2.GameOptions | None:
    """The options of the game a `play` or `watch` command would start (None: it starts none),
    or a UsageError for a request that cannot make a game."""
    if args.command == "watch":
        if args.game_id:
            return None
        chosen = board_of(args.game).watch_options if args.options is None else args.options
        return game_options(args.game, chosen)
    if args.game_id:
        game = game_of_id(args.game_id)
        if args.game and args.game != game:
            raise UsageError(f"game {args.game_id} is a {game} game, not {args.game}")
        return None
    if not args.game:
        raise UsageError(
            f"which game? `tabletop play GAME` starts one ({', '.join(games.names())}); "
            "`tabletop play --game ID` sits you back at one (`tabletop games` lists yours)"
        )
    if args.match and args.bots is not None:
        raise UsageError("--match seats people first; use --bots-after for bots")
    options = args.options
    if getattr(args, "daily", False):
        fields = api(args.game).pb2.Options.DESCRIPTOR.fields_by_name
        if DEAL_OF_THE_DAY not in fields or args.match:
            raise UsageError(
                f"{args.game} has no deal of the day (Solace has: `tabletop play solace --daily`)"
            )
        options = {**(options or {}), DEAL_OF_THE_DAY: True}
    return game_options(args.game, with_bots(args.game, options, args.bots))


async def _seat(
    args: argparse.Namespace,
    session: Session,
    account: Account,
    console: Console,
    options: lobby_pb2.GameOptions | None,
) -> tuple[str, str, int, str]:
    """The game, game id, seat and table mode a `play` or `watch` command asks for."""
    if args.command == "watch" and args.game_id:
        return args.game, args.game_id, -1, "watch"
    if args.game_id:
        game = game_of_id(args.game_id)
        seat = await account.call(lambda: my_seat(session, game, args.game_id, args.seat))
        if seat < 0:
            who = f" as {account.name}" if account.name else ""
            renewed = (
                " (your saved login had expired or was refused: this is a new player)"
                if account.renewed
                else ""
            )
            raise UsageError(
                f"you{who} hold no seat in game {args.game_id}{renewed}; watch it with "
                f"`tabletop watch {game} {args.game_id}`"
            )
        seat = await account.call(
            lambda: take_seat_back(session, game, args.game_id, seat, console)
        )
        return game, args.game_id, seat, "rejoin"
    assert options is not None
    if args.command == "watch":
        game_id, seat = await account.call(
            lambda: bot_game(
                session,
                args.game,
                options,
                level=args.level,
                watch_only=True,
                pace_ms=getattr(args, "pace", None),
            )
        )
        return args.game, game_id, seat, "watch"
    if args.match:
        game_id, seat = await account.call(
            lambda: find_match(
                session,
                args.game,
                options,
                level=args.level,
                bots_after=args.bots_after,
                console=console,
                time_control=args.time_control,
                rated=getattr(args, "rated", False),
            )
        )
    else:
        game_id, seat = await account.call(
            lambda: bot_game(
                session,
                args.game,
                options,
                level=args.level,
                seat=args.seat,
                time_control=args.time_control,
                rated=getattr(args, "rated", False),
            )
        )
    return args.game, game_id, seat, "new"


async def take_seat_back(
    session: Session, game: str, game_id: str, seat: int, console: Console
) -> int:
    """The seat to sit back down at: `seat`, taken back (TakeSeat) when a bot plays it since
    the player's time ran out; -1 (watch) when the bot must keep it (its chess clock is empty)."""
    stub = session.game(game)
    view = await stub.GetView(
        common_pb2.GetViewRequest(game_id=game_id, public=True),
        metadata=session.metadata,
        timeout=CALL_TIMEOUT,
    )
    status = view.status
    if status.finished or status.seats[seat].player_id == session.player_id:
        return seat
    try:
        await stub.TakeSeat(
            common_pb2.TakeSeatRequest(game_id=game_id, seat=seat),
            metadata=session.metadata,
            timeout=CALL_TIMEOUT,
        )
    except grpc.aio.AioRpcError as error:
        reason, _ = error_info(error)
        if reason != "NO_TIME_LEFT":
            raise
        console.print(f"a bot plays your seat on: {error.details()}")
        return -1
    console.print("a bot played your seat since your time ran out: you take it back now")
    return seat


async def stop_game(args: argparse.Namespace) -> int:
    """`tabletop stop GAME_ID`: end a game of bots that the player watches (one `tabletop watch
    GAME` made), through the game's StopGame; says how it ended."""
    session = Session(args.gateway, tls=args.tls)
    account = Account(session, None, args.default_name)
    try:
        game = game_of_id(args.game_id)
        if not account.use_saved():
            raise UsageError(
                f"you have not played on {args.gateway} from here (or your login expired): only "
                "the player who watches a game of bots may stop it"
            )
        request = common_pb2.StopGameRequest(game_id=args.game_id)
        reply = await account.call(
            lambda: session.game(game).StopGame(request, metadata=session.metadata, timeout=10)
        )
    except FAILURES as error:
        return failed("stop", error)
    finally:
        await session.close()
    status = reply.status
    print(f"{game} game {status.game_id} is over: {describe_result(status, -1)}")
    return 0
