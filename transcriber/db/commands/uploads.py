"""Resumable uploads (tus): an upload begun, its stored bytes moved on, the upload
removed (docs/api.md, "Resumable uploads"); its record is noted by `AcceptRecord`, in
the record's own transaction.

The bytes themselves live in a partial file beside the database (`web/uploads.py`);
these rows make the offset durable across a restart of the server.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.errors import Conflict
from transcriber.db import queries as q
from transcriber.db.reads.uploads import Upload
from transcriber.db.writer import Command, WriteContext


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateUpload(Command[Upload]):
    """A new upload of `length` bytes; raises `Conflict` when the owner holds `most`
    unfinished uploads already (each may reserve up to the upload limit on disk)."""

    name: ClassVar[str] = "create_upload"
    upload_id: str
    owner_id: str
    length: int
    deferred: bool = False
    filename: str
    language: str | None
    space: str | None
    ttl_seconds: float
    most: int

    async def execute(self, ctx: WriteContext) -> Upload:
        async with ctx.conn.execute(q.uploads.OPEN_OF_OWNER, {"owner_id": self.owner_id}) as cur:
            row = await cur.fetchone()
        if row is not None and int(row["n"]) >= self.most:
            raise Conflict(f"at most {self.most} unfinished uploads per person")
        await ctx.conn.execute(q.uploads.INSERT, {
            "id": self.upload_id, "owner_id": self.owner_id, "length": self.length,
            "deferred": int(self.deferred),
            "filename": self.filename, "language": self.language, "space": self.space,
            "now": ctx.now(), "expires_at": ctx.now(plus_seconds=self.ttl_seconds),
        })
        async with ctx.conn.execute(q.uploads.BY_ID, {"id": self.upload_id}) as cursor:
            created = await cursor.fetchone()
        assert created is not None
        return Upload.from_row(created)


@dataclass(frozen=True, slots=True, kw_only=True)
class AdvanceUpload(Command[bool]):
    """`received` from `expected` to `received`, the expiry renewed; False when the
    stored offset was not `expected` any more (another PATCH won)."""

    name: ClassVar[str] = "advance_upload"
    savepoint: ClassVar[bool] = False  # one UPDATE, nothing after it
    upload_id: str
    expected: int
    received: int
    ttl_seconds: float

    async def execute(self, ctx: WriteContext) -> bool:
        cursor = await ctx.conn.execute(q.uploads.ADVANCE, {
            "id": self.upload_id, "expected": self.expected, "received": self.received,
            "expires_at": ctx.now(plus_seconds=self.ttl_seconds)})
        return bool(cursor.rowcount == 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class SetUploadLength(Command[bool]):
    """A deferred upload's length, named by a PATCH; False when it was named already
    or is below the bytes stored."""

    name: ClassVar[str] = "set_upload_length"
    savepoint: ClassVar[bool] = False
    upload_id: str
    length: int

    async def execute(self, ctx: WriteContext) -> bool:
        cursor = await ctx.conn.execute(q.uploads.SET_LENGTH,
                                        {"id": self.upload_id, "length": self.length})
        return bool(cursor.rowcount == 1)


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteUpload(Command[bool]):
    """The upload's row gone (terminated, refused or expired); False if it was gone."""

    name: ClassVar[str] = "delete_upload"
    savepoint: ClassVar[bool] = False
    upload_id: str

    async def execute(self, ctx: WriteContext) -> bool:
        cursor = await ctx.conn.execute(q.uploads.DELETE, {"id": self.upload_id})
        return bool(cursor.rowcount == 1)
