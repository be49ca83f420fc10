"""Writer commands of a person's edits: title, brief, topics, corrections, deletion.

None of them takes, waits for or checks a claim: they touch only the
person's own fields, so a step holding the record keeps its claim and writes
its result. `DeleteRecord` removes the row the claim lives on: the holder's
next token-conditional write finds nothing and raises `ClaimLost`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import orjson

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.voices import VoiceRules, learn_names, relearn_lines
from transcriber.db.commands.webhooks import enqueue_event
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.voices import SpokenLine


@dataclass(frozen=True, slots=True, kw_only=True)
class EditRecord(Command[None]):
    """Set any of title, brief, topics and speaker names (`None`: leave as is).

    `topics` replaces the record's set; names are the owner's, created on
    first use. A field given here becomes the person's (origin `human`, even
    set empty): the describer never writes it again. Raises `NotFound` for a
    record that is not the owner's.
    """

    name: ClassVar[str] = "edit_record"
    record_id: str
    owner_id: str
    title: str | None = None
    brief: str | None = None
    topics: tuple[str, ...] | None = None
    speaker_names_patch: str | None = None
    """A JSON merge patch of the speakers' names (`{"S1": "Anna", "S2": null}`)."""
    voices: VoiceRules | None = None
    """Known voices are on: the names teach the owner's profiles (`learn_names`)."""

    async def execute(self, ctx: WriteContext) -> None:
        now = ctx.now()
        ids = {"id": self.record_id, "owner_id": self.owner_id, "now": now}
        if self.title is None and self.brief is None:
            cursor = await ctx.conn.execute(q.edits.TOUCH_RECORD, ids)
        else:
            cursor = await ctx.conn.execute(
                q.edits.UPDATE_TITLE_BRIEF, {**ids, "title": self.title, "brief": self.brief})
        if cursor.rowcount != 1:
            raise NotFound(f"record {self.record_id} not found")
        if self.speaker_names_patch is not None:
            # The search trigger re-indexes the names with the record's other columns.
            await ctx.conn.execute(q.edits.PATCH_SPEAKER_NAMES,
                                   {**ids, "patch": self.speaker_names_patch})
            if self.voices is not None:
                await learn_names(ctx, record_id=self.record_id, owner_id=self.owner_id,
                                  names=orjson.loads(self.speaker_names_patch),
                                  rules=self.voices)
        if self.topics is None:
            return
        await replace_topics(ctx, record_id=self.record_id, owner_id=self.owner_id,
                             names=self.topics, origin="human")


async def replace_topics(ctx: WriteContext, *, record_id: str, owner_id: str,
                         names: tuple[str, ...], origin: str) -> None:
    """The record's topics become `names` (the owner's, created on first use), with
    their origin (`human`: a person's edit; `auto`: the describer's). The schema's own
    trigger refuses a sixth topic (IntegrityError). The record's `topic_names` is
    written once at the end, so its search row is re-indexed once, not per topic."""
    now = ctx.now()
    topic_ids = []
    for topic in dict.fromkeys(names):
        async with ctx.conn.execute(
            q.edits.UPSERT_TOPIC,
            {"id": new_id(), "owner_id": owner_id, "name": topic, "now": now},
        ) as topic_cursor:
            row = await topic_cursor.fetchone()
        assert row is not None, "an upsert with RETURNING answers a row"
        topic_ids.append(row["id"])
    # Only the dropped ones go (a topic no record keeps goes with them, by
    # trigger), so a kept topic keeps its row.
    await ctx.conn.execute(q.edits.DELETE_OTHER_RECORD_TOPICS,
                           {"record_id": record_id,
                            "topic_ids": orjson.dumps(topic_ids).decode()})
    for topic_id in topic_ids:
        await ctx.conn.execute(q.edits.INSERT_RECORD_TOPIC,
                               {"record_id": record_id, "topic_id": topic_id})
    await ctx.conn.execute(q.edits.SET_TOPIC_NAMES, {"record_id": record_id})
    await ctx.conn.execute(q.edits.SET_TOPICS_ORIGIN,
                           {"record_id": record_id, "origin": origin})


@dataclass(frozen=True, slots=True, kw_only=True)
class Corrected:
    revision: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CorrectTranscript(Command[Corrected]):
    """Store a corrected structure as the next revision, and its plain text
    (the search index follows through the texts trigger).

    `revision` is the one the person corrected: another answers `Conflict`
    and writes nothing. `NotFound` when the record is not the owner's or has
    no transcript yet (the caller tells the two apart). Only the newest
    `revisions_max` corrections stay (`storage.revisions_max`), pruned in
    this same transaction; the recognizer's original is kept in `structures`.
    The record's describe job, if it has one, is pending again (its automatic fields
    described the text before): the describer writes them anew, a person's never.
    """

    name: ClassVar[str] = "correct_transcript"
    record_id: str
    owner_id: str
    revision: int
    structure_json: str
    text: str
    revisions_max: int
    voice_lines: tuple[SpokenLine, ...] | None = None
    """The corrected lines when a line moved between speakers and known voices are on:
    the speakers' prints and profiles follow (`relearn_lines`)."""
    voices: VoiceRules | None = None

    async def execute(self, ctx: WriteContext) -> Corrected:
        now = ctx.now()
        async with ctx.conn.execute(
            q.edits.BUMP_REVISION,
            {"id": self.record_id, "owner_id": self.owner_id, "revision": self.revision,
             "now": now},
        ) as cursor:
            row = await cursor.fetchone()
        if row is None:
            async with ctx.conn.execute(
                q.edits.SELECT_OWNED, {"id": self.record_id, "owner_id": self.owner_id}
            ) as cursor:
                found = await cursor.fetchone()
            if found is None:
                raise NotFound(f"record {self.record_id} not found")
            raise Conflict(f"record {self.record_id} is at another revision")
        revision: int = row["revision"]
        await ctx.conn.execute(q.edits.INSERT_CORRECTION,
                               {"record_id": self.record_id, "revision": revision,
                                "contents": self.structure_json, "now": now})
        await ctx.conn.execute(q.edits.PRUNE_CORRECTIONS,
                               {"record_id": self.record_id, "revision": revision,
                                "keep": self.revisions_max})
        cursor = await ctx.conn.execute(q.edits.UPDATE_TRANSCRIPT_TEXT,
                                        {"record_id": self.record_id, "contents": self.text,
                                         "now": now})
        if cursor.rowcount != 1:
            raise NotFound(f"record {self.record_id} has no transcript")
        if self.voice_lines is not None and self.voices is not None:
            await relearn_lines(ctx, record_id=self.record_id, lines=self.voice_lines,
                                rules=self.voices)
        # The automatic title, brief and topics describe the text before the correction:
        # described again (never a person's field), as after a re-transcription.
        await ctx.conn.execute(q.describe.REQUEUE, {"record_id": self.record_id, "now": now})
        return Corrected(revision=revision)


@dataclass(frozen=True, slots=True, kw_only=True)
class Deleted:
    """What lies outside the database and goes after the rows: the parts'
    objects in Object Storage (by part index; the folder goes whole)."""

    record_id: str
    part_indexes: tuple[int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteRecord(Command[Deleted]):
    """Every row of the record, in this command's savepoint, in any stage.

    A step holding the record loses its claim with the row. Raises
    `NotFound` for a record that is not the owner's (nothing is removed).
    The `record.deleted` webhook deliveries are written with it.
    """

    name: ClassVar[str] = "delete_record"
    scrubs: ClassVar[bool] = True  # the transcript and prints out of the WAL too
    record_id: str
    owner_id: str

    async def execute(self, ctx: WriteContext) -> Deleted:
        async with ctx.conn.execute(
            q.edits.SELECT_OWNED, {"id": self.record_id, "owner_id": self.owner_id}
        ) as cursor:
            if await cursor.fetchone() is None:
                raise NotFound(f"record {self.record_id} not found")
        params = {"record_id": self.record_id}
        # While the row still tells what the record was.
        await enqueue_event(ctx, record_id=self.record_id, event="record.deleted")
        async with ctx.conn.execute(q.edits.RECORD_PARTS, params) as cursor:
            parts = tuple(sorted(row["part_index"] for row in await cursor.fetchall()))
        for statement in q.edits.DELETE_RECORD_IN_ORDER:
            await ctx.conn.execute(statement, params)
        return Deleted(record_id=self.record_id, part_indexes=parts)
