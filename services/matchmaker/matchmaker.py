"""The matchmaker: groups queued tickets into games and creates them on the game services.

Tickets wait in pools (one per game, seat count and options). A matchmaker is woken by the
ticket stream (consumer group `matchmakers`, so several can run) and also looks at every pool
each `scan_seconds` for bot-fill timers and expiry. It creates the game first, then seats the
tickets with one script that succeeds only if every ticket is still queued: a ticket is never
matched twice, and a cancelled one never. If it loses that race, or dies between the two steps,
the tickets simply stay queued (the created game is never played and expires); a stream entry
it had not acknowledged is taken over by another matchmaker (XAUTOCLAIM). No ticket is lost.
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from collections.abc import Mapping, Sequence
from typing import Any

import grpc
from redis.asyncio import Redis

from games.clock import TimeControl
from runtime import keys
from runtime.consumer import GroupConsumer
from runtime.observability import MATCHES
from runtime.replicas import following
from services.matchmaker.skill import Window, balanced_seating, tables_by_skill, within
from services.matchmaker.tickets import TICKET_TTL_SECONDS, Ticket, TicketStore
from services.ratings.cache import RatingCache
from services.ratings.model import rated_player
from wire.api import api
from wire.clock import time_control_message
from wire.metadata import RATED_METADATA, rated_value
from wire.players import new_bot_id
from wire.proof import platform_channel

log = logging.getLogger("tabletop.matchmaker")


class Matchmaker(GroupConsumer):
    failure_message = "cannot reach the lobby"

    def __init__(
        self,
        *,
        redis: Redis,
        backends: Mapping[str, str],
        consumer: str,
        internal_key: str,
        claim_idle_seconds: float = 30.0,
        scan_seconds: float = 1.0,
        window: Window | None = None,
    ) -> None:
        """`window`: how far apart in rating the players of a rated game may be, by how long
        they waited (services/matchmaker/skill.py)."""
        super().__init__(
            redis=redis, stream=keys.TICKETS, group=keys.MATCHMAKER_GROUP, consumer=consumer,
            claim_idle_seconds=claim_idle_seconds, block_seconds=scan_seconds,
        )  # fmt: skip
        self.store = TicketStore(redis)
        self.scan_seconds = scan_seconds
        self._last_scan = 0.0
        # Games are created on each service's replicas as they come and go: started in run().
        self.channels = following(
            backends, lambda game, at: platform_channel(at, api(game).full_name, internal_key)
        )
        self.rng = random.Random()
        self.window = window or Window()
        self.ratings = RatingCache(redis)
        self.scans = 0
        """Looks at every pool done so far (a test waits for one that began after a ticket)."""

    async def run(self, stop: asyncio.Event) -> None:
        for replicas in self.channels.values():
            replicas.start()
        await super().run(stop)

    async def reclaiming(self) -> bool:
        """Idle entries are taken over with each look at every pool (every `scan_seconds`)."""
        return time.monotonic() - self._last_scan >= self.scan_seconds

    async def consume(self, entries: list[tuple[Any, Any]], *, reclaimed: bool) -> None:
        """Match the pools the read's tickets are in (every pool when it is time to look at
        them all), then acknowledge the entries together."""
        pools = {fields[b"pool"].decode() for _, fields in entries if fields}
        if reclaimed:
            self._last_scan = time.monotonic()
            pools |= set(await self.store.pools())
        for pool in sorted(pools):
            await self.match_pool(pool)
        if reclaimed:
            self.scans += 1
        await self.ack(*(entry_id for entry_id, _ in entries))

    async def match_pool(self, pool: str) -> None:
        """Form every game the pool's queued tickets allow now."""
        ids = await self.store.queued(pool)
        if not ids:
            await self.store.forget_pool_if_empty(pool)
            return
        now = time.time() * 1000
        tickets = await self.store.get_many(ids)
        await self.store.drop_from_pool(pool, sorted(set(ids) - {t.ticket_id for t in tickets}))
        waiting: list[Ticket] = []
        for ticket in tickets:
            if ticket.state != "queued":
                continue
            if now - ticket.created_ms > TICKET_TTL_SECONDS * 1000:
                await self.store.close(ticket, "expired")
                continue
            waiting.append(ticket)
        if not waiting:
            return
        seats = waiting[0].seats
        ratings: dict[str, int] = {}
        if waiting[0].rated:  # by skill: players of close ratings, the closer the sooner
            ratings = await self.ratings.shown(waiting[0].game, [t.player for t in waiting])
            tables, waiting = tables_by_skill(waiting, ratings, seats, now, self.window)
            for table in tables:
                await self.seat(pool, table, bots=0)
        else:
            while len(waiting) >= seats:  # full tables of people first
                await self.seat(pool, waiting[:seats], bots=0)
                waiting = waiting[seats:]
        ready = [
            t for t in waiting
            if t.bots == "now" or (t.bots == "after" and now - t.created_ms >= t.bots_after * 1000)
        ]  # fmt: skip
        if ready:  # bots fill the table of whoever is ready, with the people who accept them
            people = [t for t in waiting if t.bots != "never" and t.level == ready[0].level]
            if ready[0].rated:  # and sit with it by skill
                others = [t for t in people if t is not ready[0]]
                people = [ready[0], *within(ready[0], others, ratings, now, self.window)]
            people = people[:seats]
            await self.seat(pool, people, bots=seats - len(people))

    async def seat(self, pool: str, tickets: Sequence[Ticket], *, bots: int) -> bool:
        game = tickets[0].game
        game_api = api(game)
        players = [t.player for t in tickets] + [new_bot_id(tickets[0].level) for _ in range(bots)]
        self.rng.shuffle(players)
        if tickets[0].rated and len(players) >= 3:  # neighbours of close ratings (Solo)
            rated_as = [rated_player(p, account=True) or p for p in players]
            shown = await self.ratings.shown(game, rated_as)
            order = balanced_seating([shown[r] for r in rated_as], self.rng)
            players = [players[i] for i in order]
        request = game_api.pb2.CreateGameRequest(
            options=game_api.pb2.Options.FromString(tickets[0].options), players=players
        )
        if tickets[0].time_control is not None:  # else: the game's default
            tc = TimeControl.from_json(tickets[0].time_control)
            request.time_control.CopyFrom(time_control_message(tc))
        # A rated pool holds accounts only (the lobby refuses a guest's rated ticket).
        rated = [(RATED_METADATA, rated_value([players.index(t.player) for t in tickets]))]
        try:
            with self.channels[game].using() as channel:
                created = await game_api.stub(channel).CreateGame(
                    request, timeout=10, metadata=rated if tickets[0].rated else ()
                )
        except grpc.aio.AioRpcError as error:
            log.warning("cannot create a game", extra={"game": game, "error": error.details()})
            return False
        game_id = created.status.game_id
        seated = [(t, players.index(t.player)) for t in tickets]
        if not await self.store.match(pool, game_id, seated):
            log.info("a ticket changed first; the game is dropped", extra={"game_id": game_id})
            return False
        MATCHES.labels(game, "with_bots" if bots else "people").inc()
        log.info("matched", extra={"game_id": game_id, "people": len(tickets), "bots": bots})
        return True

    async def close(self) -> None:
        for replicas in self.channels.values():
            await replicas.close()
