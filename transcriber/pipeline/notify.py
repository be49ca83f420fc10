"""Replies and halt notices: best effort, after the fact (P6, P10).

A reply goes out only *after* the stage it reports is stored, and a notice
only after the halt is stored; so a delivery that fails cannot undo either
and never fails a step. What is logged: the record id and the reason, never
transcript text or sender messages.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import structlog

from transcriber.db import queries as q
from transcriber.observability import REPLIES_UNDELIVERED
from transcriber.pipeline import policy
from transcriber.ports import Notifier, ReplyAddress, Undelivered, UndeliveredReason
from transcriber.stages import HaltReason

if TYPE_CHECKING:
    from transcriber.db.readers import ReaderPool
    from transcriber.db.writer import WriteContext

log = structlog.get_logger(__name__)

SEND_FAILED = "send_failed"
"""Metric reason for a notifier that broke with an unexpected error."""


class NullNotifier:
    """The notifier of a run without the bot: every send is `bot_not_running`."""

    async def send_transcript(self, address: ReplyAddress, text: str) -> None:
        raise Undelivered("bot_not_running")

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> None:
        raise Undelivered("bot_not_running")


class Delivered(StrEnum):
    SENT = "sent"
    NO_REPLY = "no_reply"  # an HTTP record: nobody to answer, nothing logged
    UNDELIVERED = "undelivered"


NotifierSource = Callable[[], Notifier]
"""Read at each delivery, so a bot started after the pipeline is still used."""


class Delivery:
    def __init__(self, readers: ReaderPool, notifier_source: NotifierSource) -> None:
        self._readers = readers
        self._source = notifier_source

    async def halt_notice(self, record_id: str, reason: HaltReason) -> Delivered:
        """Tell the sender the record stopped; call once, after the halt is stored."""
        return await self._deliver(
            record_id, "halt_notice",
            lambda notifier, address: notifier.send_halt_notice(address, reason),
        )

    async def transcript(self, record_id: str) -> Delivered:
        """Send the stored transcript; call after the record's advance landed."""
        row = await self._readers.fetch_one(q.pipeline.SELECT_TRANSCRIPT, {"record_id": record_id})
        text: str = row["contents"] if row is not None else ""
        return await self._deliver(
            record_id, "transcript",
            lambda notifier, address: notifier.send_transcript(address, text),
        )

    async def _deliver(
        self,
        record_id: str,
        kind: str,
        send: Callable[[Notifier, ReplyAddress], Awaitable[None]],
    ) -> Delivered:
        row = await self._readers.fetch_one(q.pipeline.SELECT_REPLY_ADDRESS, {"id": record_id})
        if row is None:
            return Delivered.NO_REPLY
        address = ReplyAddress(
            record_id=record_id,
            source="telegram" if row["source"] == "telegram" else "http",
            tg_chat_id=row["tg_chat_id"],
            tg_message_id=row["tg_message_id"],
        )
        notifier = self._source()
        plan = policy.delivery_plan(address, bot_running=not isinstance(notifier, NullNotifier))
        if isinstance(plan, policy.NoReply):
            return Delivered.NO_REPLY
        if isinstance(plan, policy.Undeliverable):
            return _undelivered(record_id, kind, plan.reason)
        try:
            await send(notifier, address)
        except Undelivered as exc:
            return _undelivered(record_id, kind, exc.reason)
        except Exception as exc:
            REPLIES_UNDELIVERED.labels(SEND_FAILED).inc()
            log.warning("reply_undelivered", record_id=record_id, kind=kind,
                        reason=SEND_FAILED, error=type(exc).__name__)
            return Delivered.UNDELIVERED
        return Delivered.SENT


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

    Writes nothing in the transaction; after the advance lands it hands the
    transcript to the notifier through `Delivery` (P6: never fails the step).
    Put it after the effect that saves the transcript.
    """

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        return None

    async def after_commit(self, delivery: Delivery, *, record_id: str) -> None:
        await delivery.transcript(record_id)
