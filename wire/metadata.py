"""Who calls: the metadata the platform sets on the calls it forwards (never trusted from a
client: the gateway drops whatever a client sent under these keys), and the `Caller` a service
reads from it, whether the call came as a gRPC call or over a relay link."""

from __future__ import annotations

from dataclasses import dataclass

PLAYER_METADATA = "x-tabletop-player"
"""The authenticated player id, from the gateway to the services behind it."""

NAME_METADATA = "x-tabletop-name"
"""The authenticated player's display name (from their token), likewise."""

SPONSOR_METADATA = "x-tabletop-sponsor"
"""On the lobby's own calls: the player a game is made for (who watches a game of bots): the
game counts towards their limits and shows among their games."""

BOT_SEAT_METADATA = "x-tabletop-bot-seat"
"""From a bot worker to the gateway (with the worker's token): the bot seat (`bot-<level>-<hex>`)
the call acts for. Only a worker's token may name one; the gateway forwards the call as that
bot's."""

GUEST_METADATA = "x-tabletop-guest"
"""`1` when the player (on a platform component's call, the sponsor) is a guest: guests have
tighter limits (services/game/limits.py). Absent for everyone else."""

RATED_METADATA = "x-tabletop-rated"
"""On the lobby's and the matchmakers' CreateGame calls: the game is rated (docs/ratings.md);
the value lists the seats held by accounts, comma-separated (`-` for none), which the game
records as it is made (a guest is never rated, whatever account it claims later)."""

PRIVATE_METADATA = "x-tabletop-private"
"""`1` on the lobby's CreateGame for a private table (an invite's): the game is not listed among
the live games to watch, and its archived record is shown to its players only."""

REQUEST_METADATA = "x-tabletop-request"
"""A request id the gateway attaches to each call it forwards: used when the client sent none,
so the gateway's own retries are applied once."""


@dataclass(frozen=True, slots=True)
class Caller:
    """Who calls, as the gateway vouches for it: `player` (empty for the platform's own
    components: lobby, matchmaker) and the gateway's id for this call (`request_id`, used when
    a request carries none, so the gateway's own retries apply a move once)."""

    player: str = ""
    request_id: str = ""
    name: str = ""
    """The player's display name, as their token says."""
    sponsor: str = ""
    """On a platform component's call: the player it acts for (see SPONSOR_METADATA)."""
    guest: bool = False
    """The player (or the sponsor) is a guest (GUEST_METADATA)."""
    rated: tuple[int, ...] | None = None
    """On a platform component's CreateGame: the game is rated, and these seats are accounts'
    (RATED_METADATA); None: a casual game."""
    private: bool = False
    """On a platform component's CreateGame: a private table's game (PRIVATE_METADATA)."""


def rated_value(accounts: tuple[int, ...] | list[int]) -> str:
    """RATED_METADATA's value for a rated game whose `accounts` seats are accounts'."""
    return ",".join(str(seat) for seat in accounts) or "-"


def rated_of(value: str) -> tuple[int, ...] | None:
    """The account seats RATED_METADATA's value names; None when unset (or malformed)."""
    if not value:
        return None
    if value == "-":
        return ()
    seats = value.split(",")
    if not all(seat.isdigit() and len(seat) <= 2 for seat in seats):
        return None
    return tuple(sorted({int(seat) for seat in seats}))
