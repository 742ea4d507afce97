"""The platform with its web edge, a ratings consumer (a rated game's change is shown in
words) and an archiver (finished games are replayed from the archive), running in a thread's own
event loop: for the browser tests and bench/web_moves.py, whose browser drives it from the main
thread."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import games
from games.clock import MAX_JUMP_IN_WINDOW_MS
from gateway.web import WebSettings
from runtime import db
from runtime.accounts_client import AccountsClient
from runtime.redis import connect_redis
from services.archive.archiver import Archiver
from services.ratings.consumer import RatingsConsumer
from tests.platform import TEST_INTERNAL_KEY, Platform


class Stack:
    """The platform running in a thread's own event loop until `stop()`."""

    def __init__(self, redis_url: str, database_url: str, web_root: Path) -> None:
        self.redis_url, self.database_url, self.web_root = redis_url, database_url, web_root
        self.url = ""
        self.error: BaseException | None = None
        self._up = threading.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=self._run, name="web-stack", daemon=True)

    def _run(self) -> None:
        asyncio.run(self._main())

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        try:
            async with Platform(
                self.redis_url,
                games=games.names(),
                database_url=self.database_url,
                bot_workers=2,
                # bots leave a person the table's jump-in window, as in production
                bot_settings={"max_jump_in_window_ms": MAX_JUMP_IN_WINDOW_MS},
                matchmakers=1,
                web=WebSettings("127.0.0.1:0", root=str(self.web_root)),
            ) as platform:
                await self._with_ratings(platform.web_url, platform.accounts_target)
        except BaseException as error:  # the test says why the stack did not start
            self.error = error
            self._up.set()

    async def _with_ratings(self, url: str, accounts_target: str) -> None:
        assert self._stop is not None
        redis, database = connect_redis(self.redis_url), db.pool(self.database_url)
        await database.open(wait=True)
        accounts = AccountsClient(accounts_target, TEST_INTERNAL_KEY)
        ratings = RatingsConsumer(
            redis=redis,
            database=database,
            consumer="web-ratings",
            block_seconds=0.2,
            accounts=accounts,
        )
        archiver = Archiver(
            redis=redis, database=database, consumer="web-archive", block_seconds=0.2
        )
        counting = asyncio.create_task(ratings.run(self._stop))
        archiving = asyncio.create_task(archiver.run(self._stop))
        try:
            self.url = url
            self._up.set()
            await self._stop.wait()
        finally:
            await counting
            await archiving
            await accounts.close()
            await database.close()
            await redis.aclose()

    def start(self) -> Stack:
        self._thread.start()
        self._up.wait(120)
        if self.error is not None or not self.url:
            raise RuntimeError(f"the platform did not start: {self.error!r}")
        return self

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(60)
