"""The soak (`make soak`): a short run with chaos on a Redis Cluster and PostgreSQL restarts
passes its audits, and the audits catch each kind of loss or corruption they claim to: the
games' from made-up Redis contents, the accounts' on a real gateway and PostgreSQL."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator

import psycopg
import pytest
import pytest_asyncio

import games
from bench.soak import Audit, Joined, Move, Settings, audit_game, run
from bench.soak_accounts import Account, AccountAudit, Ended, audit_accounts
from client.session import Session
from games import replay
from games.clock import TimeControl
from runtime.game_log import Entry
from tests.platform import Platform
from tests.timing import patience
from wire.records import VersionStatus

GAME_ID = "esoloe-00000000000000000001"
PLAYER = "guest-x"


def _status(finished: bool) -> VersionStatus:
    return VersionStatus(to_act=[], finished=finished)


def _stored(moves: list[tuple[int, str]]) -> tuple[dict[bytes, bytes], list[Entry]]:
    """A game as Redis would hold it after `moves`: its state hash and its stream entries."""
    state = games.rules("esoloe").new_game(7)
    entries = [Entry(0, -1, "", [], _status(False), 0)]
    for version, (seat, move) in enumerate(moves, start=1):
        state, events = state.apply(seat, move)
        entries.append(Entry(version, seat, move, list(events), _status(state.finished), 0))
    meta = {
        "game": "esoloe",
        "seats": [PLAYER, "bot-random-1"],
        "options": {},
        "seed": 7,
        "edition": state.edition,
    }
    hash_ = {
        b"version": str(len(moves)).encode(),
        b"snapshot": state.serialize(),
        b"meta": json.dumps(meta).encode(),
    }
    return hash_, entries


def _requests(joined: Joined) -> dict[bytes, bytes]:
    return {m.request_id.encode(): str(m.version).encode() for m in joined.accepted}


def _game() -> tuple[Joined, dict[bytes, bytes], list[Entry]]:
    moves = [(0, "a12"), (1, "a13"), (0, "e15"), (1, "c26")]
    state, entries = _stored(moves)
    joined = Joined("esoloe", GAME_ID, 0)
    joined.accepted = [Move(1, 0, "a12", f"{PLAYER}:r1"), Move(3, 0, "e15", f"{PLAYER}:r3")]
    return joined, state, entries


def test_the_audit_passes_a_sound_game() -> None:
    joined, state, entries = _game()
    assert audit_game([joined], state, entries, _requests(joined)) == []


def test_the_audit_finds_a_gap_in_the_stream() -> None:
    joined, state, entries = _game()
    del entries[2]
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("stream versions" in p for p in problems)


def test_the_audit_finds_a_snapshot_that_does_not_replay() -> None:
    joined, state, entries = _game()
    state[b"snapshot"] = games.rules("esoloe").new_game(7).serialize()
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("differs from the stored snapshot" in p for p in problems)


def test_the_audit_finds_a_lost_move() -> None:
    joined, state, entries = _game()
    joined.accepted.append(Move(5, 0, "b12", f"{PLAYER}:r5"))  # accepted, never written
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("is not in the log" in p for p in problems)


def test_the_audit_finds_a_move_applied_twice() -> None:
    joined, state, entries = _game()
    joined.accepted = joined.accepted[:1]  # the player had one move accepted, the log has two
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("has moves at versions [1, 3]" in p for p in problems)


def test_the_audit_counts_a_move_whose_answer_was_lost() -> None:
    joined, state, entries = _game()
    lost = joined.accepted.pop()
    joined.unknown.append(lost.request_id)
    requests = {**_requests(joined), lost.request_id.encode(): b"3"}
    assert audit_game([joined], state, entries, requests) == []


def test_the_audit_finds_other_events_than_the_replay() -> None:
    joined, state, entries = _game()
    entries[2] = dataclasses.replace(entries[2], events=[])
    problems = audit_game([joined], state, entries, _requests(joined))
    assert any("replays with other events" in p for p in problems)


TIMED = TimeControl(move_seconds=5, abort_seconds=10)
START = 1_000_000


def _timed(
    steps: list[tuple[int, str, int]], tc: TimeControl = TIMED
) -> tuple[dict[bytes, bytes], list[Entry]]:
    """A timed game (5 s a move) as Redis would hold it after `steps` (seat, move, time in ms
    after its creation), replayed with the platform's own step function."""
    position = replay.start("esoloe", 7, {}, time_control=tc, time_ms=START)
    entries = [Entry(0, -1, "", [], _status(False), START)]
    for version, (seat, move, at) in enumerate(steps, start=1):
        position = replay.step(position, tc, replay.Step(seat, move, START + at))
        events = list(position.events)
        status = _status(position.finished)
        entries.append(Entry(version, seat, move, events, status, START + at, position.table_event))
    assert position.table is not None
    meta = {"game": "esoloe", "seats": [PLAYER, PLAYER + "2"], "options": {}, "seed": 7,
            "edition": position.state.edition, "time_control": tc.to_json()}  # fmt: skip
    hash_ = {
        b"version": str(len(steps)).encode(),
        b"snapshot": position.state.serialize(),
        b"meta": json.dumps(meta).encode(),
        b"table": json.dumps(position.table.to_json()).encode(),
    }
    return hash_, entries


def _first_mover() -> tuple[list[Joined], dict[bytes, bytes]]:
    """Seat 0, whose player had its first move (a12) accepted, and the game's request ids."""
    joined = Joined("esoloe", GAME_ID, 0, [Move(1, 0, "a12", f"{PLAYER}:r1")])
    return [joined], _requests(joined)


def test_the_audit_counts_a_timeout_and_how_late_it_came() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "timeout", 7_300)])
    seated, requests = _first_mover()
    audit = Audit()
    assert audit_game(seated, state, entries, requests, audit) == []
    assert audit.applied == {"forfeit": 1}
    assert audit.lateness_ms == [300]  # seat 1's turn began at 2 s: its deadline was 7 s


def test_the_audit_finds_a_timeout_applied_twice() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "timeout", 7_300)])
    entries.append(dataclasses.replace(entries[-1], version=3))
    state[b"version"] = b"3"
    seated, requests = _first_mover()
    problems = audit_game(seated, state, entries, requests)
    assert any("version 3 does not replay" in p for p in problems), problems


def test_the_audit_tells_the_bots_moves_from_the_players_around_a_take_back() -> None:
    """Seat 1 times out, a bot plays it, its player takes it back and plays: the take-back
    replays, and only the player's own moves (before the timeout, after the take-back) are
    theirs."""
    bot = TimeControl(move_seconds=5, on_timeout="bot")
    moves = ["a12", "a13", "e15", "c26"]
    steps = [
        (0, moves[0], 2_000), (1, "timeout", 7_300), (1, moves[1], 7_400),
        (0, moves[2], 8_000), (1, "take_seat", 8_500), (1, moves[3], 9_000),
    ]  # fmt: skip
    hash_, entries = _timed(steps, bot)
    joined = Joined("esoloe", GAME_ID, 1, [Move(6, 1, moves[3], f"{PLAYER}:r6")])
    assert audit_game([joined], hash_, entries, _requests(joined)) == []
    joined.accepted = []  # had the player not played version 6, it would be missing
    problems = audit_game([joined], hash_, entries, _requests(joined))
    assert problems, problems


def test_the_audit_finds_a_timeout_before_its_deadline() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "timeout", 6_900)])
    seated, requests = _first_mover()
    problems = audit_game(seated, state, entries, requests)
    assert any("applied before its deadline" in p for p in problems), problems


def test_the_audit_finds_a_move_accepted_after_its_deadline() -> None:
    state, entries = _timed([(0, "a12", 2_000), (1, "a13", 7_001)])
    seated, requests = _first_mover()
    problems = audit_game(seated, state, entries, requests)
    assert any("a move after the deadline" in p for p in problems), problems


def test_the_audit_finds_a_game_left_waiting_past_its_deadline() -> None:
    state, entries = _timed([(0, "a12", 2_000)])
    seated, requests = _first_mover()
    assert (
        audit_game(seated, state, entries, requests, now_ms=START + 9_000, overdue_ms=2_000) == []
    )
    problems = audit_game(seated, state, entries, requests, now_ms=START + 9_001, overdue_ms=2_000)
    assert any("its timeout was due 2001 ms ago" in p for p in problems), problems


# ---------------------------------------------------------------------------- accounts


@pytest_asyncio.fixture
async def stack(redis_url: str, database_url: str) -> AsyncIterator[Platform]:
    async with Platform(
        redis_url,
        database_url=database_url,
        gateway_settings={"revocation_poll_seconds": 0.2, "login_rate_burst": 1000.0},
    ) as platform:
        yield platform


async def _registered(stack: Platform, name: str) -> tuple[Account, Session]:
    """An account as a soak player holds it: registered, its session's tokens noted."""
    session = Session(stack.target)
    account = Account(name)
    account.logged_in(await session.register(name, account.password))
    return account, session


async def _audit(stack: Platform, account: Account) -> AccountAudit:
    return await audit_accounts([stack.target], [account], bound=patience(0.5))


async def test_the_account_audit_passes_accounts_kept_as_told(stack: Platform) -> None:
    account, session = await _registered(stack, "kept")
    first = Ended(account.session_id, "logged out", account.token, account.expires_at,
                  [account.refresh_token])  # fmt: skip
    await session.logout()
    account.logged_in(await session.account_login("kept", account.password))
    account.ended.append(first)
    audit = await _audit(stack, account)
    assert audit.problems == []
    # the last refresh token, used, then the one it gave (reuse ends the session), the ended
    # session's refresh token
    assert audit.refresh_refused == 3


async def test_the_account_audit_finds_a_lost_account(stack: Platform, database_url: str) -> None:
    account, _ = await _registered(stack, "lost")
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("DELETE FROM accounts WHERE id = %s", (account.player_id,))
    problems = (await _audit(stack, account)).problems
    assert any("account lost" in p and "cannot log in" in p for p in problems), problems


async def test_the_account_audit_finds_a_refresh_token_that_stopped_working(
    stack: Platform,
) -> None:
    account, session = await _registered(stack, "rotated")
    await session.refresh()  # behind the player's back: its last refresh token is used now
    problems = (await _audit(stack, account)).problems
    assert any("refuses the last refresh token it was given" in p for p in problems), problems


async def test_the_account_audit_allows_a_session_lost_with_a_refresh_answer(
    stack: Platform,
) -> None:
    """A Refresh committed and its answer lost: the player holds a used token. Allowed (see
    bench/soak_accounts.py), when the player did see a Refresh go unanswered: its retry, here
    the audit's, is a reuse and ends the session."""
    account, session = await _registered(stack, "unlucky")
    await session.refresh()
    account.unanswered = True
    audit = await _audit(stack, account)
    assert audit.problems == []
    assert audit.sessions_lost == 1


async def test_a_lost_refresh_answer_excuses_a_reuse_and_nothing_else(
    stack: Platform, database_url: str
) -> None:
    """The same player, but its session is gone from the database: its token is unknown, not
    reused. That is a loss, lost answer or not."""
    account, _ = await _registered(stack, "narrow")
    account.unanswered = True
    with psycopg.connect(database_url, autocommit=True) as connection:
        connection.execute("DELETE FROM sessions WHERE id = %s", (account.session_id,))
    problems = (await _audit(stack, account)).problems
    assert any("refuses the last refresh token it was given" in p for p in problems), problems


async def test_the_account_audit_finds_an_ended_session_whose_tokens_work(
    stack: Platform,
) -> None:
    account, session = await _registered(stack, "revoked")
    # The player believes it logged this session out: the gateway never heard of it.
    account.ended.append(Ended(account.session_id, "logged out", account.token,
                               account.expires_at, [account.refresh_token]))  # fmt: skip
    account.logged_in(await session.account_login("revoked", account.password))
    problems = (await _audit(stack, account)).problems
    assert any("its access token still accepted" in p for p in problems), problems
    assert any("a refresh token of session" in p and "still works" in p for p in problems)


# ---------------------------------------------------------------------------- the short soak


@pytest.mark.heavy
def test_a_short_soak_with_chaos_and_clocks_on_a_redis_cluster_loses_nothing() -> None:
    """Every process kind and a cluster node restarted, and PostgreSQL twice (a fast and an
    immediate stop), while games run with short clocks and players who walk away (half their
    games here); every player an account that refreshes, half of them logging out once. The
    audits are clean (games, accounts, and the archive: every finished game archived once, as
    its log has it, though archivers were killed too), timeouts or aborts were applied, and
    ended sessions' tokens were refused."""
    report = run(
        Settings(
            games=8, seconds=16, drain_seconds=25, cluster=True, chaos_every=(0.5, 1.5),
            clocks=True, walk_away=0.25, never_move=0.25,
        )
    )  # fmt: skip
    summary = "\n".join(report.lines())
    assert report.audit.problems == [], summary
    assert report.accounts.problems == [], summary
    assert report.archive.problems == [], summary
    assert report.archive.archived == report.archive.finished == report.audit.finished, summary
    assert report.ok, summary
    assert report.audit.finished > 0, summary
    assert report.audit.moves > 0, summary
    assert sum(report.audit.applied.values()) > 0, summary
    assert sum(report.restarts.values()) >= 3, summary
    assert report.restarts["redis"] == 1, summary
    assert report.restarts["postgres (fast stop)"] == 1, summary
    assert report.restarts["postgres (immediate stop)"] == 1, summary
    accounts = report.accounts
    assert accounts.accounts == 8, summary
    assert accounts.guests > 0, summary
    assert all(a.refreshes > 0 for a in report.tally.accounts), summary
    assert accounts.logouts > 0, summary
    assert accounts.refused > 0, summary  # ended sessions' tokens seen refused, unexpired
    assert accounts.refresh_refused > 0, summary
