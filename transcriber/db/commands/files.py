"""The `files` row: one type and one statement for every file a record keeps
(the original at intake, the normalized copy, a saved provider answer)."""

from __future__ import annotations

from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.writer import WriteContext


@dataclass(frozen=True, slots=True, kw_only=True)
class StoredFile:
    """A file already placed in the record folder, described for its `files` row."""

    id: str
    file_name: str
    size_bytes: int
    format: str
    duration_ms: int | None = None
    # 2: a normalized copy that kept both channels of a stereo call (migration 0009).
    channels: int = 1


async def insert_file(
    ctx: WriteContext, file: StoredFile, *, record_id: str, owner_id: str | None = None
) -> None:
    """Insert the row; without `owner_id` the record's own owner is taken (the
    record row must exist then, else the NOT NULL owner refuses the row)."""
    await ctx.conn.execute(q.files.INSERT, {
        "id": file.id, "owner_id": owner_id, "record_id": record_id,
        "file_name": file.file_name, "size_bytes": file.size_bytes, "format": file.format,
        "duration_ms": file.duration_ms, "now": ctx.now(),
    })
    if file.channels != 1:
        await ctx.conn.execute(q.files.SET_CHANNELS, {"id": file.id, "channels": file.channels})
