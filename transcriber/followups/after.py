"""Replies and halt notices through the durable outbox (P6, P10).

The outbox row of a reply is written in the transaction of `done`
(`ReplyWithTranscript.apply`), that of a halt notice in the transaction of
the halt (`Halt(notify=True)`), and only in a run with the bot: a record that
finishes while the bot does not run is `bot_not_running` (WARN) and is not
sent later; a Telegram record without a chat is `chat_missing` (ERROR). After
the commit the step actor asks the outbox to send at once; a failed send
undoes nothing and never fails a step. What is logged: the record id and the
reason, never transcript text or sender messages.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import structlog

from transcriber.db import reads
from transcriber.db.commands.describe import enqueue_description
from transcriber.db.commands.telegram import enqueue_reply
from transcriber.observability import REPLIES_UNDELIVERED
from transcriber.pipeline import policy
from transcriber.ports import Notifier, ReplyAddress, Undelivered, UndeliveredReason
from transcriber.stages import HaltReason

if TYPE_CHECKING:
    from transcriber.db.commands.pipeline import Effect
    from transcriber.db.readers import ReaderPool
    from transcriber.db.writer import WriteContext
    from transcriber.followups.reply import Outbox
    from transcriber.quality import Quality

log = structlog.get_logger(__name__)


class NullNotifier:
    """The notifier of a run without the bot: every send is `bot_not_running`."""

    async def send_transcript(self, address: ReplyAddress, text: str, *, title: str = "",
                              brief: str = "", quality: Quality | None = None) -> int | None:
        raise Undelivered("bot_not_running")

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> int | None:
        raise Undelivered("bot_not_running")


class Delivered(StrEnum):
    QUEUED = "queued"  # in the outbox (sent at once, or later by the delivery actor)
    NO_REPLY = "no_reply"  # an HTTP record: nobody to answer, nothing logged
    UNDELIVERED = "undelivered"


NotifierSource = Callable[[], Notifier]
"""Read at each delivery, so a bot started after the pipeline is still used."""


def running_notifier(source: NotifierSource) -> Callable[[], Notifier | None]:
    """The notifier, or None in a run without the bot (the outbox then waits)."""

    def current() -> Notifier | None:
        notifier = source()
        return None if isinstance(notifier, NullNotifier) else notifier

    return current


class Delivery:
    """What follows a record's `done` and halts: the sender's reply (the Telegram outbox)
    and the description (the describer's queue, when `wake_describer` is given: a run
    whose describer is not `off`)."""

    def __init__(self, readers: ReaderPool, notifier_source: NotifierSource,
                 outbox: Outbox | None = None, *,
                 wake_describer: Callable[[], None] | None = None) -> None:
        self._readers = readers
        self._source = notifier_source
        self.outbox = outbox
        self._wake_describer = wake_describer

    def bot_running(self) -> bool:
        return self.outbox is not None and not isinstance(self._source(), NullNotifier)

    def bind(self, effects: tuple[Effect, ...], *, finishing: bool = False) -> tuple[Effect, ...]:
        """The effects as this run writes them: no outbox row without the bot; with the
        advance to `done` (`finishing`), the description's job, when a describer runs."""
        running = self.bot_running()
        bound = tuple(dataclasses.replace(e, enqueue=running)
                      if isinstance(e, ReplyWithTranscript) else e for e in effects)
        if finishing and self._wake_describer is not None:
            bound = (*bound, QueueDescription())
        return bound

    def describer_has_work(self) -> None:
        if self._wake_describer is not None:
            self._wake_describer()

    async def halt_notice(self, record_id: str, reason: HaltReason) -> Delivered:
        """After the halt (and its outbox row) is stored: send it, or say why not."""
        return await self._deliver(record_id, "halt_notice")

    async def transcript(self, record_id: str) -> Delivered:
        """After `done` (and its outbox row) is stored: send it, or say why not."""
        return await self._deliver(record_id, "transcript")

    async def _deliver(self, record_id: str, kind: str) -> Delivered:
        target = await reads.records.reply_target(self._readers, record_id=record_id)
        if target is None:
            return Delivered.NO_REPLY
        address = ReplyAddress(
            record_id=record_id,
            source="telegram" if target.source == "telegram" else "http",
            tg_chat_id=target.tg_chat_id,
            tg_message_id=target.tg_message_id,
        )
        plan = policy.delivery_plan(address, bot_running=self.bot_running())
        if isinstance(plan, policy.NoReply):
            return Delivered.NO_REPLY
        if isinstance(plan, policy.Undeliverable):
            return _undelivered(record_id, kind, plan.reason)
        assert self.outbox is not None
        try:
            await self.outbox.deliver_record(record_id)
        except Exception as exc:  # the row stays pending; the delivery actor tries again
            log.warning("reply_send_deferred", record_id=record_id, kind=kind,
                        error=type(exc).__name__)
            self.outbox.wake()
        return Delivered.QUEUED


def _undelivered(record_id: str, kind: str, reason: UndeliveredReason) -> Delivered:
    REPLIES_UNDELIVERED.labels(reason).inc()
    if policy.undelivered_level(reason) == "error":
        log.error("reply_undelivered", record_id=record_id, kind=kind, reason=reason)
    else:
        log.warning("reply_undelivered", record_id=record_id, kind=kind, reason=reason)
    return Delivered.UNDELIVERED


@runtime_checkable
class AfterCommit(Protocol):
    """An effect that also acts once its advance has landed (and only then).

    The step actor calls `after_commit` for each such effect of an `Advanced`
    outcome whose write was applied; a stale write calls nothing (P3: a step
    that lost its claim replies to no one).
    """

    async def after_commit(self, delivery: Delivery, *, record_id: str) -> None: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyWithTranscript:
    """Effect for the final step: answer the sender with the stored transcript.

    In the transaction of `done` it writes the outbox row (`enqueue`: set by
    `Delivery.bind`, False in a run without the bot); after the advance lands
    it asks for the row to be sent (P6: never fails the step).
    """

    enqueue: bool = True

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        if self.enqueue:
            await enqueue_reply(ctx, record_id=record_id, kind="transcript")

    async def after_commit(self, delivery: Delivery, *, record_id: str) -> None:
        await delivery.transcript(record_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class QueueDescription:
    """Effect of the advance to `done`: the record's description is asked for in the same
    transaction (a durable job: a crash cannot lose it), and the describer woken once the
    advance landed. Not a stage: the record is `done` whatever becomes of the job."""

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        await enqueue_description(ctx, record_id=record_id)

    async def after_commit(self, delivery: Delivery, *, record_id: str) -> None:
        delivery.describer_has_work()
