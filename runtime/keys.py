"""Every Redis key and stream name the platform uses, in one place.

All keys of one game share the Redis Cluster hash tag `{<game id>}`, so each per-game script
touches a single slot and the platform runs unchanged on a Redis Cluster.
"""

from __future__ import annotations

import re

GAME_ID_PATTERN = re.compile(r"[a-z]+-[0-9a-f]{20}")
"""Game ids look like `esoloe-1f0c2e9a4b7d3c5e8a01`: the game kind, a dash, 20 hex digits."""


def kind_of(game_id: str) -> str:
    """The game kind of a game id: `esoloe` for `esoloe-1f0c...`."""
    return game_id.split("-", 1)[0]


def _tag(game_id: str) -> str:
    return "{" + game_id + "}"


def game_state(game_id: str) -> str:
    """Hash: `version`, `snapshot` (engine bytes), `meta` (JSON: game, seats, options, seed,
    time control), `table` (JSON, timed games: clocks and seats taken over, games.clock)."""
    return f"game:{_tag(game_id)}:state"


def game_events(game_id: str) -> str:
    """Stream: one entry per version, id `<version>-1`; fields actor, move, events, status, t
    (the time it was committed, ms), and `table` for a timeout or an abort (its TableEvent)."""
    return f"game:{_tag(game_id)}:events"


def game_requests(game_id: str) -> str:
    """Hash: client request id -> the version that request produced (a retry is applied once)."""
    return f"game:{_tag(game_id)}:requests"


def game_passes(game_id: str) -> str:
    """Hash: seat -> the last version at which the person at that seat passed on jumping in
    (Solo's PassJumpIn). No part of the game's record: it only ends the bots' wait early."""
    return f"game:{_tag(game_id)}:passes"


CHANGED_PREFIX = "changed:"


def changed_channel(stream: str) -> str:
    """Pub/sub channel: the name of `stream` each time it gets an entry, for the fan-out hubs
    whose watchers follow it (runtime/fanout.py). Scripts publish on `CHANGED_PREFIX .. key`."""
    return CHANGED_PREFIX + stream


BOT_TURNS = "bots:turns"
"""Stream: one job per bot seat that may act at a version (fields game, game_id, seat, player,
version). Bot workers read it with the consumer group BOT_GROUP."""

BOT_GROUP = "bots"

BOT_SWEEP_LOCK = "bots:sweep"
"""String: held for a moment by the one bot worker sweeping LIVE_GAMES for stalled games."""

FINISHED_GAMES = "games:finished"
"""Stream: one entry per finished game with a person at the table (field `game`: its kind,
`game_id`, `record`: JSON with its seats, which were accounts, whether it is rated, and its
final status), appended by the commit that finishes the game. The ratings consumers read it
with the consumer group RATINGS_GROUP. Trimmed to about FINISHED_GAMES_KEPT entries."""

FINISHED_GAMES_KEPT = 100_000

RATINGS_GROUP = "ratings"


def rating_change(game_id: str) -> str:
    """String (JSON): what a rated game did to its seats' ratings, once counted (the ratings
    consumer writes it; GameStatus shows it). Lives as long as the game."""
    return f"game:{_tag(game_id)}:rating"


def leaderboard(game: str) -> str:
    """Sorted set: the rated players of a game kind (accounts, `bot-<level>`) scored by their
    conservative rating (mu - 3 sigma). Kept in step with PostgreSQL's `ratings` by the ratings
    consumer; `tabletop ratings rebuild` writes it again from there."""
    return f"ratings:{{{game}}}:board"


def ratings(game: str) -> str:
    """Hash: a game kind's rated player -> their rating as JSON ([mu, sigma, games]), beside
    `leaderboard` (same slot)."""
    return f"ratings:{{{game}}}:players"


def score_stats(game: str) -> str:
    """Hash: a game played alone's player -> their scores as JSON ([games, total, best]), as
    PostgreSQL's `scores` sum them (the ratings consumer writes it; rebuildable from there)."""
    return f"scores:{{{game}}}:players"


def score_table(game: str) -> str:
    """Sorted set: a game played alone's players scored by their best score (same slot)."""
    return f"scores:{{{game}}}:best"


def day_table(game: str, day: str) -> str:
    """Sorted set: the players of one day's deal of the day scored by their score on it; kept
    DAYS_KEPT days (same slot)."""
    return f"scores:{{{game}}}:day:{day}"


def daily_deal(game: str, day: str) -> str:
    """Hash: one day's deal of the day: `seed` (drawn by the first player to ask, never sent to
    a client) and each player who has asked -> their game's id (one try a day; same slot)."""
    return f"scores:{{{game}}}:deal:{day}"


DAYS_KEPT = 30
"""Days the deal of the day's tables (and deals) are kept in Redis."""


LIVE_GAMES = "games:{live}"
"""Sorted set: ids of games not finished yet, scored by creation time (ms). Bot workers sweep
it for games waiting on a bot seat whose job was lost (a service stopped between a commit and
queueing the job, or Redis was away just then)."""


def level_live(level: str) -> str:
    """Hash: every game not finished yet with a bot of `level` at the table, platform-wide, for
    the levels the platform caps (services/game/limits.py): game id -> "<created ms>:<player it
    counts for>" (its sponsor, else its first person; "" for neither). The exact count the
    platform-wide caps read, and who holds what for the fair share. A game joins it as it is
    made (checked and listed in one script) and leaves it as it finishes (or, found finished or
    gone, when a cap is checked). Every level's hash shares LIVE_GAMES's hash tag: one script
    checks every level at a table on a Redis Cluster."""
    return f"games:{{live}}:level:{level}"


def level_prune_lock(level: str) -> str:
    """String: held for a moment by the one process that looks for finished or vanished games
    in `level_live(level)` (at most one look every few seconds, however many refusals)."""
    return f"games:{{live}}:level:{level}:prune"


def player_games(player: str) -> str:
    """Sorted set: the ids of the games a player (not a bot) holds a seat in, scored by creation
    time (ms); the most recent PLAYER_GAMES_KEPT, for as long as games live (ListGames)."""
    return f"player:{{{player}}}:games"


PLAYER_GAMES_KEPT = 50


def player_live(player: str) -> str:
    """Hash: every game not finished yet that a player (not a bot) holds a seat in or sponsors
    (watches bots play), game id -> "<created ms>:<bot levels at the table, comma-separated>";
    the exact count the per-player limits read (services/game/limits.py), and what ListGames
    lists as live. A game leaves it when it finishes (or, found finished or gone, when a limit
    is checked)."""
    return f"player:{{{player}}}:live"


def player_name(player: str) -> str:
    """String: the display name a player logged in with (kept as long as their token lives);
    game services read it when they seat the player, so that every seat shows a name."""
    return f"player:{{{player}}}:name"


# Matchmaking: every lobby key shares the hash tag {lobby}, so its scripts touch one slot.
TICKETS = "lobby:{lobby}:tickets"
"""Stream: one entry per new ticket (fields ticket, pool); matchmakers read it with the consumer
group MATCHMAKER_GROUP."""

MATCHMAKER_GROUP = "matchmakers"

POOLS = "lobby:{lobby}:pools"
"""Set: the pools that may hold queued tickets."""


def ticket(ticket_id: str) -> str:
    """Hash: player, game, options (hex), seats, bots, bots_after, level, pool, live, created_ms,
    state (queued, matched, cancelled, expired), game_id, seat."""
    return f"lobby:{{lobby}}:ticket:{ticket_id}"


def ticket_events(ticket_id: str) -> str:
    """Stream: the ticket's states, in order (WatchTicket reads it)."""
    return f"lobby:{{lobby}}:ticket:{ticket_id}:events"


def pool(pool_key: str) -> str:
    """Sorted set: queued ticket ids of one game, options and seat count, by time queued."""
    return f"lobby:{{lobby}}:pool:{pool_key}"


def live_ticket(player: str, game: str) -> str:
    """String: the player's one live ticket for a game."""
    return f"lobby:{{lobby}}:live:{player}:{game}"


def active_games(game: str) -> str:
    """Counter: games of this kind created and not yet finished (for the active-games gauge)."""
    return f"stats:{{{game}}}:active"


def deadlines(game: str) -> str:
    """Sorted set: the timed games of a kind that are not over, scored by when the platform must
    next act on them (a timeout or an abort, ms); game services sweep it."""
    return f"deadlines:{{{game}}}"


def deadline_versions(game: str) -> str:
    """Hash: game id -> the version its entry in `deadlines` was set as of (the latest wins)."""
    return f"deadlines:{{{game}}}:versions"


def deadline_repair_lock(game: str) -> str:
    """String: held by the one replica of a kind's game service that repairs its deadlines."""
    return f"deadlines:{{{game}}}:repair"


def event_entry_id(version: int) -> str:
    """The stream entry id of a version (Redis refuses 0-0, hence the sequence part 1)."""
    return f"{version}-1"


def version_of_entry_id(entry_id: str) -> int:
    return int(entry_id.split("-", 1)[0])


# Playing with friends: tables that wait for their players (challenges, invites, open tables,
# rematches), under the lobby's hash tag like tickets.


def table(table_id: str) -> str:
    """Hash: a table waiting for its players (services/lobby/tables.py, `Table`): kind, game,
    options (hex), seats, time_control, rated, host, invited and joined (JSON lists), seating,
    state (open, starting, started, declined, cancelled, expired), version, created_ms,
    expires_ms, due_ms, code, game_id, seat_of, rematch_of, strangers (JSON list: the invited
    players who did not know its maker)."""
    return f"lobby:{{lobby}}:table:{table_id}"


def player_tables(player: str) -> str:
    """Sorted set: the tables a player made, was invited to by a player they know, or joined,
    by their last change."""
    return f"lobby:{{lobby}}:player:{player}:tables"


def player_stranger_tables(player: str) -> str:
    """Sorted set: the challenges made to a player by players they did not know, by their last
    change: apart from `player_tables`, so that they never push those out of the list."""
    return f"lobby:{{lobby}}:player:{player}:stranger-tables"


def challenges_to(player: str) -> str:
    """Sorted set: the challenges (and rematch offers) that wait for a player's answer, by when
    they expire; member `s` (from a player they did not know) or `f`, the table id (20 hex
    digits), then its maker's player id (the bounds per maker and on strangers count them)."""
    return f"lobby:{{lobby}}:player:{player}:challenges-to"


def known_players(player: str) -> str:
    """Sorted set: the players a player knows, by when last (those they challenged, whose
    challenge they accepted, or played with at a challenge's, invite's or rematch's table):
    their challenges are listed first and are not bounded as strangers' are."""
    return f"lobby:{{lobby}}:player:{player}:known"


def player_table_events(player: str) -> str:
    """Stream: one entry (field `table`) per change to one of the player's tables
    (WatchChallenges reads it)."""
    return f"lobby:{{lobby}}:player:{player}:table-events"


def hosted_tables(player: str, kind: str) -> str:
    """Sorted set: the tables of a kind a player made that still wait, by when they expire (the
    player's bound on them counts it)."""
    return f"lobby:{{lobby}}:player:{player}:hosting:{kind}"


TABLE_DEADLINES = "lobby:{lobby}:tables:due"
"""Sorted set: the tables that wait, by when the lobby must expire them."""


def open_tables(game: str) -> str:
    """Sorted set: a game's open tables waiting for players, by creation time (ListOpenTables)."""
    return f"lobby:{{lobby}}:open-tables:{game}"


def invite_code(code: str) -> str:
    """String: the table an invite code opens."""
    return f"lobby:{{lobby}}:invite:{code}"


def challenge_setting(player: str) -> str:
    """String: who may challenge the player ("nobody"; absent: everyone)."""
    return f"lobby:{{lobby}}:player:{player}:accept-from"


# Following, presence and notifications (services/lobby/following.py), under the lobby's tag.


def player_notifications(player: str) -> str:
    """Stream: what concerns a player (WatchNotifications reads it): fields kind, t (ms), and
    player, name, challenge, game, game_id, message as the kind has them; about the last 100,
    kept a day after the latest."""
    return f"lobby:{{lobby}}:player:{player}:notifications"


def presence(player: str) -> str:
    """Sorted set: a player's open notification streams (a random id each), scored by when each
    lapses (ms) unless its lobby refreshes it: online while one has not lapsed. A stream that
    closes removes its own; a stopped lobby's lapse within seconds."""
    return f"lobby:{{lobby}}:player:{player}:presence"


GAMES_STARTED = "games:started"
"""Stream: one entry per new game with a person at the table that anyone may watch (not a
private table's, not a deal of the day's): fields game, game_id, players (JSON: the people
seated), appended by the game service that made it. The lobby reads it with the consumer group
NOTIFIER_GROUP and tells the people's followers. Trimmed to about GAMES_STARTED_KEPT."""

GAMES_STARTED_KEPT = 10_000

NOTIFIER_GROUP = "notifiers"
