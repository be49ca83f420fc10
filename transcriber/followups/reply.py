"""The reply follow-up: sends the Telegram outbox, in order per chat.

A row is written in the writer transaction of `done` or of a halt
(`db.commands.telegram.enqueue_reply`), so neither a crash nor a retry of the
step can lose or double it. Right after that commit the step actor asks for
the record's chat to be sent at once (`deliver_record`); whatever could not go
then (network, 429, 5xx, a process killed before the send) is sent by `run`,
the queue worker's loop (`followups.queue`), which looks for due rows every
`telegram.delivery_poll_seconds`, and so
after a restart sends what is still pending. Of the service's processes only the
one holding the outbox duty sends (docs/operations.md, "Roles").

Per chat one send at a time, oldest first: a row waiting for its retry holds
the later rows of its chat back. A failure is retried by the one rule
(`followups.retry`: backoff, a longer `retry_after` asked for wins) unless the
next try would come after `telegram.delivery_window_hours` since the row was
written; a refusal (`Undelivered`: 403, chat not found) ends the row at once.
Ended rows are logged and counted by reason.

A reply starts with the record's title (and, for a recording over a minute, its
brief): the describer writes them after `done`, so a reply whose record's
description is still pending waits for it, at most `describer.reply_wait_seconds`
after the row was written (the describer wakes the outbox when it is stored or
has failed); then it goes with what there is.

A group chat (its id is negative) is told about a record only while it may see it:
the record is in the space the group is linked to and the link holds
(`LinkedGroup.live`); a record moved out, a group unlinked or a link lapsed ends the
row unsent (`not_visible`), checked right before each try.

Known window: a process killed after Telegram took a message but before
`MarkSent` landed sends it again after the restart (one round trip wide).
Nothing of the text is logged.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta
from enum import StrEnum
from typing import TYPE_CHECKING

import structlog

from transcriber.core.clock import Clock, format_time, parse_time
from transcriber.core.observability import OUTBOX_DEPTH, REPLIES_UNDELIVERED
from transcriber.db import reads
from transcriber.db.commands.telegram import MarkEnded, MarkRetry, MarkSent
from transcriber.db.reads.telegram import OutboxRow
from transcriber.domain import describe as descriptions
from transcriber.domain.stages import HaltReason
from transcriber.domain.transcripts import BadStructure, reply_text
from transcriber.followups.parts import Moment, Parts
from transcriber.followups.queue import QueueWorker
from transcriber.followups.retry import RetryRule, asked_of, asked_seconds
from transcriber.pipeline import policy
from transcriber.ports import Notifier, ReplyAddress, Undelivered, UndeliveredReason
from transcriber.settings import TelegramSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from transcriber.db.readers import ReaderPool
    from transcriber.db.writer import Writer

log = structlog.get_logger(__name__)

ROWS_PER_ROUND = 100


NAME = "telegram-outbox"


class Delivered(StrEnum):
    QUEUED = "queued"  # in the outbox (sent at once, or later by the worker's rounds)
    NO_REPLY = "no_reply"  # an HTTP record: nobody to answer, nothing logged
    UNDELIVERED = "undelivered"


def build(parts: Parts) -> Outbox:
    """The reply's worker: in every process (its `after` sends at once where it is
    `active`, and says why a record gets no reply)."""
    settings = parts.settings
    return Outbox(writer=parts.writer, readers=parts.readers, clock=parts.clock,
                  notifier=parts.notifier, settings=settings.telegram,
                  # A reply waits for its record's title while a describer runs.
                  reply_wait_seconds=0.0 if parts.describers is None
                  else settings.describer.reply_wait_seconds)


class Outbox(QueueWorker):
    event_prefix = "outbox"

    def __init__(self, *, writer: Writer, readers: ReaderPool, clock: Clock,
                 notifier: Callable[[], Notifier | None], settings: TelegramSettings,
                 reply_wait_seconds: float = 0.0) -> None:
        super().__init__(clock=clock, poll_seconds=settings.delivery_poll_seconds)
        self._writer = writer
        self._reply_wait = timedelta(seconds=reply_wait_seconds)
        self._readers = readers
        self._notifier = notifier
        self._settings = settings
        self._rule = RetryRule(base_seconds=settings.retry_base_seconds,
                               cap_seconds=settings.retry_cap_seconds,
                               window=timedelta(hours=settings.delivery_window_hours))
        self._locks: dict[int, asyncio.Lock] = {}

    async def after(self, moment: Moment) -> None:
        await self.reply_after(moment)

    async def reply_after(self, moment: Moment) -> Delivered:
        """After `done` or the halt (and its row) is stored: send it, or say why not."""
        record_id = moment.record_id
        kind = "transcript" if moment.occasion == "done" else "halt_notice"
        target = await reads.records.reply_target(self._readers, record_id=record_id)
        if target is None:
            return Delivered.NO_REPLY
        address = ReplyAddress(
            record_id=record_id,
            source="telegram" if target.source == "telegram" else "http",
            tg_chat_id=target.tg_chat_id,
            tg_message_id=target.tg_message_id,
        )
        plan = policy.delivery_plan(address, bot_running=self._notifier() is not None)
        if isinstance(plan, policy.NoReply):
            return Delivered.NO_REPLY
        if isinstance(plan, policy.Undeliverable):
            REPLIES_UNDELIVERED.labels(plan.reason).inc()
            report = log.error if policy.undelivered_level(plan.reason) == "error" \
                else log.warning
            report("reply_undelivered", record_id=record_id, kind=kind, reason=plan.reason)
            return Delivered.UNDELIVERED
        try:
            await self.deliver_record(record_id)
        except Exception as exc:  # the row stays pending; the worker's rounds try again
            log.warning("reply_send_deferred", record_id=record_id, kind=kind,
                        error=type(exc).__name__)
            self.wake()
        return Delivered.QUEUED

    async def deliver_record(self, record_id: str) -> None:
        """Send the record's pending rows now (with the earlier rows of its chat); in a
        process without the outbox duty they wait for the holder's next round."""
        if not self.active:
            return
        chat_id = await reads.telegram.chat_of_record(self._readers, record_id=record_id)
        if chat_id is not None:
            await self.deliver_chat(chat_id)

    async def round(self, stopping: asyncio.Event | None = None) -> int:
        """One look for due rows; every chat found is sent in order (how many chats)."""
        chats = 0
        if self._notifier() is not None:
            for chat_id in await reads.telegram.due_chats(self._readers, now=self._now(),
                                                          limit=ROWS_PER_ROUND):
                await self.deliver_chat(chat_id)
                chats += 1
        OUTBOX_DEPTH.set(await reads.telegram.outbox_depth(self._readers))
        return chats

    async def deliver_chat(self, chat_id: int) -> None:
        lock = self._locks.setdefault(chat_id, asyncio.Lock())
        async with lock:
            rows = await reads.telegram.pending_of_chat(self._readers, chat_id=chat_id,
                                                        limit=ROWS_PER_ROUND)
            for row in rows:
                if row.next_attempt_at > self._now() or not await self._send(row):
                    return  # the chat waits for this row: none overtakes it

    async def _send(self, row: OutboxRow) -> bool:
        """Try one row; False when it stays pending (the chat waits for it)."""
        notifier = self._notifier()
        if notifier is None:
            return False
        record_id, kind = row.record_id, row.kind
        address = ReplyAddress(record_id=record_id, source="telegram",
                               tg_chat_id=row.chat_id, tg_message_id=row.reply_to,
                               language=row.language)
        if row.chat_id < 0 and not await reads.telegram.group_sees(
                self._readers, chat_id=row.chat_id, record_id=record_id):
            await self._end(row, "not_visible")
            return True
        try:
            if kind == "transcript":
                heading = await reads.describe.reply_heading(self._readers, record_id=record_id)
                if (heading is not None and heading.describe_state == "pending"
                        and self._clock.now() < parse_time(row.created_at) + self._reply_wait):
                    log.debug("reply_waits_for_description", record_id=record_id)
                    return False
                text = await transcript_for_reply(self._readers, record_id)
                title, brief = ("", "") if heading is None else descriptions.reply_heading(
                    title=heading.title, brief=heading.brief, duration_ms=heading.duration_ms,
                    transcript=text)
                quality = await reads.records.quality(self._readers, record_id=record_id)
                message_id = await notifier.send_transcript(address, text, title=title,
                                                            brief=brief, quality=quality)
            else:
                # A halt notice's row always has its reason.
                message_id = await notifier.send_halt_notice(
                    address, HaltReason(row.halt_reason or ""))
        except Undelivered as exc:
            await self._end(row, exc.reason)
            return True
        except Exception as exc:
            return await self._retry_or_end(row, exc)
        await self._writer.ask(MarkSent(outbox_id=row.id, message_id=message_id))
        log.info("reply_delivered", record_id=record_id, kind=kind, attempts=row.attempts + 1)
        return True

    async def _retry_or_end(self, row: OutboxRow, error: Exception) -> bool:
        failures = row.attempts + 1
        now = self._clock.now()
        wait = self._rule.next_try(failures=failures,
                                   asked=asked_seconds(asked_of(error), now),
                                   created_at=parse_time(row.created_at), now=now)
        if wait is None:
            await self._end(row, "window_passed")
            return True
        await self._writer.ask(MarkRetry(outbox_id=row.id, delay_seconds=wait))
        log.warning("reply_retry", record_id=row.record_id, kind=row.kind,
                    attempts=failures, error=type(error).__name__, retry_in=wait)
        return False

    async def _end(self, row: OutboxRow, reason: UndeliveredReason) -> None:
        await self._writer.ask(MarkEnded(outbox_id=row.id, reason=reason))
        REPLIES_UNDELIVERED.labels(reason).inc()
        report = log.error if policy.undelivered_level(reason) == "error" else log.warning
        report("reply_undelivered", record_id=row.record_id, kind=row.kind, reason=reason,
               attempts=row.attempts + 1)

    def _now(self) -> str:
        return format_time(self._clock.now())


async def transcript_for_reply(readers: ReaderPool, record_id: str) -> str:
    """The reply's text, made from the utterances (`transcripts.reply_text`); the
    stored plain text when the record has no readable structure."""
    try:
        utterances = await reads.transcripts.utterances(readers, record_id=record_id,
                                                        original=True)
    except BadStructure:
        log.warning("reply_structure_unreadable", record_id=record_id)
    else:
        if utterances is not None:
            return reply_text(utterances)
    text = await reads.transcripts.transcript_text(readers, record_id=record_id)
    return text if text is not None else ""
