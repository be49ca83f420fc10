"""P3: effects write only the step's own columns; transcript and structure are upserted."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import pytest

from tests.helpers.factories import make_record, make_user
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.pipeline.effects import ColumnNotOwned, SaveTranscript, SetColumns
from transcriber.pipeline.step import Effect


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyEffect(Command[None]):
    name: ClassVar[str] = "apply_effect_test"
    effect: Effect
    record_id: str
    step: str

    async def execute(self, ctx: WriteContext) -> None:
        await self.effect.apply(ctx, record_id=self.record_id, step=self.step)


@pytest.mark.parametrize(("step", "column"), [("finish", "owner_id"), ("normalize", "title"),
                                              ("submit", "normalized_file_id"),
                                              ("poll", "brief")])
async def test_p3_step_cannot_write_a_column_it_does_not_own(
    writer: Writer, readers: ReaderPool, step: str, column: str,
) -> None:
    record_id = await make_record(writer, await make_user(writer))
    with pytest.raises(ColumnNotOwned):
        await writer.ask(ApplyEffect(effect=SetColumns(values={column: "x"}),
                                     record_id=record_id, step=step))
    row = await readers.fetch_one(q.records.SELECT_RECORD, {"id": record_id})
    assert row is not None
    assert row["title"] == ""


async def test_save_transcript_upserts_text_and_structure(writer: Writer,
                                                         readers: ReaderPool) -> None:
    record_id = await make_record(writer, await make_user(writer))
    for text in ("first", "second"):
        await writer.ask(ApplyEffect(
            effect=SaveTranscript(text=text, structure_json='{"version":1,"utterances":[]}'),
            record_id=record_id, step="poll"))
    row = await readers.fetch_one(q.records.SELECT_RECORD, {"id": record_id})
    transcript = await readers.fetch_one(q.results.SELECT_TEXT,
                                         {"record_id": record_id, "kind": "transcript"})
    assert row is not None
    assert transcript is not None
    assert transcript["contents"] == "second"
    assert row["transcript_text_id"] == transcript["id"]
    assert row["structure_id"] is not None
