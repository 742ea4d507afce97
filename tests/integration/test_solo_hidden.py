"""S14 through the real service: two games with the same public history but different hidden
cards look exactly the same to a seat k that cannot see the difference.

Each scenario fixes the cards its moves need and fills the hands up with random cards. For an
observer k, game A and game B share k's hand (and every hand k will receive by a swap) and differ
in the other seats' fillers and in cards other seats draw. Both games are written to Redis the way
CreateGame writes a game, and the same moves are played through the gateway. Everything k
receives — views, legal moves, its Play answers, errors to its probes, its Watch stream and the
public Watch stream and views — must be identical, except what the round's end reveals (hands and
the points scored from them) and the game ids and times.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from client.session import Session
from games.solo.rules import FULL_DECK, RULES, SoloState
from tests.integration.test_solo_helpers import (
    close_all,
    create_with_setup,
    legal,
    play,
    refused,
    solo_platform,
    view,
)
from tests.platform import Platform, logged_in, watch_all
from tests.timing import patience

pytestmark = pytest.mark.integration
__all__ = ["solo_platform"]

OPTIONS = {"mode": "rounds", "rounds": 1}


@dataclass(frozen=True)
class Pile:
    """A draw pile card that is `a` in game A and `b` in game B, unless the observer is one of
    the seats in `seen_by` (the drawer, and whoever later receives its hand)."""

    a: str
    b: str
    seen_by: frozenset[int]


@dataclass
class Scenario:
    name: str
    fixed: list[list[str]]
    """Per seat: the cards its scripted moves need."""
    sizes: list[int]
    """Per seat: the hand size (fixed cards plus random filler)."""
    pile: list[Pile]
    """The top of the draw pile, top first (the rest is filler)."""
    steps: list[tuple[int, str]]
    """The moves; the last one ends the round (and so the game: rounds mode, 1 round)."""
    shared: dict[int, set[int]] = field(default_factory=dict)
    """Per observer: seats whose whole hand it will see (it receives them by a swap)."""
    top: str = "r5"

    def setup(self, observer: int, variant: int) -> dict[str, Any]:
        n = len(self.fixed)
        pile_top = [p.a for p in self.pile]
        pool = list(FULL_DECK)
        for card in [self.top, *pile_top, *(c for hand in self.fixed for c in hand)]:
            pool.remove(card)
        # Game A's fillers; game B keeps those of the observer and of the hands it will see.
        base = random.Random(self.name)
        base.shuffle(pool)
        fillers: list[list[str]] = []
        for seat in range(n):
            count = self.sizes[seat] - len(self.fixed[seat])
            fillers.append(pool[:count])
            del pool[:count]
        if variant == 1:
            kept = {observer} | self.shared.get(observer, set())
            redeal = [*pool, *(c for s in range(n) if s not in kept for c in fillers[s])]
            for i, p in enumerate(self.pile):
                if observer not in p.seen_by:
                    redeal.append(p.a)
                    redeal.remove(p.b)  # (ValueError: b is in a hand the observer sees)
                    pile_top[i] = p.b
            random.Random(f"{self.name}:{observer}").shuffle(redeal)
            for seat in range(n):
                if seat not in kept:
                    count = len(fillers[seat])
                    fillers[seat] = redeal[:count]
                    del redeal[:count]
            pool = redeal
        return {
            "hands": [self.fixed[s] + fillers[s] for s in range(n)],
            "draw_pile": pile_top + pool,
            "discard": [self.top],
            "start_seat": 0,
        }


SCENARIOS = [
    Scenario(
        name="draws, jump-ins, draw stack, call, round end",
        fixed=[["r3", "r3", "g3"], ["r6"], ["rD", "g8"], ["r6", "gD", "g4"]],
        sizes=[5, 4, 4, 3],
        pile=[
            Pile("b2", "y8", frozenset({1})),  # seat 1 draws: unplayable on r3 either way
            Pile("r9", "r1", frozenset({2})),  # seat 2 draws: playable either way, kept
            *(
                Pile(a, b, frozenset({0}))
                for a, b in [("b4", "y7"), ("y1", "b9"), ("y2", "b6"), ("b3", "y4")]
            ),
            Pile("b8", "y6", frozenset({1})),  # seat 1 draws: unplayable on g3
        ],
        steps=[
            (0, "play r3"),
            (0, "play r3"),  # a jump-in on one's own card (S11, rules edition 2)
            (1, "draw"),
            (2, "draw"),
            (2, "pass"),
            (3, "play r6"),
            (1, "play r6"),  # jump-in (S11)
            (2, "play rD"),
            (3, "play gD!"),  # extends the stack, leaves one card: the call goes with it (S12)
            (0, "draw"),  # takes the 4
            (0, "play g3"),
            (1, "draw"),
            (2, "play g8"),
            (3, "play g4"),  # last card: the round and the game end
        ],
    ),
    Scenario(
        name="swap, penalty, swap-in-turn, round end",
        fixed=[["rX", "WX", "b4"], ["r2"], [], ["b6"]],
        sizes=[5, 2, 4, 1],
        pile=[Pile("g1", "y3", frozenset({1, 2})), Pile("y5", "g7", frozenset({1, 2}))],
        steps=[
            (0, "play rX@2"),  # seat 0 and seat 2 exchange hands (S8)
            (1, "play r2"),  # one card left, no call
            (2, "play WX"),  # seat 1 draws 2 (S12), then every hand moves on (S8)
            (3, "play b4"),  # free play after the Swap-in-turn (S4)
            (0, "play b6"),  # the one-card hand received by the swap-in-turn ends the round
        ],
        # Who sees whose hand: the swap (0 <-> 2), then the swap-in-turn (i receives i-1's).
        shared={0: {2, 3}, 1: {2}, 2: {0, 1}, 3: {0}},
    ),
]


def _plain(message: Message, final: bool) -> dict[str, Any]:
    """A message as a dict without game ids and times; at the round's end also without what the
    end reveals (hands, penalties, points, the result)."""
    data: dict[str, Any] = _strip(MessageToDict(message, preserving_proto_field_name=True), final)
    return data


def _strip(value: Any, final: bool) -> Any:
    if isinstance(value, dict):
        drop = {"game_id", "time"}
        if final:
            drop |= {"hands", "penalties", "points", "result", "winners", "game_ended"}
        return {k: _strip(v, final) for k, v in value.items() if k not in drop}
    if isinstance(value, list):
        return [_strip(v, final) for v in value]
    return value


async def _probe(session: Session, game_id: str, state: SoloState, seat: int) -> list[Any]:
    """Refused moves of `seat`: the errors it receives."""
    top = state.discard[-1]
    absent = next(c for c in ("y9", "b9", "g9", "r9") if c not in state.hands[seat])
    probes = ["play " + absent, "pass", "solo", "solo!", "play " + top + "!"]
    if seat != state.current:
        probes.append("draw")
    out = []
    for move in probes:
        if move in state.legal_moves(seat):
            continue
        out.append(await refused(play(session, game_id, move)))
    return out


async def _observe(
    sessions: Sequence[Session], game_id: str, state: SoloState, seat: int, final: bool
) -> list[Any]:
    me = sessions[seat]
    moves = await legal(me, game_id)
    return [
        _plain(await view(me, game_id), final),
        _plain(await view(me, game_id, public=True), final),
        _plain(moves, final),
        [] if final else await _probe(me, game_id, state, seat),
    ]


def _step(state: SoloState, seat: int, move: str) -> SoloState:
    new, _ = state.apply(seat, move)
    assert isinstance(new, SoloState)
    return new


def _check_offline(scenario: Scenario, setups: Sequence[Mapping[str, Any]], k: int) -> bool:
    """The two games in the engine: same moves legal, same view for k until the last move.
    Returns whether some seat's hidden chance to act (a jump-in) differed between them."""
    states = [RULES.new_game(1, {"players": 4, **OPTIONS}, s) for s in setups]
    assert (states[0].hands, states[0].pile) != (states[1].hands, states[1].pile)
    hidden_differs = False
    for seat, move in scenario.steps:
        assert states[0].view(k) == states[1].view(k)
        assert states[0].public_to_act() == states[1].public_to_act()
        hidden_differs |= states[0].to_act() != states[1].to_act()
        states = [_step(s, seat, move) for s in states]
    assert all(s.finished for s in states)
    return hidden_differs


@pytest.mark.parametrize("transport", ["unary", "session"])
@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.name.split(",")[0] for s in SCENARIOS])
async def test_seat_cannot_tell_games_apart(
    scenario: Scenario, transport: str, solo_platform: Platform, redis_url: str
) -> None:
    """`transport`: the players call with calls of their own, or on their sessions' streams."""
    sessions = await logged_in(solo_platform, "s0", "s1", "s2", "s3", "spectator")
    if transport == "session":
        for session in sessions:
            session.open_stream()
    seats = sessions[:4]
    players = [s.player_id for s in seats]
    hidden_chances = False
    for k in range(4):
        setups = [scenario.setup(k, variant) for variant in (0, 1)]
        hidden_chances |= _check_offline(scenario, setups, k)
        games = [await create_with_setup(redis_url, players, s, OPTIONS) for s in setups]
        states = [RULES.new_game(1, {"players": 4, **OPTIONS}, s) for s in setups]
        watchers = [asyncio.create_task(watch_all(seats[k], "solo", game)) for game in games] + [
            asyncio.create_task(watch_all(sessions[4], "solo", game, public=True)) for game in games
        ]
        seen: list[list[Any]] = [[], []]
        for index, (seat, move) in enumerate(scenario.steps):
            final = index == len(scenario.steps) - 1
            for g, game in enumerate(games):
                seen[g].append(await _observe(seats, game, states[g], k, False))
                reply = await play(seats[seat], game, move)
                states[g] = _step(states[g], seat, move)
                if seat == k:
                    seen[g].append(_plain(reply, final))
                seen[g].append(await _observe(seats, game, states[g], k, final))
            assert seen[0] == seen[1], (scenario.name, k, index, move)
        streams = await asyncio.wait_for(asyncio.gather(*watchers), timeout=patience(10))
        for own, public in ((streams[0], streams[2]), (streams[1], streams[3])):
            assert [u.envelope.version for u in own] == list(range(len(scenario.steps) + 1))
            assert len(public) == len(own)
        for a, b in ((streams[0], streams[1]), (streams[2], streams[3])):
            assert [_plain(u, False) for u in a[:-1]] == [_plain(u, False) for u in b[:-1]]
            assert _plain(a[-1], True) == _plain(b[-1], True)
            ended_a = a[-1].events[-2].round_ended
            ended_b = b[-1].events[-2].round_ended
            # The round's end reveals every hand (S13/S14): the true ones, which differ.
            assert [list(h.cards) for h in ended_a.hands] == states[0].hands
            assert [list(h.cards) for h in ended_b.hands] == states[1].hands
    if scenario.name.startswith("draws"):
        assert hidden_chances  # some seat could jump in in one game and not in the other
    await close_all(sessions)
