"""The living status message: the bot's first answer, edited as the record moves.

`render_status` is the one place the text is made, from the record row and an
optional progress object: the progress and the estimated time left of every
record on its way, queued ones and short ones included (`pipeline.progress`,
given by the Telegram lifecycle context).

`StatusActor` looks at the live status messages every
`telegram.status_poll_seconds`, renders each, and edits the ones whose text
changed, at most one edit per chat every `telegram.status_edit_seconds`
(`EditThrottle`); a 429 holds that chat for its `retry_after`. "message is
not modified" counts as shown; a message Telegram no longer has (deleted)
stops being followed. At `done` or a halt the last text is shown and the
message is no longer followed; so is one in a group chat that may no longer
see its record (`reads.telegram.group_sees`: docs/telegram.md "Group chats").
Nothing of the text is logged.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import structlog
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramRetryAfter

from transcriber.bot import rules, texts
from transcriber.bot.texts import T
from transcriber.core.clock import Clock, rest
from transcriber.db import reads
from transcriber.db.commands.telegram import MarkStatusShown
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.telegram import LiveStatus
from transcriber.db.writer import Writer
from transcriber.domain.stages import Stage
from transcriber.settings import TelegramSettings

log = structlog.get_logger(__name__)

STATUSES_PER_ROUND = 200

_STAGES: Mapping[str, T] = {
    Stage.UPLOADED: T.STAGE_UPLOADED, Stage.NORMALIZED: T.STAGE_NORMALIZED,
    Stage.SUBMITTED: T.STAGE_SUBMITTED, Stage.TRANSCRIBED: T.STAGE_TRANSCRIBED,
    Stage.DONE: T.STAGE_DONE,
}


# The words of what is happening now, by the progress object's stage: the record's
# stage names what is achieved (a record `normalized` is being recognized locally).
_WORKING: Mapping[str, T] = {"normalize": T.STAGE_PREPARING, "recognize": T.STAGE_SUBMITTED}


class StatusProgress(Protocol):
    """What the progress object offers (parts done/total too)."""

    @property
    def stage(self) -> str: ...

    @property
    def fraction(self) -> float: ...

    @property
    def eta_seconds(self) -> float | None: ...


ProgressSource = Callable[[str], Awaitable["StatusProgress | None"]]


async def _no_progress(record_id: str) -> StatusProgress | None:
    return None


ShownProgress = TypeVar("ShownProgress", bound=StatusProgress)


def worth_showing(progress: ShownProgress | None) -> ShownProgress | None:
    """Pure: progress the sender learns something from: some work done, or an estimate
    of the time left (a queued record has one from its first second)."""
    if progress is None or (progress.fraction <= 0 and progress.eta_seconds is None):
        return None
    return progress


def stage_text(lang: texts.Language, *, state: str, halted: bool, halt_reason: str | None,
               progress: StatusProgress | None = None) -> str:
    """A record's stage in words (with its recognition progress, when given)."""
    if halted:
        return texts.say(lang, T.STAGE_HALTED, why=texts.halt_reason_text(lang, halt_reason))
    if progress is None or state == Stage.DONE:
        return texts.say(lang, _STAGES.get(state, T.STAGE_UPLOADED))
    stage = texts.say(lang, _WORKING.get(progress.stage) or _STAGES.get(state, T.STAGE_UPLOADED))
    percent = int(max(0.0, min(progress.fraction, 1.0)) * 100)
    if progress.eta_seconds is None:
        return texts.say(lang, T.PROGRESS, stage=stage, percent=percent)
    return texts.say(lang, T.PROGRESS_ETA, stage=stage, percent=percent,
                     eta=texts.duration(lang, progress.eta_seconds))


def render_status(lang: texts.Language, *, state: str, halted: bool, halt_reason: str | None,
                  progress: StatusProgress | None = None) -> str:
    """The status message's text for the record as it is now."""
    if state == Stage.UPLOADED and not halted and progress is None:
        return texts.say(lang, T.ACCEPTED)  # the first answer itself: nothing to edit yet
    return texts.say(lang, T.STATUS_MESSAGE, stage=stage_text(
        lang, state=state, halted=halted, halt_reason=halt_reason, progress=progress))


def is_final(*, state: str, halted: bool) -> bool:
    return halted or state == Stage.DONE


@dataclass(slots=True)
class EditThrottle:
    """At most one edit per chat every `interval` seconds; a 429 holds the chat longer."""

    interval: float
    _next: dict[int, float] = field(default_factory=dict)

    def may_edit(self, chat_id: int, now: float) -> bool:
        return now >= self._next.get(chat_id, float("-inf"))

    def edited(self, chat_id: int, now: float) -> None:
        self._next[chat_id] = max(self._next.get(chat_id, now), now + self.interval)

    def hold(self, chat_id: int, until: float) -> None:
        self._next[chat_id] = max(self._next.get(chat_id, until), until)


class StatusActor:
    def __init__(self, bot: Bot, *, settings: TelegramSettings, readers: ReaderPool,
                 writer: Writer, clock: Clock, progress: ProgressSource | None = None) -> None:
        self._bot = bot
        self._settings = settings
        self._readers = readers
        self._writer = writer
        self._clock = clock
        self._progress = progress or _no_progress
        self.throttle = EditThrottle(settings.status_edit_seconds)

    async def run(self, stopping: asyncio.Event) -> None:
        while not stopping.is_set():
            try:
                await self.round()
            except Exception as exc:  # a bug or a dead writer: the next round tries again
                log.error("status_round_failed", error=type(exc).__name__)
            await rest(self._clock, self._settings.status_poll_seconds, stopping)

    async def round(self) -> None:
        for status in await reads.telegram.live_statuses(self._readers,
                                                         limit=STATUSES_PER_ROUND):
            await self._follow(status)

    async def _follow(self, status: LiveStatus) -> None:
        record_id, chat_id, state = status.record_id, status.chat_id, status.state
        if chat_id < 0 and not await reads.telegram.group_sees(self._readers, chat_id=chat_id,
                                                               record_id=record_id):
            # A group that may no longer see the record hears nothing more about it.
            await self._writer.ask(MarkStatusShown(record_id=record_id,
                                                   shown_text=status.shown_text, live=False))
            log.info("status_not_visible", record_id=record_id)
            return
        halted = status.halted_at is not None
        lang = texts.as_language(status.language, forced=self._settings.language)
        text = render_status(lang, state=state, halted=halted, halt_reason=status.halt_reason,
                             progress=None if halted else await self._progress(record_id))
        final = is_final(state=state, halted=halted)
        if text == status.shown_text:
            if final:
                await self._writer.ask(MarkStatusShown(record_id=record_id, shown_text=text,
                                                       live=False))
            return
        now = self._clock.monotonic()
        if not self.throttle.may_edit(chat_id, now):
            return
        try:
            await self._bot.edit_message_text(text, chat_id=chat_id,
                                              message_id=status.message_id)
        except TelegramRetryAfter as exc:
            self.throttle.hold(chat_id, now + exc.retry_after)
            log.info("status_edit_throttled", record_id=record_id, retry_after=exc.retry_after)
            return
        except TelegramBadRequest as exc:
            if "message is not modified" not in exc.message.lower():
                # The message was deleted or can no longer be edited: stop following it.
                log.warning("status_edit_refused", record_id=record_id,
                            error=type(exc).__name__)
                await self._writer.ask(MarkStatusShown(record_id=record_id,
                                                       shown_text=status.shown_text,
                                                       live=False))
                return
        except rules.ANY_API_ERRORS as exc:
            self.throttle.edited(chat_id, now)  # wait a turn before the next try
            log.warning("status_edit_failed", record_id=record_id, error=type(exc).__name__)
            return
        self.throttle.edited(chat_id, now)
        await self._writer.ask(MarkStatusShown(record_id=record_id, shown_text=text,
                                               live=not final))
        log.info("status_edited", record_id=record_id, stage=state, final=final)
