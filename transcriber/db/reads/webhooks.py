"""Webhooks: a person's webhooks and latest deliveries, and the delivery queue.

A webhook's secret is read only by the delivery actor (`DueDelivery`), to
sign; what the owner reads (`Webhook`) never carries it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass

import orjson

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns


def _events(stored: str) -> tuple[str, ...]:
    events = orjson.loads(stored)
    return tuple(str(e) for e in events) if isinstance(events, list) else ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Webhook:
    id: str
    url: str
    events: tuple[str, ...]
    created_at: str
    disabled_at: str | None
    disabled_reason: str | None
    """`gone`: the receiver answered 410."""
    failures: int = 0
    """Attempts in a row its target did not answer (0: the last one answered)."""
    last_error: str | None = None
    paused_until: str | None = None
    """No delivery of it is tried before this (its target is backed off)."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Webhook:
        return cls(**columns(cls, row, events=_events(row["events"])))


@dataclass(frozen=True, slots=True, kw_only=True)
class DeliveryState:
    """One delivery as its owner sees it."""

    id: str
    event: str
    record_id: str
    state: str
    """`pending`, `delivered` or `failed`."""
    attempts: int
    next_attempt_at: str
    last_status: int | None
    last_error: str | None
    created_at: str
    finished_at: str | None

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> DeliveryState:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class DueDelivery:
    """A pending delivery whose time has come, with what sending it needs."""

    id: str
    webhook_id: str
    owner_id: str
    url: str
    secret: str
    event: str
    record_id: str
    record_json: str
    """What was known of the record when the event was written."""
    body: bytes | None
    """The payload as first sent (None before the first attempt)."""
    attempts: int
    created_at: str
    target_failures: int = 0
    """Attempts in a row its webhook's target did not answer."""
    space_id: str | None = None
    """The space whose webhook it is (None: the owner's own webhook)."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> DueDelivery:
        body = row["body"]
        return cls(**columns(cls, row, body=None if body is None else bytes(body),
                             target_failures=row["failures"]))

    def __repr__(self) -> str:
        # The URL and the secret stay out of every repr (and so of any traceback).
        return f"DueDelivery(id={self.id!r}, webhook_id={self.webhook_id!r})"


async def webhooks_of_owner(readers: ReaderPool, *, owner_id: str) -> list[Webhook]:
    rows = await readers.fetch_all(q.webhooks.WEBHOOKS_OF_OWNER, {"owner_id": owner_id})
    return [Webhook.from_row(row) for row in rows]


async def webhook_of_owner(readers: ReaderPool, *, webhook_id: str,
                           owner_id: str) -> Webhook | None:
    row = await readers.fetch_one(q.webhooks.WEBHOOK_OF_OWNER,
                                  {"id": webhook_id, "owner_id": owner_id})
    return None if row is None else Webhook.from_row(row)


async def webhooks_of_space(readers: ReaderPool, *, space_id: str) -> list[Webhook]:
    rows = await readers.fetch_all(q.webhooks.WEBHOOKS_OF_SPACE, {"space_id": space_id})
    return [Webhook.from_row(row) for row in rows]


async def webhook_of_space(readers: ReaderPool, *, webhook_id: str,
                           space_id: str) -> Webhook | None:
    row = await readers.fetch_one(q.webhooks.WEBHOOK_OF_SPACE,
                                  {"id": webhook_id, "space_id": space_id})
    return None if row is None else Webhook.from_row(row)


async def record_in_space(readers: ReaderPool, *, record_id: str, space_id: str) -> bool | None:
    """Whether the record is in the space now; None when there is no such record."""
    row = await readers.fetch_one(q.webhooks.RECORD_SPACE, {"record_id": record_id})
    return None if row is None else row["space_id"] == space_id


async def latest_deliveries(readers: ReaderPool, *, webhook_id: str,
                            limit: int) -> list[DeliveryState]:
    rows = await readers.fetch_all(q.webhooks.LATEST_DELIVERIES,
                                   {"webhook_id": webhook_id, "limit": limit})
    return [DeliveryState.from_row(row) for row in rows]


def _ids(ids: Iterable[str]) -> str:
    return orjson.dumps(sorted(ids)).decode()


async def due_deliveries(readers: ReaderPool, *, now: str, limit: int,
                         busy_deliveries: Iterable[str] = (),
                         busy_webhooks: Iterable[str] = (),
                         busy_owners: Iterable[str] = ()) -> list[DueDelivery]:
    """Due deliveries, soonest first, but for the busy ones, webhooks and owners."""
    rows = await readers.fetch_all(q.webhooks.DUE, {
        "now": now, "limit": limit, "busy_deliveries": _ids(busy_deliveries),
        "busy_webhooks": _ids(busy_webhooks), "busy_owners": _ids(busy_owners)})
    return [DueDelivery.from_row(row) for row in rows]


async def queue_depth(readers: ReaderPool) -> int:
    row = await readers.fetch_one(q.webhooks.QUEUE_DEPTH, {})
    return 0 if row is None else int(row["n"])
