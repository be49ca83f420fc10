"""The webhook delivery actor: sends the pending deliveries whose time has come.

A delivery row is written in the writer transaction of its event
(`db.commands.webhooks.enqueue_event`), so it survives anything that
happens after that commit, `kill -9` included: this actor looks for due rows
every `webhooks.poll_seconds` (and when woken), so after a restart it sends
what is still pending. At least once: a process killed after the receiver
took a delivery but before its result was written sends it again, under the
same `X-Transcriber-Delivery` id, which is how a receiver drops the
duplicate.

Each attempt is one POST (`ports.WebhookTransport`) of the delivery's body,
signed afresh (`webhook_signature.sign`, the attempt's time in it); the body
is built at the first attempt — the record's card as `GET
/app/audiorecords/{id}` answers it, without `transcript` and `utterances`,
or, for a deletion or a record gone since, what was known when the event was
written — and written to the delivery's row (`PinBody`) before that attempt
is sent, so every later try, one after a crash included, sends the same bytes. What an answer
means is `webhook_rules.verdict`: a 2xx delivers, a 410 disables the webhook,
anything else is tried again (1 s doubling to 10 min, a longer `Retry-After`
wins) until `webhooks.delivery_window_hours` have passed since the event.
Up to `webhooks.concurrency` deliveries go at once. Logs name the webhook
and the delivery, never the URL, the secret or the payload.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import orjson
import structlog

from transcriber.clock import Clock, format_time, parse_time, rest
from transcriber.db import reads
from transcriber.db.commands.webhooks import PinBody, RecordAttempt
from transcriber.db.reads.webhooks import DueDelivery
from transcriber.observability import WEBHOOK_DELIVERIES, WEBHOOK_QUEUE_DEPTH
from transcriber.ports import WebhookTransport, WebhookUnreachable
from transcriber.settings import WebhookSettings
from transcriber.webhook_rules import TargetRefused, retry_after_seconds, verdict
from transcriber.webhook_signature import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    sign,
)

if TYPE_CHECKING:
    from transcriber.db.readers import ReaderPool
    from transcriber.db.writer import Writer

log = structlog.get_logger(__name__)

RecordCard = Callable[[str, str], Awaitable[dict[str, Any] | None]]
"""(record id, owner id) → the record's card as the API answers it; None when gone."""

TRANSCRIPT_FIELDS = ("transcript", "utterances")
"""The card's fields a delivery leaves out: the transcript's text stays in the archive."""


class WebhookDelivery:
    def __init__(self, *, writer: Writer, readers: ReaderPool, clock: Clock,
                 transport: WebhookTransport, settings: WebhookSettings,
                 card: RecordCard) -> None:
        self._writer = writer
        self._readers = readers
        self._clock = clock
        self._transport = transport
        self._settings = settings
        self._card = card
        self._wake = asyncio.Event()

    def wake(self) -> None:
        """Look for due deliveries now (not at the next poll)."""
        self._wake.set()

    async def run(self, stopping: asyncio.Event) -> None:
        """Send due deliveries until `stopping` is set."""
        while not stopping.is_set():
            self._wake.clear()  # before the round: a wake during it brings another
            try:
                await self.round()
            except Exception as exc:  # a dead writer or a bug: keep the actor alive
                log.error("webhook_round_failed", error=type(exc).__name__)
            await rest(self._clock, self._settings.poll_seconds, self._wake, stopping)

    async def round(self) -> int:
        """Send every delivery due now, `concurrency` at a time; how many were tried.

        A delivery whose attempt could not be written stays due: it is not
        tried again in this round (the next poll's round takes it)."""
        tried: set[str] = set()
        batch = self._settings.concurrency
        while True:
            due = await reads.webhooks.due_deliveries(
                self._readers, now=format_time(self._clock.now()), limit=batch)
            fresh = [d for d in due if d.id not in tried]
            if fresh:
                async with asyncio.TaskGroup() as group:
                    for delivery in fresh:
                        group.create_task(self.attempt(delivery), name="webhook-attempt")
                tried.update(d.id for d in fresh)
            if len(due) < batch or len(fresh) < len(due):
                break
        WEBHOOK_QUEUE_DEPTH.set(await reads.webhooks.queue_depth(self._readers))
        return len(tried)

    async def attempt(self, due: DueDelivery) -> None:
        """One try of one delivery, its result written (never raises but for the writer)."""
        body = due.body
        if body is None:
            body = await self._writer.ask(PinBody(delivery_id=due.id,
                                                  body=await self.payload(due)))
            if body is None:  # deleted with its webhook meanwhile: nothing to send
                return
        now = self._clock.now()
        headers = {
            "Content-Type": "application/json",
            EVENT_HEADER: due.event,
            DELIVERY_HEADER: due.id,
            SIGNATURE_HEADER: sign(due.secret, int(now.timestamp()), body),
        }
        status: int | None = None
        error: str | None = None
        retry_after: float | None = None
        try:
            answer = await self._transport.post(due.url, body, headers)
        except TargetRefused as exc:
            error = f"refused_{exc.reason}"
        except WebhookUnreachable as exc:
            error = exc.reason
        except Exception as exc:  # a transport bug must not end the actor
            error = "error"
            log.error("webhook_post_failed", webhook_id=due.webhook_id, delivery_id=due.id,
                      error=type(exc).__name__)
        else:
            status = answer.status
            retry_after = retry_after_seconds(answer.retry_after, self._clock.now())
        settings = self._settings
        decided = verdict(status, failures=due.attempts + 1, retry_after=retry_after,
                          created_at=parse_time(due.created_at), now=self._clock.now(),
                          window_hours=settings.delivery_window_hours,
                          base=settings.retry_base_seconds, cap=settings.retry_cap_seconds)
        await self._writer.ask(RecordAttempt(
            delivery_id=due.id, webhook_id=due.webhook_id, outcome=decided.outcome,
            status=status, error=error, body=body, delay_seconds=decided.delay_seconds))
        WEBHOOK_DELIVERIES.labels(decided.outcome).inc()
        fields = {"webhook_id": due.webhook_id, "delivery_id": due.id,
                  "webhook_event": due.event, "record_id": due.record_id,
                  "attempts": due.attempts + 1, "status": status}
        if decided.outcome == "delivered":
            log.info("webhook_delivered", **fields)
        elif decided.outcome == "retry":
            log.warning("webhook_retry", **fields, error=error,
                        retry_in=round(decided.delay_seconds, 1))
        elif decided.outcome == "gone":
            log.warning("webhook_disabled_gone", **fields)
        else:
            log.error("webhook_failed", **fields, error=error)

    async def payload(self, due: DueDelivery) -> bytes:
        """The delivery's body: `{"id", "event", "created_at", "record"}`."""
        record: dict[str, Any] | None = None
        if due.event != "record.deleted":
            try:
                record = await self._card(due.record_id, due.owner_id)
            except Exception as exc:  # the card cannot be read: what was known will do
                log.warning("webhook_card_unreadable", delivery_id=due.id,
                            record_id=due.record_id, error=type(exc).__name__)
        if record is None:
            record = orjson.loads(due.record_json)
        else:
            record = {k: v for k, v in record.items() if k not in TRANSCRIPT_FIELDS}
        return orjson.dumps({"id": due.id, "event": due.event, "created_at": due.created_at,
                             "record": record})
