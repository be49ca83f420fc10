"""Helpers for the pipeline tests: a step actor on the test storage, queue state, journal,
metrics, test-only writes."""

from __future__ import annotations

import asyncio
import random
import sqlite3
from collections.abc import Callable, Iterable, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, ClassVar, Protocol

from prometheus_client import REGISTRY

from transcriber.core.errors import NoWork
from transcriber.core.ids import new_id
from transcriber.core.observability import WORKER_RUNS
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import Claim, Claimed
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.followups.after import FollowUps, running_notifier
from transcriber.followups.registry import REPLY
from transcriber.followups.reply import Outbox
from transcriber.pipeline import policy
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.step import Step
from transcriber.ports import Notifier
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock


class MakeActor(Protocol):
    """The fixture `make_actor`: a step actor on the test's storage and fake clock.

    `steps` and `settings` default to the fixtures of those names; keyword
    arguments replace any other part (`notifier=`, `claim=`, ...)."""

    def __call__(self, steps: Mapping[str, Step] | None = None,
                 settings: Settings | None = None, **parts: Any) -> StepActor: ...


def step_actor(*, settings: Settings, clock: FakeClock, writer: Writer, readers: ReaderPool,
               files: LocalRecordFiles, steps: Mapping[str, Step], notifier: Notifier,
               **parts: Any) -> StepActor:
    """A step actor whose follow-ups' reply goes to `notifier` (through the outbox), with a seeded
    jitter; `parts` replace any of its constructor's arguments."""
    arguments: dict[str, Any] = {
        "name": "step-actor-test", "settings": settings, "clock": clock,
        "writer": writer, "readers": readers, "files": files, "steps": steps,
        "followups": FollowUps({REPLY: Outbox(
            writer=writer, readers=readers, clock=clock,
            notifier=running_notifier(lambda: notifier), settings=settings.telegram)},
            notifier=running_notifier(lambda: notifier)),
        "rng": random.Random(7).random,
    }
    arguments.update(parts)
    return StepActor(**arguments)


async def state_of(readers: ReaderPool, record_id: str) -> sqlite3.Row:
    row = await readers.fetch_one(q.pipeline.SELECT_QUEUE_STATE, {"id": record_id})
    assert row is not None
    return row


async def events_of(readers: ReaderPool, record_id: str) -> list[sqlite3.Row]:
    return await readers.fetch_all(q.pipeline.SELECT_EVENTS, {"record_id": record_id})


async def claim(writer: Writer, settings: Settings) -> Claimed | NoWork:
    return await writer.ask(Claim(leases=policy.lease_table(settings.pipeline)))


async def claim_ok(writer: Writer, settings: Settings) -> Claimed:
    answer = await claim(writer, settings)
    assert isinstance(answer, Claimed), "expected a claim, got no work"
    return answer


def sample(name: str, labels: dict[str, str] | None = None) -> float:
    return REGISTRY.get_sample_value(name, labels or {}) or 0.0


def worker_runs_total() -> float:
    """Every `transcriber_worker_runs_total` sample, whatever its labels."""
    total = 0.0
    for metric in WORKER_RUNS.collect():
        for s in metric.samples:
            if s.name.endswith("_total"):
                total += s.value
    return total


def runs(stage: str, outcome: str) -> float:
    return sample("transcriber_worker_runs_total", {"stage": stage, "outcome": outcome})


def undelivered(reason: str) -> float:
    return sample("transcriber_replies_undelivered_total", {"reason": reason})


def loud(logs: Iterable[MutableMapping[str, Any]]) -> list[MutableMapping[str, Any]]:
    """Log entries at INFO or above (what the owner of the service reads)."""
    return [e for e in logs if e.get("log_level") in {"info", "warning", "error", "critical"}]


def named(logs: Iterable[MutableMapping[str, Any]], event: str) -> list[MutableMapping[str, Any]]:
    return [e for e in logs if e.get("event") == event]


async def until(predicate: Callable[[], Any], *, within: float = 10.0) -> None:
    """Wait (polling the loop, not the clock) until `predicate()` is truthy.

    The fake clock stands still meanwhile; this only lets the writer thread and
    the actors' tasks run. `within` bounds a broken test, it is not a timing."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + within
    while True:
        result = predicate()
        if asyncio.iscoroutine(result):
            result = await result
        if result:
            return
        if loop.time() > deadline:
            raise AssertionError("condition not reached")
        await asyncio.sleep(0.002)


@dataclass(frozen=True, slots=True, kw_only=True)
class OwnerEdits(Command[None]):
    """What the web app does when the owner renames a record (not the pipeline)."""

    name: ClassVar[str] = "test_owner_edits"
    record_id: str
    title: str
    brief: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(
            "UPDATE audio_records SET title = :title, brief = :brief WHERE id = :id",
            {"title": self.title, "brief": self.brief, "id": self.record_id},
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreTranscript(Command[None]):
    name: ClassVar[str] = "test_store_transcript"
    record_id: str
    text: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(
            "INSERT INTO texts (id, record_id, kind, contents, created_at, updated_at) "
            "VALUES (:id, :record_id, 'transcript', :text, :now, :now)",
            {"id": new_id(), "record_id": self.record_id, "text": self.text, "now": ctx.now()},
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class StoreRecognition(Command[str]):
    """A `recognitions` row with an external operation id (what submit writes)."""

    name: ClassVar[str] = "test_store_recognition"
    record_id: str
    external_id: str

    async def execute(self, ctx: WriteContext) -> str:
        row_id = new_id()
        await ctx.conn.execute(
            "INSERT INTO recognitions (id, record_id, provider, external_id, created_at, "
            "updated_at) VALUES (:id, :record_id, 'fake', :external_id, :now, :now)",
            {"id": row_id, "record_id": self.record_id, "external_id": self.external_id,
             "now": ctx.now()},
        )
        return row_id
