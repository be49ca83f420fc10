"""Start and stop of the Telegram door, as two aiohttp cleanup contexts.

Both do nothing unless `telegram.token` is set (then the pipeline keeps its
`NullNotifier`, and Telegram records are undelivered `bot_not_running`, P6).

- `telegram_ctx`, before the pipeline: the `Bot` (one HTTP session) and the
  notifier on `keys.NOTIFIER` (unless a test put one there), so the first
  delivery of the step actors already finds it; closed after the pipeline
  stopped, so replies of steps finishing during the stop still go out.
- `bot_ctx`, after the pipeline: the Telegram polling duty (`service.duties`:
  one process of the service polls at a time, or Telegram answers the others
  409). Its work is the polling task and the status task (the living status
  messages, `bot/status.py`), both built at start and run while the duty is
  held. Cleanup runs in reverse, so intake stops first; the pipeline (and its
  outbox) and then the writer stop after it.

Supervision: the polling task retries Telegram's failures by itself, so a
task that ends while the service is not stopping is a programming error or
a token Telegram refuses: logged CRITICAL, and the service stops loudly
(`fail_service`), like a dead writer or step actor.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import structlog
from aiohttp import web

from transcriber.pipeline.intake import AudioLimits
from transcriber.pipeline.progress import Progress, load_progress
from transcriber.ports import Duty
from transcriber.providers.recognizers import capabilities_of
from transcriber.service.duties import DutyWork, duty_ctx
from transcriber.service.fatal import fail_service
from transcriber.web import keys

if TYPE_CHECKING:
    from aiogram import Bot

    from transcriber.bot.door import TelegramDoor

log = structlog.get_logger(__name__)

BOT: web.AppKey[Bot] = web.AppKey("telegram_bot")
DOOR: web.AppKey[TelegramDoor] = web.AppKey("telegram_door")
TASK_NAME = "telegram-door"
STATUS_TASK_NAME = "telegram-status"


async def telegram_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    if settings.telegram.token is None:
        log.info("telegram_disabled")
        yield
        return
    # aiogram is imported only when a bot is configured (it is slow to import).
    from transcriber.bot.client import make_bot  # noqa: PLC0415
    from transcriber.bot.notifier import TelegramNotifier  # noqa: PLC0415

    bot = make_bot(settings.telegram)
    app[BOT] = bot
    if keys.NOTIFIER not in app:
        app[keys.NOTIFIER] = TelegramNotifier(bot, settings=settings.telegram,
                                              clock=app[keys.CLOCK])
    try:
        yield
    finally:
        await bot.session.close()


def polling_work(app: web.Application) -> DutyWork | None:
    """The door and the status actor, built now; the work polls and edits while held."""
    bot = app.get(BOT)
    if bot is None:
        return None
    from transcriber.bot.door import DoorParts, TelegramDoor  # noqa: PLC0415 - see telegram_ctx
    from transcriber.bot.status import StatusActor, worth_showing  # noqa: PLC0415

    settings = app[keys.SETTINGS]
    readers, clock = app[keys.READERS], app[keys.CLOCK]

    async def progress(record_id: str) -> Progress | None:
        return worth_showing(await load_progress(
            readers, record_id, settings=settings, now=clock.now(),
            capabilities=capabilities_of(app.get(keys.RECOGNIZER), settings)))

    door = TelegramDoor(bot, settings=settings.telegram, parts=DoorParts(
        writer=app[keys.WRITER], readers=readers, files=app[keys.FILES],
        transcoder=app[keys.TRANSCODER], clock=clock,
        limits=AudioLimits.of(settings.server), progress=progress,
        answerer=app.get(keys.ANSWERER), ask_prompt_chars=settings.ask.max_prompt_chars,
    ))
    app[DOOR] = door
    status = StatusActor(bot, settings=settings.telegram, readers=readers,
                         writer=app[keys.WRITER], clock=clock, progress=progress)

    @contextlib.asynccontextmanager
    async def work() -> AsyncIterator[None]:
        stopping = asyncio.Event()
        task = asyncio.create_task(door.run(stopping), name=TASK_NAME)

        def on_done(finished: asyncio.Task[None]) -> None:
            if stopping.is_set() or finished.cancelled():
                return
            error = finished.exception() or RuntimeError(f"{TASK_NAME} ended")
            log.critical("telegram_door_died", error=type(error).__name__)
            fail_service(app, error)

        task.add_done_callback(on_done)
        status_task = asyncio.create_task(status.run(stopping), name=STATUS_TASK_NAME)
        try:
            yield
        finally:
            await stop_door(door, task, stopping,
                            grace_seconds=settings.server.shutdown_graceful_seconds)
            # An edit in flight is cut: the next start shows the record's stage again.
            status_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await status_task

    return work


bot_ctx = duty_ctx(Duty.TELEGRAM_POLLING, polling_work)


async def stop_door(door: TelegramDoor, task: asyncio.Task[None], stopping: asyncio.Event,
                    *, grace_seconds: float) -> None:
    """Let the update in hand finish (within the grace), then confirm what was done."""
    stopping.set()
    if not task.done() and door.busy:
        await asyncio.wait({task}, timeout=max(grace_seconds, 0.0))
    if not task.done():
        task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.wait({task})
    if not task.cancelled() and task.exception() is not None:
        log.error("telegram_door_failed", error=type(task.exception()).__name__)
    await door.confirm()
    log.info("telegram_polling_stopped", offset=door.offset)
