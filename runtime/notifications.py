"""Writing a player's notifications (keys.player_notifications): the lobby's (challenges, their
answers, followed players' games) and the game services' ("your turn"), with one script each
time: the entry for each player, the stream's expiry, and the note that wakes the lobbies'
fan-out hubs (LobbyService.WatchNotifications reads the streams; services/lobby/following.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from redis.asyncio import Redis

from runtime import keys

KEPT = 100
"""A player's notifications kept (about: the stream is trimmed with MAXLEN ~)."""
KEPT_SECONDS = 86400
"""How long a player's notifications are kept after the latest."""

TELL = """
local function tell(first, at)
  for i = first, #KEYS do
    redis.call('XADD', KEYS[i], 'MAXLEN', '~', ARGV[at], '*', unpack(ARGV, at + 3))
    redis.call('EXPIRE', KEYS[i], ARGV[at + 1])
    redis.call('PUBLISH', ARGV[at + 2] .. KEYS[i], KEYS[i])
  end
end
"""
"""A Lua function for scripts that tell players: `tell(first, at)` appends the entry to each
player's notifications among KEYS from `first` on; ARGV from `at` on: how many kept, seconds
kept, the prefix of a stream's channel (keys.changed_channel), then the entry's field/value
pairs (`Notifier.told`)."""

# KEYS: each player's notifications. ARGV: from 1 on, as `tell` takes them.
_SEND = TELL + "tell(1, 1)"


class Notifier:
    def __init__(self, redis: Redis) -> None:
        self._send = redis.register_script(_SEND)

    async def send(self, players: Sequence[str], kind: str, **fields: str) -> None:
        """Tell each of `players` of `kind` (fields: those of lobby.v1.Notification, by name,
        the empty ones left out)."""
        if not players:
            return
        told, args = self.told(players, kind, **fields)
        await self._send(keys=told, args=args)

    @staticmethod
    def told(players: Sequence[str], kind: str, **fields: str) -> tuple[list[str], list[Any]]:
        """The keys and ARGV of `send`'s script (and of any script that tells players with
        `TELL`, the ARGV from its `at` on)."""
        entry = {"kind": kind, "t": str(int(time.time() * 1000))}
        entry.update((name, value) for name, value in fields.items() if value)
        return (
            [keys.player_notifications(p) for p in dict.fromkeys(players)],
            [KEPT, KEPT_SECONDS, keys.CHANGED_PREFIX, *(x for pair in entry.items() for x in pair)],
        )
