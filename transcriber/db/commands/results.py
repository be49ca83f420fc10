"""Step results written inside an advance (`transcriber.pipeline.effects`): a
step's own record columns and the recognizer's transcript."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.writer import WriteContext
from transcriber.domain.transcripts import STRUCTURE_ROW

ColumnValue = int | str | None


async def set_record_columns(ctx: WriteContext, *, record_id: str,
                             values: Mapping[str, ColumnValue]) -> bool:
    """Set columns some step owns (any other is refused by the statement's builder);
    False when there is no record row to set them on."""
    cursor = await ctx.conn.execute(
        q.results.update_record_columns(list(values)),
        {**values, "record_id": record_id, "now": ctx.now()},
    )
    return cursor.rowcount == 1


@dataclass(frozen=True, slots=True, kw_only=True)
class SavedTranscript:
    text_id: str
    structure_id: str


async def save_transcript(ctx: WriteContext, *, record_id: str, text: str,
                          structure_json: str) -> SavedTranscript:
    """Upsert the `transcript` text and the recognizer's structure. A new recognizer
    transcript (a re-transcription) drops the corrections, which were of the old
    one, and moves the revision on: a correction still open against the old one
    meets a new revision (409) instead of overwriting this."""
    now = ctx.now()
    async with ctx.conn.execute(
        q.results.UPSERT_TEXT,
        {"id": new_id(), "record_id": record_id, "kind": "transcript", "contents": text,
         "now": now},
    ) as cursor:
        text_row = await cursor.fetchone()
    async with ctx.conn.execute(
        q.results.UPSERT_STRUCTURE,
        {"id": new_id(), "record_id": record_id, "version": STRUCTURE_ROW,
         "contents": structure_json, "now": now},
    ) as cursor:
        structure_row = await cursor.fetchone()
    assert text_row is not None
    assert structure_row is not None
    await ctx.conn.execute(q.edits.CLEAR_CORRECTIONS, {"record_id": record_id})
    await ctx.conn.execute(q.edits.NEXT_REVISION, {"record_id": record_id})
    return SavedTranscript(text_id=text_row["id"], structure_id=structure_row["id"])
