"""Writer commands of webhooks: a person's webhooks, the deliveries an event
writes, and the outcome of each attempt to send one.

`enqueue_event` runs inside the command that writes the event (`Advance` to
`done` and `Halt`, through the webhooks' entry among the follow-ups,
`followups.registry`; `DeleteRecord` itself): the delivery rows commit or roll back with
it — the outbox the Telegram replies use too, so a crash can neither lose a
delivery nor report an event that did not happen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import orjson

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.webhooks import Event

DELIVERIES_KEPT = 100
"""Finished deliveries a webhook keeps (the list shows the latest 50)."""


async def enqueue_event(ctx: WriteContext, *, record_id: str, event: Event) -> int:
    """In the transaction of `event`: one delivery per live webhook that takes it, the
    record's owner's own and those of the space the record is in, with what is known
    of the record now (for a deletion: before its rows go). Answers how many were
    written."""
    params = {"record_id": record_id, "event": event}
    async with ctx.conn.execute(q.webhooks.SUBSCRIBED, params) as cursor:
        webhooks = [row["id"] for row in await cursor.fetchall()]
    if not webhooks:
        return 0
    async with ctx.conn.execute(q.webhooks.RECORD_SNAPSHOT, params) as cursor:
        row = await cursor.fetchone()
    if row is None:
        return 0
    now = ctx.now()
    for webhook_id in webhooks:
        await ctx.conn.execute(q.webhooks.INSERT_DELIVERY, {
            "id": new_id(), "webhook_id": webhook_id, "event": event, "record_id": record_id,
            "record_json": row["record_json"], "now": now})
    return len(webhooks)


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatedWebhook:
    id: str
    created_at: str


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateWebhook(Command[CreatedWebhook]):
    """A new webhook, the owner's own or (with `space_id`) the space's, registered by
    `owner_id`; `Conflict` when the owner (or the space) already has `limit` of them."""

    name: ClassVar[str] = "create_webhook"
    owner_id: str
    url: str
    secret: str
    events: Sequence[Event]
    limit: int
    space_id: str | None = None

    async def execute(self, ctx: WriteContext) -> CreatedWebhook:
        count, params = ((q.webhooks.COUNT_OF_OWNER, {"owner_id": self.owner_id})
                         if self.space_id is None
                         else (q.webhooks.COUNT_OF_SPACE, {"space_id": self.space_id}))
        async with ctx.conn.execute(count, params) as cursor:
            row = await cursor.fetchone()
        if row is not None and row["n"] >= self.limit:
            raise Conflict(f"at most {self.limit} webhooks")
        created = CreatedWebhook(id=new_id(), created_at=ctx.now())
        await ctx.conn.execute(q.webhooks.INSERT_WEBHOOK, {
            "id": created.id, "owner_id": self.owner_id, "url": self.url,
            "secret": self.secret, "events": orjson.dumps(list(self.events)).decode(),
            "now": created.created_at, "space_id": self.space_id})
        return created


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteWebhook(Command[None]):
    """The owner's webhook and its deliveries, pending ones included; `NotFound`
    for a webhook that is not the owner's."""

    name: ClassVar[str] = "delete_webhook"
    savepoint: ClassVar[bool] = False  # one statement (the cascade is part of it)
    webhook_id: str
    owner_id: str

    async def execute(self, ctx: WriteContext) -> None:
        cursor = await ctx.conn.execute(q.webhooks.DELETE_WEBHOOK,
                                        {"id": self.webhook_id, "owner_id": self.owner_id})
        if cursor.rowcount != 1:
            raise NotFound(f"webhook {self.webhook_id} not found")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteSpaceWebhook(Command[None]):
    """A space's webhook and its deliveries; `NotFound` for one not of that space."""

    name: ClassVar[str] = "delete_space_webhook"
    savepoint: ClassVar[bool] = False  # one statement (the cascade is part of it)
    webhook_id: str
    space_id: str

    async def execute(self, ctx: WriteContext) -> None:
        cursor = await ctx.conn.execute(q.webhooks.DELETE_SPACE_WEBHOOK,
                                        {"id": self.webhook_id, "space_id": self.space_id})
        if cursor.rowcount != 1:
            raise NotFound(f"webhook {self.webhook_id} not found")


@dataclass(frozen=True, slots=True, kw_only=True)
class DropLeftSpace(Command[None]):
    """A space webhook's pending delivery whose record left the space: failed, never
    sent (its target was not asked, so its health stays as it was)."""

    name: ClassVar[str] = "webhook_left_space"
    savepoint: ClassVar[bool] = False  # one statement
    delivery_id: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.webhooks.MARK_LEFT_SPACE,
                               {"id": self.delivery_id, "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class PinBody(Command[bytes | None]):
    """Keep `body` as the delivery's payload unless it has one: answers the body
    to send (the one kept), None when the delivery is no longer pending.

    Written before the first POST leaves: a process killed after sending and
    before the result was written sends these bytes again after the restart,
    never a newer card under the same delivery id."""

    name: ClassVar[str] = "webhook_pin_body"
    savepoint: ClassVar[bool] = False  # one statement
    delivery_id: str
    body: bytes

    async def execute(self, ctx: WriteContext) -> bytes | None:
        async with ctx.conn.execute(q.webhooks.PIN_BODY,
                                    {"id": self.delivery_id, "body": self.body}) as cursor:
            row = await cursor.fetchone()
        return None if row is None else bytes(row["body"])


AttemptOutcome = Literal["delivered", "retry", "failed", "gone"]


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordAttempt(Command[None]):
    """One attempt's result: delivered, tried again in `delay_seconds`, failed
    (its window passed), or `gone` (410: the delivery fails and the webhook is
    disabled with every delivery it still had pending). `body` is what was
    sent; the first attempt's stays. A delivery deleted meanwhile (its webhook
    was) is left alone."""

    name: ClassVar[str] = "webhook_attempt"
    delivery_id: str
    webhook_id: str
    outcome: AttemptOutcome
    status: int | None
    error: str | None
    body: bytes
    delay_seconds: float = 0.0
    target_pause_seconds: float | None = None
    """Set when the target did not answer at all: none of the webhook's deliveries
    is tried for this long; None when it answered (its health is ok again)."""

    async def execute(self, ctx: WriteContext) -> None:
        now = ctx.now()
        if self.target_pause_seconds is None:
            await ctx.conn.execute(q.webhooks.TARGET_ANSWERED, {"id": self.webhook_id})
        else:
            await ctx.conn.execute(q.webhooks.TARGET_SILENT, {
                "id": self.webhook_id, "error": self.error,
                "paused_until": ctx.now(plus_seconds=self.target_pause_seconds)})
        common = {"id": self.delivery_id, "status": self.status, "body": self.body, "now": now}
        if self.outcome == "delivered":
            await ctx.conn.execute(q.webhooks.MARK_DELIVERED, common)
        elif self.outcome == "retry":
            await ctx.conn.execute(q.webhooks.MARK_RETRY, {
                **common, "error": self.error,
                "next_attempt_at": ctx.now(plus_seconds=self.delay_seconds)})
            return
        else:
            await ctx.conn.execute(q.webhooks.MARK_FAILED, {**common, "error": self.error})
        if self.outcome == "gone":
            await ctx.conn.execute(q.webhooks.DISABLE_WEBHOOK,
                                   {"id": self.webhook_id, "reason": "gone", "now": now})
            await ctx.conn.execute(q.webhooks.FAIL_PENDING_OF_WEBHOOK, {
                "webhook_id": self.webhook_id, "error": "webhook_disabled", "now": now})
        await ctx.conn.execute(q.webhooks.PRUNE_FINISHED,
                               {"webhook_id": self.webhook_id, "keep": DELIVERIES_KEPT})
