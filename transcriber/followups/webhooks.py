"""The webhooks follow-up: sends the pending deliveries whose time has come.

A delivery row is written in the writer transaction of its event
(`db.commands.webhooks.enqueue_event`), so it survives anything that
happens after that commit, `kill -9` included: the queue worker (`followups.queue`)
looks for due rows every `webhooks.poll_seconds` (and when woken), so after a restart it sends
what is still pending. At least once: a process killed after the receiver
took a delivery but before its result was written sends it again, under the
same `X-Transcriber-Delivery` id, which is how a receiver drops the
duplicate.

Each attempt is one POST (`ports.WebhookTransport`) of the delivery's body,
signed afresh (`domain.webhooks.sign`, the attempt's time in it); the body
is built at the first attempt — the record's card as `GET
/app/audiorecords/{id}` answers it, without `transcript` and `utterances`,
or, for a deletion or a record gone since, what was known when the event was
written — and written to the delivery's row (`PinBody`) before that attempt
is sent, so every later try, one after a crash included, sends the same bytes. A
space's webhook (its admins', `space_id`) gets every event of a record in the space,
its card as any member sees it (`role` `viewer`, no shares, no voice suggestions: the
least a member is shown); before each try of such a delivery the record must still be
in the space, else the delivery ends unsent (`left_space`): a record moved out stops
reaching the space's receiver. What an answer
means is `domain.webhooks.answered`: a 2xx delivers, a 410 disables the webhook,
anything else is tried again by the one rule (`followups.retry`: 1 s doubling
to 10 min, a longer `Retry-After` wins) unless that try would come after
`webhooks.delivery_window_hours` since the event.

Fair shares (docs/hostile-input.md, head-of-line blocking): each attempt is
a task of its own — no round waits for its slowest member — and up to
`webhooks.concurrency` go at once, at most `per_owner_concurrency` of one
person's webhooks and `per_host_concurrency` to one target host, so one
person's receivers that never answer hold a few slots, never the queue. A
target that does not answer at all (timeout, connection, name, refused
address) is backed off as a whole — none of its webhook's deliveries is
tried before `paused_until`, 1 s doubling to 10 min — and the webhook's
`health` says `failing` until it answers again. Logs name the webhook and
the delivery, never the URL, the secret or the payload.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from datetime import timedelta
from typing import TYPE_CHECKING, Any

import orjson
import structlog

from transcriber.core.clock import Clock, format_time, parse_time
from transcriber.core.observability import (
    WEBHOOK_DELIVERIES,
    WEBHOOK_IN_FLIGHT,
    WEBHOOK_QUEUE_DEPTH,
    WEBHOOK_TARGET_PAUSES,
)
from transcriber.db import reads
from transcriber.db.commands.webhooks import DropLeftSpace, PinBody, RecordAttempt
from transcriber.db.reads.webhooks import DueDelivery
from transcriber.domain.shapes import ShareBody, plain
from transcriber.domain.webhooks import (
    DELIVERY_HEADER,
    EVENT_HEADER,
    SIGNATURE_HEADER,
    DeliveryOutcome,
    TargetRefused,
    answered,
    parse_target,
    sign,
)
from transcriber.followups.card import Cards
from transcriber.followups.parts import Parts
from transcriber.followups.queue import QueueWorker
from transcriber.followups.retry import RetryRule, asked_seconds
from transcriber.ports import WebhookTransport, WebhookUnreachable
from transcriber.settings import WebhookSettings

if TYPE_CHECKING:
    from transcriber.db.readers import ReaderPool
    from transcriber.db.writer import Writer

log = structlog.get_logger(__name__)

CardReader = Callable[[str, str], Awaitable[dict[str, Any] | None]]
"""(record id, owner id) → the record's card as the API answers it; None when gone."""

MemberCardReader = Callable[[str, str], Awaitable[dict[str, Any] | None]]
"""(record id, a member's id) → the card as any member of the record's space sees it."""

TRANSCRIPT_FIELDS = ("transcript", "utterances")
"""The card's fields a delivery leaves out: the transcript's text stays in the archive."""

ROUND_LOOKS_MAX = 8
"""Looks for due deliveries in one round (each leaves out more busy webhooks)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Flight:
    task: asyncio.Task[bool]
    webhook_id: str
    owner_id: str
    host: str


def _host_of(url: str) -> str:
    try:
        return parse_target(url).host
    except TargetRefused:
        return ""  # the attempt itself refuses it at once


NAME = "webhook-delivery"


def build(parts: Parts) -> WebhookDelivery | None:
    """The webhooks' worker, where a transport and the card builder are (the doors'
    processes: the transport also checks a URL at registration)."""
    if parts.webhook_transport is None or parts.cards is None:
        return None
    return WebhookDelivery(writer=parts.writer, readers=parts.readers, clock=parts.clock,
                           transport=parts.webhook_transport,
                           settings=parts.settings.webhooks, card=_plain_cards(parts.cards),
                           member_card=_member_cards(parts.cards))


def _plain_cards(cards: Cards) -> CardReader:
    """The card as the API answers it to the owner (whose receivers these are: their
    role and the record's shares), as plain JSON values for the payload."""
    async def card(record_id: str, owner_id: str) -> dict[str, Any] | None:
        found = await cards.card(record_id, owner_id)
        if found is None:
            return None
        shares = [ShareBody(login=h.login, role=h.role.value, created_at=h.created_at)
                  for h in await reads.access.shares(cards.readers, record_id=record_id)]
        payload: dict[str, Any] = plain(replace(found, role="owner", shares=shares))
        return payload
    return card


def _member_cards(cards: Cards) -> MemberCardReader:
    """The card a space's receiver gets: what the least of its members (a viewer) is
    shown, whoever registered the webhook: no shares, no voice suggestions."""
    async def card(record_id: str, member_id: str) -> dict[str, Any] | None:
        grant = await reads.access.grant(cards.readers, record_id=record_id, user_id=member_id)
        if grant is None:
            return None
        found = await cards.card(record_id, grant.owner_id, suggest=False)
        if found is None:
            return None
        payload: dict[str, Any] = plain(replace(found, role="viewer", shares=None))
        return payload
    return card


class WebhookDelivery(QueueWorker):
    event_prefix = "webhook"

    def __init__(self, *, writer: Writer, readers: ReaderPool, clock: Clock,
                 transport: WebhookTransport, settings: WebhookSettings,
                 card: CardReader, member_card: MemberCardReader | None = None) -> None:
        super().__init__(clock=clock, poll_seconds=settings.poll_seconds)
        self._writer = writer
        self._readers = readers
        self._transport = transport
        self._settings = settings
        self._card = card
        self._member_card = member_card
        self._rule = RetryRule(base_seconds=settings.retry_base_seconds,
                               cap_seconds=settings.retry_cap_seconds,
                               window=timedelta(hours=settings.delivery_window_hours))
        # A target that does not answer at all is paused by the same backoff, with no
        # window: a target is never given up, only its deliveries.
        self._pause_rule = RetryRule(base_seconds=settings.retry_base_seconds,
                                     cap_seconds=settings.retry_cap_seconds)
        self._flights: dict[str, _Flight] = {}
        """The attempts in flight by delivery id: each runs on its own."""

    @property
    def in_flight(self) -> int:
        return len(self._flights)

    async def finish(self) -> None:
        """The attempts in flight end (the supervisor cuts them after its grace)."""
        if self._flights:
            await asyncio.wait([f.task for f in self._flights.values()])

    async def cut(self) -> None:
        cut = [flight.task for flight in self._flights.values()]
        for task in cut:
            task.cancel()  # cut: its delivery stays pending (at least once)
        if cut:
            await asyncio.wait(cut)

    async def round(self, stopping: asyncio.Event | None = None) -> int:
        """Start every due delivery there is room for; how many were started.

        No round waits for an attempt: each runs on its own and, when it ends,
        wakes the actor for the next. Room is `concurrency` in all, of which
        one owner's webhooks hold at most `per_owner_concurrency` and one
        target host `per_host_concurrency`; the deliveries of a busy owner or
        host are left out of the look itself, so they never hide another's."""
        settings = self._settings
        started = 0
        skipped: set[str] = set()  # webhooks found at their host's share this round
        for _ in range(ROUND_LOOKS_MAX):
            room = settings.concurrency - len(self._flights)
            if room <= 0:
                break
            owners = Counter(f.owner_id for f in self._flights.values())
            hosts = Counter(f.host for f in self._flights.values())
            busy_hosts = {h for h, n in hosts.items() if n >= settings.per_host_concurrency}
            busy_webhooks = skipped | {f.webhook_id for f in self._flights.values()
                                       if f.host in busy_hosts}
            due = await reads.webhooks.due_deliveries(
                self._readers, now=format_time(self._clock.now()), limit=room,
                busy_deliveries=self._flights.keys(), busy_webhooks=busy_webhooks,
                busy_owners={o for o, n in owners.items()
                             if n >= settings.per_owner_concurrency})
            for delivery in due:
                if delivery.id in self._flights:  # started by a round that ran alongside
                    continue
                host = _host_of(delivery.url)
                if (owners[delivery.owner_id] >= settings.per_owner_concurrency
                        or hosts[host] >= settings.per_host_concurrency):
                    if hosts[host] >= settings.per_host_concurrency:
                        skipped.add(delivery.webhook_id)
                    continue
                owners[delivery.owner_id] += 1
                hosts[host] += 1
                self._start(delivery, host)
                started += 1
            if len(due) < room:
                break  # nothing more is due
        WEBHOOK_QUEUE_DEPTH.set(await reads.webhooks.queue_depth(self._readers))
        return started

    def _start(self, due: DueDelivery, host: str) -> None:
        task = asyncio.create_task(self._attempt_alone(due), name="webhook-attempt")
        self._flights[due.id] = _Flight(task=task, webhook_id=due.webhook_id,
                                        owner_id=due.owner_id, host=host)
        WEBHOOK_IN_FLIGHT.set(len(self._flights))

        def ended(done: asyncio.Task[bool]) -> None:
            self._flights.pop(due.id, None)
            WEBHOOK_IN_FLIGHT.set(len(self._flights))
            if not done.cancelled() and done.result():
                self._wake.set()  # its room is free: look again now

        task.add_done_callback(ended)

    async def _attempt_alone(self, due: DueDelivery) -> bool:
        """One attempt as its own task; False when it failed (the writer's failure is
        logged, the delivery stays due and waits for the next poll: a dead writer
        must not turn the actor into a busy loop of failing attempts)."""
        try:
            await self.attempt(due)
        except Exception as exc:
            log.error("webhook_attempt_failed", webhook_id=due.webhook_id,
                      delivery_id=due.id, error=type(exc).__name__)
            return False
        return True

    async def attempt(self, due: DueDelivery) -> None:
        """One try of one delivery, its result written (never raises but for the writer)."""
        if await self._left_space(due):
            await self._writer.ask(DropLeftSpace(delivery_id=due.id))
            WEBHOOK_DELIVERIES.labels("left_space").inc()
            log.info("webhook_left_space", webhook_id=due.webhook_id, delivery_id=due.id,
                     record_id=due.record_id)
            return
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
            retry_after = asked_seconds(answer.retry_after, self._clock.now())
        now = self._clock.now()
        outcome: DeliveryOutcome = answered(status)
        delay: float | None = 0.0
        if outcome == "retry":
            delay = self._rule.next_try(failures=due.attempts + 1, asked=retry_after,
                                        created_at=parse_time(due.created_at), now=now)
            if delay is None:
                outcome = "failed"
        # No answer at all: the target is backed off as a whole (its other deliveries
        # would wait out the same timeout), and its webhook shows it failing.
        pause = None if status is not None else self._pause_rule.next_try(
            failures=due.target_failures + 1, now=now)
        await self._writer.ask(RecordAttempt(
            delivery_id=due.id, webhook_id=due.webhook_id, outcome=outcome,
            status=status, error=error, body=body, delay_seconds=delay or 0.0,
            target_pause_seconds=pause))
        WEBHOOK_DELIVERIES.labels(outcome).inc()
        if pause is not None:
            WEBHOOK_TARGET_PAUSES.inc()
        fields = {"webhook_id": due.webhook_id, "delivery_id": due.id,
                  "webhook_event": due.event, "record_id": due.record_id,
                  "attempts": due.attempts + 1, "status": status}
        if outcome == "delivered":
            log.info("webhook_delivered", **fields)
        elif outcome == "retry":
            log.warning("webhook_retry", **fields, error=error, retry_in=round(delay or 0.0, 1))
        elif outcome == "gone":
            log.warning("webhook_disabled_gone", **fields)
        else:
            log.error("webhook_failed", **fields, error=error)

    async def _left_space(self, due: DueDelivery) -> bool:
        """A space webhook's delivery whose record is no longer in the space (a deletion
        was written while it was, and a record gone since sends what was known)."""
        if due.space_id is None or due.event == "record.deleted":
            return False
        inside = await reads.webhooks.record_in_space(self._readers, record_id=due.record_id,
                                                      space_id=due.space_id)
        return inside is False

    async def payload(self, due: DueDelivery) -> bytes:
        """The delivery's body: `{"id", "event", "created_at", "record"}`."""
        record: dict[str, Any] | None = None
        if due.event != "record.deleted":
            try:
                if due.space_id is None:
                    record = await self._card(due.record_id, due.owner_id)
                elif self._member_card is not None:
                    record = await self._member_card(due.record_id, due.owner_id)
            except Exception as exc:  # the card cannot be read: what was known will do
                log.warning("webhook_card_unreadable", delivery_id=due.id,
                            record_id=due.record_id, error=type(exc).__name__)
        if record is None:
            record = orjson.loads(due.record_json)
        else:
            record = {k: v for k, v in record.items() if k not in TRANSCRIPT_FIELDS}
        return orjson.dumps({"id": due.id, "event": due.event, "created_at": due.created_at,
                             "record": record})
