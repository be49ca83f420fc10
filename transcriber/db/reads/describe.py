"""The describer's side: its due jobs, what it is given of a record, the owner's archive."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass

import orjson

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns
from transcriber.db.search import owner_key
from transcriber.ports import ArchiveCounts

OWNER_TOPICS_MAX = 200
"""The owner's topics a describer is shown at most (a language model's prompt stays short)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class DescribeJob:
    record_id: str
    generation: int
    attempts: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> DescribeJob:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class JobState:
    record_id: str
    generation: int
    state: str
    attempts: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> JobState:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class Subject:
    """A record as the describer sees it (its transcript is read on its own)."""

    id: str
    owner_id: str
    state: str
    halted_at: str | None
    duration_ms: int
    language: str
    """The detected language, else the one asked for ('auto': unknown, as '')."""
    title_origin: str | None
    brief_origin: str | None
    topics_origin: str | None
    space_id: str | None = None
    """The space the record is in: its topics are the dictionary (docs/sharing.md)."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Subject:
        language = row["detected_language"] or row["language"]
        return cls(**columns(cls, row,
                             language="" if language in (None, "auto") else language))


@dataclass(frozen=True, slots=True, kw_only=True)
class ReplyHeading:
    title: str
    brief: str
    duration_ms: int
    describe_state: str | None
    """`pending` while the description is still coming; None: none was asked for."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ReplyHeading:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class DoneRecord:
    id: str
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> DoneRecord:
        return cls(**columns(cls, row))


async def due_jobs(readers: ReaderPool, *, now: str, limit: int) -> list[DescribeJob]:
    rows = await readers.fetch_all(q.describe.DUE_JOBS, {"now": now, "limit": limit})
    return [DescribeJob.from_row(row) for row in rows]


async def pending_count(readers: ReaderPool) -> int:
    row = await readers.fetch_one(q.describe.PENDING_COUNT)
    return 0 if row is None else int(row["pending"])


async def job(readers: ReaderPool, *, record_id: str) -> JobState | None:
    row = await readers.fetch_one(q.describe.JOB, {"record_id": record_id})
    return None if row is None else JobState.from_row(row)


async def subject(readers: ReaderPool, *, record_id: str) -> Subject | None:
    row = await readers.fetch_one(q.describe.SUBJECT, {"record_id": record_id})
    return None if row is None else Subject.from_row(row)


async def owner_topic_names(readers: ReaderPool, *, owner_id: str,
                            limit: int = OWNER_TOPICS_MAX) -> tuple[str, ...]:
    rows = await readers.fetch_all(q.describe.OWNER_TOPIC_NAMES,
                                   {"owner_id": owner_id, "limit": limit})
    return tuple(str(row["name"]) for row in rows)


async def space_topic_names(readers: ReaderPool, *, space_id: str,
                            limit: int = OWNER_TOPICS_MAX) -> tuple[str, ...]:
    """The topic names of a space's members, by name (the describer's dictionary for the
    space's records)."""
    rows = await readers.fetch_all(q.describe.SPACE_TOPIC_NAMES,
                                   {"space_id": space_id, "limit": limit})
    return tuple(str(row["name"]) for row in rows)


async def archive_counts(readers: ReaderPool, *, owner_id: str,
                         stems: Sequence[str]) -> ArchiveCounts:
    """How many of the owner's records there are, and how many transcripts hold each stem
    (the search index's own counts: stems are indexed behind the owner's key)."""
    row = await readers.fetch_one(q.describe.OWNER_RECORD_COUNT, {"owner_id": owner_id})
    key = owner_key(owner_id)
    terms = orjson.dumps([key + stem for stem in stems]).decode()
    rows = await readers.fetch_all(q.describe.TERM_RECORDS, {"terms": terms})
    return ArchiveCounts(records=0 if row is None else int(row["records"]),
                         holding={str(found["term"])[len(key):]: int(found["doc"])
                                  for found in rows})


async def reply_heading(readers: ReaderPool, *, record_id: str) -> ReplyHeading | None:
    row = await readers.fetch_one(q.describe.REPLY_HEADING, {"record_id": record_id})
    return None if row is None else ReplyHeading.from_row(row)


async def done_page(readers: ReaderPool, *, after_created_at: str, after_id: str,
                    limit: int) -> list[DoneRecord]:
    rows = await readers.fetch_all(q.describe.DONE_PAGE, {
        "after_created_at": after_created_at, "after_id": after_id, "limit": limit})
    return [DoneRecord.from_row(row) for row in rows]
