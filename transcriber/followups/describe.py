"""The describe follow-up: writes each finished record's title, brief and topics, after the fact.

Not a stage. A record is `done` when its transcript is; the advance to `done` also
writes the record's describe job (its entry in `followups.registry`, the same
transaction), and this worker works the queue: it reads the record's current transcript and its
owner's topics, asks the describer, and writes the answer into the fields no person
has set (`db.commands.describe.SaveDescription`). A failure is retried by the one rule
(`followups.retry`: `describer.retry_base_seconds`, doubling, at most
`describer.retry_cap_seconds`, a longer asked-for wait within that cap) up to
`describer.attempts_limit` tries; then, or at once for a permanent refusal, the
`fallback` (the extractive describer, when the provider is a language model) answers,
and without one the job is `failed`. Nothing of it halts, re-opens or holds back the
record. A job whose record left `done` (transcribed again) is settled without a write:
the next `done` asks again.

One job at a time, in the order they came due; woken by the step actor after a `done`
and by `describer.poll_seconds` otherwise (retries, jobs of an earlier run). Logged:
the record id, the outcome, the error's class; never a word of the transcript.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

import structlog

from transcriber.core.clock import Clock, format_time
from transcriber.core.errors import PermanentFailure
from transcriber.core.observability import DESCRIBE_QUEUE_DEPTH, DESCRIBE_SECONDS, DESCRIPTIONS
from transcriber.db import reads
from transcriber.db.commands.describe import RetryDescription, SaveDescription, SettleDescription
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.describe import DescribeJob, Subject
from transcriber.db.writer import Writer
from transcriber.domain.describe import (
    FIELDS,
    Description,
    fitted,
    writable,
)
from transcriber.domain.quality import describable
from transcriber.domain.transcripts import BadStructure
from transcriber.followups.parts import Parts
from transcriber.followups.queue import QueueWorker
from transcriber.followups.reply import NAME as REPLY
from transcriber.followups.retry import RetryRule, asked_of, asked_seconds
from transcriber.ports import ArchiveCounts, Describer, Material
from transcriber.settings import DescriberSettings

log = structlog.get_logger(__name__)

JOBS_PER_ROUND = 20

Described = Callable[[str], Awaitable[None]]
"""Told each record id once its description is stored (the Telegram reply waits for it)."""


NAME = "describer"


def build(parts: Parts) -> DescriberActor | None:
    """The describe worker, where a describer runs (none with `describer.provider`
    `off`): a stored (or failed) description wakes the reply, which waits for it."""
    if parts.describers is None:
        return None
    describer, fallback = parts.describers
    wake = parts.wake

    async def described(record_id: str) -> None:
        # Woken, not awaited: a slow Telegram never holds the describer's queue.
        wake(REPLY)

    return DescriberActor(writer=parts.writer, readers=parts.readers, clock=parts.clock,
                          describer=describer, fallback=fallback,
                          settings=parts.settings.describer, described=described)


class OwnerArchive:
    """The owner's archive as the describer weighs words against it (the search index's
    counts of the owner's records that hold each stem)."""

    def __init__(self, readers: ReaderPool, owner_id: str) -> None:
        self._readers = readers
        self._owner_id = owner_id

    async def counts(self, stems: Sequence[str]) -> ArchiveCounts:
        return await reads.describe.archive_counts(self._readers, owner_id=self._owner_id,
                                                   stems=stems)


async def load_material(readers: ReaderPool, subject: Subject) -> Material:
    """What the describer is given of a record: its current transcript (a person's
    corrections included), its language, its owner's topics and archive. Raises
    `BadStructure` when the stored transcript cannot be read. Lines the recognizer
    was unsure of, and all of a `poor` transcript, are left out (`describable`)."""
    utterances = await reads.transcripts.utterances(readers, record_id=subject.id)
    # The dictionary of topics to prefer: the space's for a record in one (its members
    # file its records under shared names), else the owner's.
    topics = (await reads.describe.space_topic_names(readers, space_id=subject.space_id)
              if subject.space_id is not None
              else await reads.describe.owner_topic_names(readers, owner_id=subject.owner_id))
    # The gate: only what the recognizer heard clearly is material (quality.describable).
    report = await reads.records.quality(readers, record_id=subject.id)
    return Material(record_id=subject.id, language=subject.language,
                    duration_ms=subject.duration_ms,
                    utterances=describable(utterances or (), report),
                    owner_topics=topics, archive=OwnerArchive(readers, subject.owner_id))


def open_fields(subject: Subject, *, replace_auto: bool) -> tuple[str, ...]:
    """The fields the describer may write on this record (never a person's)."""
    origins = {"title": subject.title_origin, "brief": subject.brief_origin,
               "topics": subject.topics_origin}
    return tuple(field for field in FIELDS
                 if writable(origins[field], replace_auto=replace_auto))


class DescriberActor(QueueWorker):
    event_prefix = "describer"

    def __init__(self, *, writer: Writer, readers: ReaderPool, clock: Clock,
                 describer: Describer, settings: DescriberSettings,
                 fallback: Describer | None = None, described: Described | None = None) -> None:
        super().__init__(clock=clock, poll_seconds=settings.poll_seconds)
        self._writer = writer
        self._readers = readers
        self._describer = describer
        self._fallback = fallback
        self._settings = settings
        self._described = described
        # A Retry-After of a day would park this job (and the queue's order) that long.
        self._rule = RetryRule(base_seconds=settings.retry_base_seconds,
                               cap_seconds=settings.retry_cap_seconds,
                               attempts_limit=settings.attempts_limit,
                               asked_cap_seconds=settings.retry_cap_seconds)

    async def round(self, stopping: asyncio.Event | None = None) -> int:
        """Every job due now (in rounds of `JOBS_PER_ROUND`); answers how many were worked."""
        worked = 0
        while stopping is None or not stopping.is_set():
            jobs = await reads.describe.due_jobs(self._readers, now=self._now(),
                                                 limit=JOBS_PER_ROUND)
            for job in jobs:
                await self.work(job)
                worked += 1
            if len(jobs) < JOBS_PER_ROUND:
                break
        DESCRIBE_QUEUE_DEPTH.set(await reads.describe.pending_count(self._readers))
        return worked

    async def work(self, job: DescribeJob) -> str:
        """One job, to its outcome (the metric's label)."""
        started = time.monotonic()
        subject = await reads.describe.subject(self._readers, record_id=job.record_id)
        if subject is None:
            return "skipped"  # deleted meanwhile: its job went with it
        if subject.state != "done" or subject.halted_at is not None or not open_fields(
                subject, replace_auto=True):
            await self._writer.ask(SettleDescription(record_id=job.record_id,
                                                     generation=job.generation, failed=False))
            await self._tell(job.record_id)  # a reply waiting for a title need not wait
            return self._count(self._describer, "skipped")
        try:
            material = await load_material(self._readers, subject)
        except BadStructure:
            log.error("describe_transcript_unreadable", record_id=job.record_id)
            return await self._fail(job, "BadStructure")
        if not material.utterances:
            # Nothing heard clearly (or nothing at all): no title or brief, never one a
            # describer (a language model above all) would make up of nothing. Saved
            # empty, so an automatic title of an earlier transcript does not stay either.
            empty = fitted(title="", brief="", topics=(), owner_topics=material.owner_topics,
                           by=self._describer.name)
            await self._save(job, empty, started, self._describer, "skipped")
            return "skipped"
        try:
            description = await self._describer.describe(material)
        except Exception as exc:
            return await self._failed_try(job, material, exc)
        await self._save(job, description, started, self._describer, "described")
        return "described"

    async def _failed_try(self, job: DescribeJob, material: Material, error: Exception) -> str:
        attempts = job.attempts + 1
        permanent = isinstance(error, PermanentFailure)
        now = self._clock.now()
        delay = None if permanent else self._rule.next_try(
            failures=attempts, asked=asked_seconds(asked_of(error), now), now=now)
        if delay is not None:
            await self._writer.ask(RetryDescription(
                record_id=job.record_id, generation=job.generation, delay_seconds=delay,
                error=type(error).__name__))
            log.warning("describe_retry", record_id=job.record_id, error=type(error).__name__,
                        attempts=attempts, retry_in=delay)
            return self._count(self._describer, "retry")
        log.warning("describe_gave_up", record_id=job.record_id, error=type(error).__name__,
                    attempts=attempts, permanent=permanent,
                    fallback=None if self._fallback is None else self._fallback.name)
        if self._fallback is None:
            return await self._fail(job, type(error).__name__)
        started = time.monotonic()
        try:
            description = await self._fallback.describe(material)
        except Exception as exc:
            log.error("describe_fallback_failed", record_id=job.record_id,
                      error=type(exc).__name__)
            return await self._fail(job, type(exc).__name__)
        await self._save(job, description, started, self._fallback, "fallback")
        return "fallback"

    async def _save(self, job: DescribeJob, description: Description, started: float,
                    describer: Describer, outcome: str) -> None:
        saved = await self._writer.ask(SaveDescription(
            record_id=job.record_id, description=description, generation=job.generation))
        seconds = time.monotonic() - started
        DESCRIBE_SECONDS.labels(_provider(describer)).observe(seconds)
        if saved.stale:
            log.info("describe_stale", record_id=job.record_id)
            self._count(describer, "skipped")
            return
        self._count(describer, outcome)
        log.info("record_described", record_id=job.record_id, by=description.by,
                 fields=list(saved.written), seconds=round(seconds, 3), outcome=outcome)
        await self._tell(job.record_id)

    async def _fail(self, job: DescribeJob, error: str) -> str:
        await self._writer.ask(SettleDescription(record_id=job.record_id,
                                                 generation=job.generation, failed=True,
                                                 error=error))
        log.error("describe_failed", record_id=job.record_id, error=error)
        await self._tell(job.record_id)  # a reply waiting for the title goes without it now
        return self._count(self._describer, "failed")

    async def _tell(self, record_id: str) -> None:
        if self._described is None:
            return
        try:
            await self._described(record_id)
        except Exception as exc:  # the reply's own retries take it from here
            log.warning("described_notice_failed", record_id=record_id,
                        error=type(exc).__name__)

    def _count(self, describer: Describer, outcome: str) -> str:
        DESCRIPTIONS.labels(_provider(describer), outcome).inc()
        return outcome

    def _now(self) -> str:
        return format_time(self._clock.now())


def _provider(describer: Describer) -> str:
    """The metric's label: the provider without the model (`openai:llama3` is `openai`)."""
    return describer.name.split(":", 1)[0]
