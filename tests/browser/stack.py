"""The platform with its web edge, running in a thread's own event loop: for the browser tests
and bench/web_moves.py, whose browser drives it from the main thread."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import games
from gateway.web import WebSettings
from tests.platform import Platform


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
                matchmakers=1,
                web=WebSettings("127.0.0.1:0", root=str(self.web_root)),
            ) as platform:
                self.url = platform.web_url
                self._up.set()
                await self._stop.wait()
        except BaseException as error:  # the test says why the stack did not start
            self.error = error
            self._up.set()

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
