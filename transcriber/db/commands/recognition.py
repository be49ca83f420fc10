"""Writer commands for recognition operations (P3, P13).

The row of a part is written *before* the paid call; the provider's
operation id right after it answers; the saved answer's file when it is
fetched. Each write is conditional on the caller's acquisition token: a
caller that lost its claim writes nothing and hears `ClaimLost`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.errors import ClaimLost, TransientFailure
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.files import StoredFile, insert_file
from transcriber.db.reads.recognitions import Recognition
from transcriber.db.writer import Command, WriteContext

# Recognition: the row type the commands answer.
__all__ = ["PayloadAlreadySaved", "Recognition", "RegisterParts", "RegisterRecognition",
           "SavePayload", "SetExternalId"]


async def _require_claim(ctx: WriteContext, record_id: str, token: str) -> None:
    params = {"record_id": record_id, "token": token}
    async with ctx.conn.execute(q.recognition.HOLDS_CLAIM, params) as cursor:
        if await cursor.fetchone() is None:
            raise ClaimLost


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterRecognition(Command[Recognition]):
    """The part's row, before any paid call; an existing row is returned as it is."""

    name: ClassVar[str] = "register_recognition"
    record_id: str
    token: str
    part_index: int
    offset_ms: int
    provider: str
    model: str
    source_uri: str | None
    channel: int | None = None

    async def execute(self, ctx: WriteContext) -> Recognition:
        await _require_claim(ctx, self.record_id, self.token)
        await ctx.conn.execute(
            q.recognition.INSERT_RECOGNITION,
            {"id": new_id(), "record_id": self.record_id, "part_index": self.part_index,
             "offset_ms": self.offset_ms, "channel": self.channel, "provider": self.provider,
             "model": self.model, "source_uri": self.source_uri, "now": ctx.now()},
        )
        params = {"record_id": self.record_id, "part_index": self.part_index}
        async with ctx.conn.execute(q.recognition.SELECT_RECOGNITION_PART, params) as cursor:
            row = await cursor.fetchone()
        assert row is not None
        return Recognition.from_row(row)


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterParts(Command[list[Recognition]]):
    """Every part's row at once (one transaction: a crash leaves all or none), so a
    later claim reads the cut from the rows instead of making it again.

    With `channels=2` (a stereo copy, each channel recognized on its own) every
    offset has a row per channel: part k of channel c is `part_index` 2k + c, so
    the parts are recognized in time order, both channels of a span together.
    """

    name: ClassVar[str] = "register_recognition_parts"
    record_id: str
    token: str
    offsets: tuple[int, ...]
    provider: str
    model: str
    channels: int = 1

    async def execute(self, ctx: WriteContext) -> list[Recognition]:
        await _require_claim(ctx, self.record_id, self.token)
        for position, offset in enumerate(self.offsets):
            for channel in range(self.channels):
                await ctx.conn.execute(
                    q.recognition.INSERT_RECOGNITION,
                    {"id": new_id(), "record_id": self.record_id,
                     "part_index": position * self.channels + channel, "offset_ms": offset,
                     "channel": channel if self.channels > 1 else None,
                     "provider": self.provider, "model": self.model, "source_uri": None,
                     "now": ctx.now()},
                )
        async with ctx.conn.execute(q.recognition.SELECT_RECOGNITIONS,
                                    {"record_id": self.record_id}) as cursor:
            return [Recognition.from_row(row) for row in await cursor.fetchall()]


@dataclass(frozen=True, slots=True, kw_only=True)
class SetExternalId(Command[bool]):
    """The provider's operation id, right after it answered; False if one was already set."""

    name: ClassVar[str] = "set_recognition_external_id"
    recognition_id: str
    record_id: str
    token: str
    external_id: str
    # True when a failed operation was submitted again and its id must be replaced.
    replace: bool = False

    async def execute(self, ctx: WriteContext) -> bool:
        await _require_claim(ctx, self.record_id, self.token)
        query = q.recognition.REPLACE_EXTERNAL_ID if self.replace else q.recognition.SET_EXTERNAL_ID
        cursor = await ctx.conn.execute(
            query,
            {"id": self.recognition_id, "record_id": self.record_id, "token": self.token,
             "external_id": self.external_id, "now": ctx.now()},
        )
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True, kw_only=True)
class MarkPartStarted(Command[bool]):
    """A local recognizer starts on this part now (its holder only); False: not written
    (the part's answer is saved already, or the claim is gone)."""

    name: ClassVar[str] = "mark_recognition_started"
    recognition_id: str
    record_id: str
    token: str

    async def execute(self, ctx: WriteContext) -> bool:
        cursor = await ctx.conn.execute(q.recognition.MARK_PART_STARTED, {
            "id": self.recognition_id, "record_id": self.record_id, "token": self.token,
            "now": ctx.now()})
        return cursor.rowcount == 1


@dataclass(frozen=True, slots=True, kw_only=True)
class SavePayload(Command[bool]):
    """The `files` row of the saved provider answer, and the part marked finished."""

    name: ClassVar[str] = "save_recognition_payload"
    recognition_id: str
    record_id: str
    token: str
    file: StoredFile

    async def execute(self, ctx: WriteContext) -> bool:
        await _require_claim(ctx, self.record_id, self.token)
        await insert_file(ctx, self.file, record_id=self.record_id)
        cursor = await ctx.conn.execute(
            q.recognition.SET_PAYLOAD_FILE,
            {"id": self.recognition_id, "record_id": self.record_id, "token": self.token,
             "payload_file": self.file.id, "now": ctx.now()},
        )
        if cursor.rowcount != 1:
            # Already finished by an earlier run: keep that answer, drop this files row.
            raise PayloadAlreadySaved
        return True


class PayloadAlreadySaved(TransientFailure):
    def __init__(self) -> None:
        super().__init__("recognition answer already saved")
