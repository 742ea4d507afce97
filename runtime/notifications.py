"""Writing a player's notifications (keys.player_notifications): the lobby's (challenges, their
answers, followed players' games) and the game services' ("your turn"), with one script each
time: the entry for each player, the stream's expiry, and the note that wakes the lobbies'
fan-out hubs (LobbyService.WatchNotifications reads the streams; services/lobby/following.py)."""

from __future__ import annotations

import time
from collections.abc import Sequence

from redis.asyncio import Redis

from runtime import keys

KEPT = 100
"""A player's notifications kept (about: the stream is trimmed with MAXLEN ~)."""
KEPT_SECONDS = 86400
"""How long a player's notifications are kept after the latest."""

# KEYS: each player's notifications. ARGV: how many kept, seconds kept, the prefix of a stream's
# channel (keys.changed_channel), then the entry's field/value pairs.
_SEND = """
for _, key in ipairs(KEYS) do
  redis.call('XADD', key, 'MAXLEN', '~', ARGV[1], '*', unpack(ARGV, 4))
  redis.call('EXPIRE', key, ARGV[2])
  redis.call('PUBLISH', ARGV[3] .. key, key)
end
"""


class Notifier:
    def __init__(self, redis: Redis) -> None:
        self._send = redis.register_script(_SEND)

    async def send(self, players: Sequence[str], kind: str, **fields: str) -> None:
        """Tell each of `players` of `kind` (fields: those of lobby.v1.Notification, by name,
        the empty ones left out)."""
        if not players:
            return
        entry = {"kind": kind, "t": str(int(time.time() * 1000))}
        entry.update((name, value) for name, value in fields.items() if value)
        await self._send(
            keys=[keys.player_notifications(p) for p in dict.fromkeys(players)],
            args=[
                KEPT, KEPT_SECONDS, keys.CHANGED_PREFIX,
                *(x for pair in entry.items() for x in pair),
            ],
        )  # fmt: skip
