"""Effects a step returns in `Advanced(effects=...)`.

The engine's advance applies them inside the writer, in the same transaction
as the stage change and conditional on the acquisition token (P3): either the
stage moves and every effect lands, or nothing does. A step may set only the
record columns its stage owns (`StageSpec.owned_columns`): never `owner_id`,
`title`, `brief` or topics.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from transcriber.core.errors import TranscriberError
from transcriber.db.commands.files import StoredFile, insert_file
from transcriber.db.commands.results import ColumnValue, save_transcript, set_record_columns
from transcriber.db.writer import WriteContext
from transcriber.domain.stages import spec_of, stage_of_step
from transcriber.ports import RecordFiles
from transcriber.ports.files import PlacedFile


class ColumnNotOwned(TranscriberError):
    """A step tried to write a record column its stage does not own (P3)."""


class EffectMissedRecord(TranscriberError):
    """An effect found no record row to write to."""


def owned_columns(step: str) -> tuple[str, ...]:
    return spec_of(stage_of_step(step)).owned_columns


@dataclass(frozen=True, slots=True, kw_only=True)
class AddFile:
    """The `files` row of a file the step placed in the record-file store."""

    file: StoredFile
    # What was placed, so it can be removed when its row never lands.
    placed: PlacedFile | None = None

    @classmethod
    def of(cls, placed: PlacedFile, *, duration_ms: int | None = None,
           channels: int = 1) -> AddFile:
        return cls(file=StoredFile(id=placed.file_id, file_name=placed.file_name,
                                   size_bytes=placed.size_bytes, format=placed.format,
                                   duration_ms=duration_ms, channels=channels),
                   placed=placed)

    async def discard(self, files: RecordFiles) -> None:
        # The record may be gone (deleted under the step): its folder goes with its
        # last file (`discard`), not left for the next start's sweep.
        if self.placed is not None:
            await files.discard(self.placed)

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        try:
            await insert_file(ctx, self.file, record_id=record_id)
        except sqlite3.IntegrityError as exc:  # no record row: no owner for the file
            raise EffectMissedRecord(f"record {record_id} not found for its file row") from exc


async def discard_unwritten(effects: Iterable[object], files: RecordFiles) -> None:
    """Remove files whose rows did not land (the advance was stale or rolled
    back): without a row nothing would ever find or clean them."""
    for effect in effects:
        if isinstance(effect, AddFile):
            await effect.discard(files)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetColumns:
    """Set some of the step's own record columns."""

    values: Mapping[str, ColumnValue] = field(default_factory=lambda: MappingProxyType({}))

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        if not self.values:
            return
        allowed = owned_columns(step)
        foreign = sorted(set(self.values) - set(allowed))
        if foreign:
            raise ColumnNotOwned(f"step {step} may not write {', '.join(foreign)}")
        if not await set_record_columns(ctx, record_id=record_id, values=self.values):
            raise EffectMissedRecord(f"record {record_id} not found for its columns")


@dataclass(frozen=True, slots=True, kw_only=True)
class SaveTranscript:
    """Upsert the `transcript` text and the structure; point the record at them."""

    text: str
    structure_json: str

    async def apply(self, ctx: WriteContext, *, record_id: str, step: str) -> None:
        saved = await save_transcript(ctx, record_id=record_id, text=self.text,
                                      structure_json=self.structure_json)
        await SetColumns(values={"transcript_text_id": saved.text_id,
                                 "structure_id": saved.structure_id}).apply(
            ctx, record_id=record_id, step=step)
