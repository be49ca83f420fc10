"""Writer commands of the describer: its queue (written with `done`), its description
written where no person has set the field, and its retries (docs/describer.md)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.db import queries as q
from transcriber.db.commands.edits import replace_topics
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.describe import Description, writable


async def enqueue_description(ctx: WriteContext, *, record_id: str) -> None:
    """Inside the transaction of `done`: the record's description is asked for (again,
    after a re-transcription: the job's next generation)."""
    await ctx.conn.execute(q.describe.ENQUEUE, {"record_id": record_id, "now": ctx.now()})


@dataclass(frozen=True, slots=True, kw_only=True)
class Saved:
    written: tuple[str, ...] = ()
    """The fields written (`title`, `brief`, `topics`): those not a person's."""
    stale: bool = False
    """The job moved on (a newer transcript asked for another description): nothing written."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SaveDescription(Command[Saved]):
    """Write a description into the fields a person has not set (`describe.writable`),
    each becoming `auto`; a `human` field is never touched, set or empty.

    `generation`: the job this answers (None: `transcriber describe` by hand); a job
    that moved on since writes nothing (`Saved.stale`). `replace_auto`: an earlier
    automatic field is replaced (the describer's job and `--force-auto`), else only
    fields nobody set yet are filled.
    """

    name: ClassVar[str] = "save_description"
    record_id: str
    description: Description
    generation: int | None = None
    replace_auto: bool = True

    async def execute(self, ctx: WriteContext) -> Saved:
        params = {"record_id": self.record_id}
        if self.generation is not None:
            async with ctx.conn.execute(q.describe.JOB, params) as cursor:
                job = await cursor.fetchone()
            if job is None or job["generation"] != self.generation or job["state"] != "pending":
                return Saved(stale=True)
        async with ctx.conn.execute(q.describe.SUBJECT, params) as cursor:
            record = await cursor.fetchone()
        if record is None:
            return Saved()
        fields = tuple(field for field in ("title", "brief", "topics")
                       if writable(record[f"{field}_origin"], replace_auto=self.replace_auto))
        description = self.description
        # Any field written names its describer (topics alone too: `WRITE_TITLE_BRIEF`
        # with neither title nor brief changes only `described_by`).
        if fields:
            await ctx.conn.execute(q.describe.WRITE_TITLE_BRIEF, {
                **params, "title": description.title if "title" in fields else None,
                "brief": description.brief if "brief" in fields else None,
                "by": description.by, "now": ctx.now()})
        if "topics" in fields:
            await replace_topics(ctx, record_id=self.record_id, owner_id=record["owner_id"],
                                 names=description.topics, origin="auto")
        if self.generation is not None:
            await ctx.conn.execute(q.describe.MARK_DONE,
                                   {**params, "generation": self.generation, "now": ctx.now()})
        return Saved(written=fields)


@dataclass(frozen=True, slots=True, kw_only=True)
class SettleDescription(Command[None]):
    """The job ends without a description: `done` (nothing to describe: the record left
    `done` for another transcript, which asks again) or `failed` (its last try failed)."""

    name: ClassVar[str] = "settle_description"
    record_id: str
    generation: int
    failed: bool
    error: str | None = None

    async def execute(self, ctx: WriteContext) -> None:
        params = {"record_id": self.record_id, "generation": self.generation, "now": ctx.now()}
        if self.failed:
            await ctx.conn.execute(q.describe.MARK_FAILED, {**params, "error": self.error})
        else:
            await ctx.conn.execute(q.describe.MARK_DONE, params)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryDescription(Command[None]):
    """A try failed: the job waits `delay_seconds` (backoff) and goes again."""

    name: ClassVar[str] = "retry_description"
    savepoint: ClassVar[bool] = False  # one write: lands whole or not at all
    record_id: str
    generation: int
    delay_seconds: float
    error: str

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.describe.MARK_RETRY, {
            "record_id": self.record_id, "generation": self.generation, "error": self.error,
            "next_attempt_at": ctx.now(plus_seconds=self.delay_seconds), "now": ctx.now()})
