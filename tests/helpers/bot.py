"""The Telegram door's tests: the senders, one life of the door, its harness."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from aiohttp import web
from aiohttp.test_utils import TestClient

from transcriber.bot.client import make_bot
from transcriber.bot.door import DoorParts, TelegramDoor
from transcriber.service.telegram import stop_door
from transcriber.settings import Settings

ALICE_ID = 111
BOB_ID = 222
STRANGER_ID = 999
ALLOWED = {str(ALICE_ID): "alice", str(BOB_ID): "bob"}
OGG = b"OggS" + bytes(range(256)) * 8  # bytes the fake transcoder takes for audio

Client = TestClient[web.Request, web.Application]
StartService = Callable[..., Awaitable[Client]]


@dataclass
class DoorRun:
    """One life of the door: started, then stopped gracefully or killed."""

    door: TelegramDoor
    task: asyncio.Task[None]
    stopping: asyncio.Event
    closed: bool = False

    async def stop(self) -> None:
        await stop_door(self.door, self.task, self.stopping, grace_seconds=5.0)
        await self._close()

    async def kill(self) -> None:
        """A crash: the task dies where it is; nothing is confirmed on the way out."""
        self.task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self.task
        await self._close()

    async def _close(self) -> None:
        if not self.closed:
            self.closed = True
            await self.door._bot.session.close()


@dataclass
class DoorHarness:
    settings: Settings
    parts: DoorParts
    runs: list[DoorRun] = field(default_factory=list)

    def start(self) -> DoorRun:
        bot = make_bot(self.settings.telegram)
        door = TelegramDoor(bot, settings=self.settings.telegram, parts=self.parts)
        stopping = asyncio.Event()
        run = DoorRun(door=door, task=asyncio.create_task(door.run(stopping)),
                      stopping=stopping)
        self.runs.append(run)
        return run
