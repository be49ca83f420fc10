"""Resumable uploads (tus): one upload in flight, a person's open count, the expired."""

from __future__ import annotations

from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import Row, columns


@dataclass(frozen=True, slots=True, kw_only=True)
class Upload:
    """An upload as stored: `received` bytes kept for good of `length` declared."""

    id: str
    owner_id: str
    length: int
    received: int
    deferred: bool
    """The client has not said the length yet (`length` is the upload limit till then)."""
    filename: str
    language: str | None
    space: str | None
    created_at: str
    expires_at: str
    record_id: str | None

    @classmethod
    def from_row(cls, row: Row) -> Upload:
        return cls(**columns(cls, row, length=int(row["length"]),
                             received=int(row["received"]),
                             deferred=bool(row["deferred"])))

    @property
    def complete(self) -> bool:
        return not self.deferred and self.received == self.length


async def owned(readers: ReaderPool, *, upload_id: str, owner_id: str) -> Upload | None:
    row = await readers.fetch_one(q.uploads.OWNED, {"id": upload_id, "owner_id": owner_id})
    return None if row is None else Upload.from_row(row)


async def open_count(readers: ReaderPool, *, owner_id: str) -> int:
    row = await readers.fetch_one(q.uploads.OPEN_OF_OWNER, {"owner_id": owner_id})
    return 0 if row is None else int(row["n"])


async def expired(readers: ReaderPool, *, now: str, batch: int) -> list[Upload]:
    return [Upload.from_row(row) for row in
            await readers.fetch_all(q.uploads.EXPIRED, {"now": now, "batch": batch})]


async def exists(readers: ReaderPool, *, upload_id: str) -> bool:
    return await readers.fetch_one(q.uploads.BY_ID, {"id": upload_id}) is not None
