"""Playing and watching games from the terminal, through the gateway only.

A `Table` follows one game for one seat (or a spectator): a Watch stream prints every move as it
comes and shows the board when it is the seat's turn, while typed lines are read at any time, so
that Solo jump-ins and late calls can be played during other seats' turns. Input is read line by
line from any stream (a terminal, a pipe, a file), which is how the tests script whole games.

Commands at the table: a move in the game's notation; `help` (or `moves`) lists the legal
moves; `board`; `wait` (until it is your turn: for scripts); `auto` (from now on play the first
legal move whenever it is your turn); `resign`; `quit` (leave; the game goes on).
"""

from __future__ import annotations

import argparse
import asyncio
import codecs
import contextlib
import os
import sys
import threading
import uuid
from collections.abc import Mapping
from typing import Any, TextIO

import grpc
from google.protobuf import json_format
from rich.console import Console

from client.boards import BOARDS, describe_result, describe_update, enum_prefix, seat_name
from client.notation import notation_error
from client.session import Session
from engines import registry
from services.runtime.apis import GAME_APIS
from services.runtime.errors import error_info
from tabletop.common.v1 import common_pb2
from tabletop.lobby.v1 import lobby_pb2, lobby_pb2_grpc

CALL_TIMEOUT = 10.0
WATCH_RETRIES = 5
RATE_RETRIES = 20

COMMANDS = (
    "commands: a move in the game's notation | help, moves: legal moves | board | "
    "wait: until your turn | auto: play the first legal move on each turn | resign | quit"
)


class UsageError(Exception):
    """A command-line request that cannot make a game (the message says what is allowed)."""


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
        while chunk := os.read(fd, 4096):
            pending += decoder.decode(chunk)
            *lines, pending = pending.split("\n")
            for line in lines:
                post(line.strip())
        if pending.strip():
            post(pending.strip())
        post(None)

    threading.Thread(target=pump, name="tabletop-input", daemon=True).start()
    return queue


def game_options(game: str, options: Mapping[str, Any] | None) -> lobby_pb2.GameOptions:
    """Options given as JSON (`{"players": 2, "mode": "rounds"}`) as the lobby's GameOptions.

    Enum values may be written as the rulings name them (`rounds`) or as the proto does
    (`MODE_ROUNDS`).
    """
    message = GAME_APIS[game].pb2.Options()
    given = dict(options or {})
    for name, value in given.items():
        field = message.DESCRIPTOR.fields_by_name.get(name)
        if field is not None and field.enum_type is not None and isinstance(value, str):
            full = enum_prefix(field.enum_type) + value.upper()
            if full in field.enum_type.values_by_name:
                given[name] = full
    try:
        json_format.ParseDict(given, message)
    except json_format.ParseError as error:
        raise UsageError(f"bad {game} options: {error}") from None
    wrapper = lobby_pb2.GameOptions()
    getattr(wrapper, game).CopyFrom(message)
    return wrapper


def with_bots(game: str, options: Mapping[str, Any] | None, bots: int | None) -> dict[str, Any]:
    """The options for a table of one player and `bots` bots (None: the game's usual count)."""
    merged = dict(options or {})
    if bots is None:
        return merged
    rules = registry.get(game)
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


async def bot_game(
    session: Session,
    game: str,
    options: lobby_pb2.GameOptions,
    *,
    level: str,
    seat: int | None = None,
    watch_only: bool = False,
) -> tuple[str, int]:
    """A new game with bots in the other seats (or in all of them): its id and the caller's seat."""
    request = lobby_pb2.PlayAgainstBotsRequest(
        game=game, options=options, level=level, watch_only=watch_only
    )
    if seat is not None:
        request.seat = seat
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    reply = await lobby.PlayAgainstBots(request, metadata=session.metadata, timeout=CALL_TIMEOUT)
    return reply.status.game_id, reply.seat


async def find_match(
    session: Session,
    game: str,
    options: lobby_pb2.GameOptions,
    *,
    level: str,
    bots_after: int,
    console: Console,
) -> tuple[str, int]:
    """Queue for a game with other people (bots fill the empty seats after `bots_after` seconds,
    or never when it is 0) and wait until the matchmaker seats the caller."""
    lobby = lobby_pb2_grpc.LobbyServiceStub(session.channel)
    request = lobby_pb2.FindMatchRequest(game=game, options=options, level=level)
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
        raise
    if ticket.state != lobby_pb2.TICKET_STATE_MATCHED:
        state = lobby_pb2.TicketState.Name(ticket.state).removeprefix("TICKET_STATE_").lower()
        raise UsageError(f"no match: the ticket was {state}")
    return ticket.game_id, ticket.seat


class Table:
    """One game followed by one seat (`seat` -1: a spectator, who sees the public view)."""

    def __init__(
        self, session: Session, game: str, game_id: str, seat: int, console: Console
    ) -> None:
        self.session = session
        self.game = game
        self.game_id = game_id
        self.seat = seat
        self.console = console
        self.stub = session.game(game)
        self.status = common_pb2.GameStatus()
        self.auto = False
        self.ready = asyncio.Event()
        """Set while the seat may act in turn, or once the game is over (what `wait` waits for)."""
        self._shown = -1
        self._auto_version = -1

    async def _call(self, method: str, request: Any) -> Any:
        """A unary call of the game's service. A RATE_LIMITED refusal is waited out as the
        server asks (auto play against quick bots reaches the per-player rate); retrying a Play
        is safe, its request id makes the server apply it once."""
        for attempt in range(RATE_RETRIES):
            try:
                return await getattr(self.stub, method)(
                    request, metadata=self.session.metadata, timeout=CALL_TIMEOUT
                )
            except grpc.aio.AioRpcError as error:
                reason, info = error_info(error)
                if reason != "RATE_LIMITED" or attempt == RATE_RETRIES - 1:
                    raise
                await asyncio.sleep(int(info.get("retry_after_ms", "100")) / 1000)
        raise AssertionError("unreachable")

    # ---- what the table knows

    def _learn(self, status: common_pb2.GameStatus) -> None:
        if status.version < self.status.version:
            return  # an answer that crossed a newer one
        self.status.CopyFrom(status)
        if status.finished or self.my_turn:
            self.ready.set()
        else:
            self.ready.clear()

    @property
    def my_turn(self) -> bool:
        return not self.status.finished and self.seat in self.status.to_act

    async def _view(self) -> Any:
        reply = await self._call(
            "GetView", common_pb2.GetViewRequest(game_id=self.game_id, public=self.seat < 0)
        )
        self._learn(reply.status)
        return reply

    async def show_board(self, *, at: int | None = None) -> None:
        """Draw the board. With `at`, only while the game is still at that version (the board
        then belongs to that move; a replay from the log draws no later board too early) and
        only once per version."""
        if at is not None and at < self.status.version:
            return  # a move from the log, already followed by others: no RPC needed
        reply = await self._view()
        version = reply.status.version
        if at is not None and (version != at or version <= self._shown):
            return
        self._shown = version
        self.console.print(BOARDS[self.game](reply, self.seat))

    async def show_moves(self) -> None:
        if self.seat < 0:
            self.console.print("you are watching: no moves. " + COMMANDS)
            return
        legal = await self._call("LegalMoves", common_pb2.LegalMovesRequest(game_id=self.game_id))
        if legal.moves:
            self.console.print(f"legal moves ({len(legal.moves)}): " + ", ".join(legal.moves))
        else:
            turn = ", ".join(seat_name(self.status, s, self.seat) for s in self.status.to_act)
            self.console.print(f"no legal move now (to act: {turn or 'nobody'})")
        self.console.print(COMMANDS, style="dim")

    # ---- acting

    async def play(self, move: str, expected_version: int | None = None) -> bool:
        """Send a move; a refusal is printed with the server's reason and message, except a
        stale `expected_version` (auto play lost a race: the next update brings a new turn)."""
        request = common_pb2.PlayRequest(
            game_id=self.game_id, move=move, request_id=uuid.uuid4().hex
        )
        if expected_version is not None:
            request.expected_version = expected_version
        try:
            reply = await self._call("Play", request)
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            if expected_version is not None and reason == "STALE_VERSION":
                return False
            self.console.print(
                f"refused by the server ({reason or error.code().name}): {error.details()}",
                style="bold red",
            )
            return False
        self._learn(reply.status)
        return True

    async def resign(self) -> bool:
        try:
            reply = await self._call(
                "Resign",
                common_pb2.ResignRequest(game_id=self.game_id, request_id=uuid.uuid4().hex),
            )
        except grpc.aio.AioRpcError as error:
            reason, _ = error_info(error)
            self.console.print(f"resign refused ({reason}): {error.details()}", style="bold red")
            return False
        self._learn(reply.status)
        self.console.print("you resigned")
        return True

    async def _autoplay(self) -> None:
        if not self.auto or not self.my_turn or self.status.version == self._auto_version:
            return
        self._auto_version = self.status.version
        legal = await self._call("LegalMoves", common_pb2.LegalMovesRequest(game_id=self.game_id))
        if legal.moves:
            self.console.print(f"auto: {legal.moves[0]}", style="dim")
            await self.play(legal.moves[0], expected_version=legal.version)

    async def command(self, line: str) -> bool:
        """Carry out one typed line; False when the player leaves the table."""
        verb = line.strip().lower()
        if not verb:
            return True
        if verb in ("help", "moves", "?"):
            await self.show_moves()
        elif verb == "board":
            await self.show_board()
        elif verb in ("quit", "exit"):
            if self.seat >= 0 and not self.status.finished:
                self.console.print(f"leaving game {self.game_id}; it goes on without you")
            return False
        elif self.seat < 0:
            self.console.print(f"you are watching: {verb!r} is not a spectator command")
        elif verb == "resign":
            return not await self.resign()
        elif verb == "auto":
            self.auto = True
            self.console.print("auto: playing the first legal move on each of your turns")
            await self._autoplay()
        elif verb == "wait":
            await self.ready.wait()
        else:
            move = line.strip()
            problem = notation_error(self.game, move)
            if problem is not None:
                self.console.print(f"not a move: {problem}. Type help for the legal moves.")
            else:
                await self.play(move)
        return True

    # ---- following the game

    async def follow(self, from_version: int) -> None:
        """Print each move from `from_version` on until the game ends; resume after a dropped
        stream from the next version (the API's promise: no gap, no duplicate)."""
        failures = 0
        while True:
            try:
                async for update in self.stub.Watch(
                    common_pb2.WatchRequest(
                        game_id=self.game_id, from_version=from_version, public=self.seat < 0
                    ),
                    metadata=self.session.metadata,
                ):
                    failures = 0
                    from_version = update.envelope.version + 1
                    await self._on_update(update)
                return
            except grpc.aio.AioRpcError as error:
                failures += 1
                retry = error.code() in (
                    grpc.StatusCode.UNAVAILABLE,
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                )
                if not retry or failures > WATCH_RETRIES:
                    raise
                self.console.print(f"connection lost ({error.details()}); reconnecting")
                await asyncio.sleep(0.5 * failures)

    async def _on_update(self, update: Any) -> None:
        self.console.print(describe_update(update, self.seat))
        self._learn(update.status)
        if update.status.finished:
            return
        version = update.envelope.version
        if self.seat < 0:
            await self.show_board(at=version)
        elif self.my_turn:
            if self.auto:
                await self._autoplay()
            else:
                await self.show_board(at=version)
                self.console.print("your turn: type a move (help lists them)", style="bold")
        elif self.game == "solo" and not self.auto:
            await self._offer_out_of_turn()

    async def _offer_out_of_turn(self) -> None:
        """Tell the player when a jump-in or a late solo call is open to them (S11, S12)."""
        legal = await self._call("LegalMoves", common_pb2.LegalMovesRequest(game_id=self.game_id))
        if legal.moves and legal.version == self.status.version:
            self.console.print("you may play now: " + ", ".join(legal.moves), style="bold")

    async def run(self, lines: asyncio.Queue[str | None], *, from_start: bool = False) -> int:
        """Follow the game and carry out typed lines until it ends or the player leaves.

        With from_start, every move since the game's creation is shown first (a finished game
        is replayed from its log); otherwise the game is shown as it is now."""
        if from_start:
            await self._view()  # where the game is now: the moves before it are its log
            start_version = 0
        else:
            await self.show_board()
            start_version = self.status.version + 1
        follower = asyncio.create_task(self.follow(start_version))
        if self.my_turn:
            self.console.print("your turn: type a move (help lists them)", style="bold")
        left = False
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
                    else:
                        self.console.print(f"input ended; leaving game {self.game_id}")
                        left = True
                    break
                if not await self.command(line):
                    left = not self.status.finished
                    break
            if not left and not follower.done():  # resigned: see the final moves
                await asyncio.wait({follower}, timeout=CALL_TIMEOUT)
            if follower.done():
                follower.result()  # a stream that failed for good raises here
        finally:
            follower.cancel()
        if self.status.finished:
            if self._shown < self.status.version:
                await self.show_board()
            self.console.print(describe_result(self.status, self.seat), style="bold")
        return 0


async def run_table(args: argparse.Namespace) -> int:
    """`tabletop play` and `tabletop watch`: log in, get a seat (or a game to watch), follow it."""
    # Server text (moves, events, messages) is never read as rich markup: `[r5]` is a card list.
    console = Console(highlight=False, markup=False, soft_wrap=True)
    session = Session(args.gateway)
    try:
        await session.login(args.name)
        if args.command == "watch" and args.game_id:
            game_id, seat = args.game_id, -1
        elif args.command == "watch":
            options = game_options(args.game, args.options)
            game_id, seat = await bot_game(
                session, args.game, options, level=args.level, watch_only=True
            )
        else:
            if args.match and args.bots is not None:
                raise UsageError("--match seats people first; use --bots-after for bots")
            options = game_options(args.game, with_bots(args.game, args.options, args.bots))
            if args.match:
                game_id, seat = await find_match(
                    session,
                    args.game,
                    options,
                    level=args.level,
                    bots_after=args.bots_after,
                    console=console,
                )
            else:
                game_id, seat = await bot_game(
                    session, args.game, options, level=args.level, seat=args.seat
                )
        if seat < 0:
            console.print(f"watching {args.game} game {game_id}")
        else:
            console.print(
                f"{args.game} game {game_id}, you are seat {seat}; to watch it elsewhere: "
                f"tabletop watch {args.game} {game_id}"
            )
        table = Table(session, args.game, game_id, seat, console)
        return await table.run(read_lines(sys.stdin), from_start=args.command == "watch")
    except UsageError as error:
        print(f"tabletop {args.command}: {error}", file=sys.stderr)
        return 2
    except grpc.aio.AioRpcError as error:
        reason, _ = error_info(error)
        print(
            f"tabletop {args.command}: {reason or error.code().name}: {error.details()}",
            file=sys.stderr,
        )
        return 1
    finally:
        await session.close()
