"""Intake: a stored original becomes a record at the first stage."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from transcriber.core.errors import Conflict, QuotaExceeded
from transcriber.db import queries as q
from transcriber.db.commands.files import StoredFile, insert_file
from transcriber.db.commands.spaces import journal
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.stages import FIRST_STAGE

Source = Literal["http", "telegram"]
# How an `http` record came in (migration 0023): the web app, a bearer token's client,
# the local command, the watched folder.
Via = Literal["web", "api", "cli", "folder"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Accepted:
    record_id: str
    created: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class AcceptRecord(Command[Accepted]):
    """The `files` row and the record row, in one transaction.

    A Telegram message already stored (same chat and message id) answers with
    the existing record and `created=False`: intake is at-least-once. So does a
    resumable upload (`upload_id`) whose row names a record already; otherwise its row
    is marked with this record here, in the same transaction: a server stopped between
    the record and the upload's mark cannot exist, so a retry cannot make a second
    record. An upload whose row is gone (terminated, expired), or was marked by another
    process's transaction meanwhile, raises `Conflict` (the record undone).
    `queued_max_ms` (0: none) is the owner's quota of queued audio, checked here,
    in the writer's transaction, so two uploads at once cannot both squeeze in
    (`QuotaExceeded`).
    """

    name: ClassVar[str] = "accept_record"
    record_id: str
    owner_id: str
    original: StoredFile
    original_filename: str
    duration_ms: int
    title: str = ""
    source: Source = "http"
    tg_chat_id: int | None = None
    tg_message_id: int | None = None
    language: str = "auto"
    speakers: int | None = None
    queued_max_ms: int = 0
    via: Via | None = None
    watched_sha256: str | None = None
    """The watched folder's file's hash, remembered with the record (never read twice)."""
    upload_id: str | None = None
    space_id: str | None = None
    """The space the record is filed into, in its own transaction (the door checked that
    the owner may add records there): a crash cannot leave it outside, owner-only."""

    async def execute(self, ctx: WriteContext) -> Accepted:
        if self.upload_id is not None:
            async with ctx.conn.execute(q.uploads.BY_ID, {"id": self.upload_id}) as cursor:
                upload = await cursor.fetchone()
            if upload is None:
                raise Conflict("the upload is gone")
            if upload["record_id"] is not None:
                return Accepted(record_id=upload["record_id"], created=False)
        if self.tg_chat_id is not None and self.tg_message_id is not None:
            params = {"chat_id": self.tg_chat_id, "message_id": self.tg_message_id}
            async with ctx.conn.execute(q.records.SELECT_RECORD_BY_TELEGRAM, params) as cursor:
                existing = await cursor.fetchone()
            if existing is not None:
                return Accepted(record_id=existing["id"], created=False)
        if self.queued_max_ms:
            async with ctx.conn.execute(q.records.QUEUED_AUDIO_MS,
                                        {"owner_id": self.owner_id}) as cursor:
                row = await cursor.fetchone()
            queued_ms = int(row["queued_ms"]) if row is not None else 0
            if queued_ms + self.duration_ms > self.queued_max_ms:
                raise QuotaExceeded(queued_ms=queued_ms, limit_ms=self.queued_max_ms)
        now = ctx.now()
        await insert_file(ctx, self.original, record_id=self.record_id, owner_id=self.owner_id)
        await ctx.conn.execute(
            q.records.INSERT_RECORD,
            {"id": self.record_id, "owner_id": self.owner_id, "title": self.title,
             "original_filename": self.original_filename, "duration_ms": self.duration_ms,
             "size_bytes": self.original.size_bytes, "source": self.source,
             "tg_chat_id": self.tg_chat_id, "tg_message_id": self.tg_message_id,
             "state": FIRST_STAGE.value, "original_file_id": self.original.id, "now": now},
        )
        if self.title:
            await ctx.conn.execute(q.records.TITLE_GIVEN, {"id": self.record_id})
        if self.language != "auto":
            await ctx.conn.execute(q.records.SET_LANGUAGE,
                                   {"id": self.record_id, "language": self.language})
        if self.speakers is not None:
            await ctx.conn.execute(q.records.SET_SPEAKERS,
                                   {"id": self.record_id, "speakers": self.speakers})
        if self.via is not None:
            await ctx.conn.execute(q.records.SET_VIA, {"id": self.record_id, "via": self.via})
        if self.watched_sha256 is not None:
            await ctx.conn.execute(q.watch.REMEMBER, {"sha256": self.watched_sha256,
                                                      "record_id": self.record_id, "now": now})
        if self.upload_id is not None:
            cursor = await ctx.conn.execute(q.uploads.FINISH,
                                            {"id": self.upload_id, "record_id": self.record_id})
            if cursor.rowcount != 1:
                # Another process finished (or removed) the upload meanwhile (PostgreSQL:
                # the row was locked by its transaction): this record is undone.
                raise Conflict("the upload was finished or removed meanwhile")
        if self.space_id is not None:
            await ctx.conn.execute(q.spaces.MOVE_RECORD, {
                "id": self.record_id, "space_id": self.space_id, "now": now})
            await journal(ctx, record_id=self.record_id, step="moved", actor_id=self.owner_id,
                          detail=self.space_id)
        return Accepted(record_id=self.record_id, created=True)
