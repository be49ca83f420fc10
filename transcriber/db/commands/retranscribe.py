"""A person sends a finished or halted record back to recognition (a human event)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.errors import Conflict, NotFound
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import insert_event
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.stages import Stage


def retranscribe_stage(*, has_normalized_copy: bool) -> Stage:
    """Where a re-transcription starts: recognition, or normalization first when
    the record never got its normalized copy (halted before it)."""
    return Stage.NORMALIZED if has_normalized_copy else Stage.UPLOADED


@dataclass(frozen=True, slots=True, kw_only=True)
class Retranscribed:
    record_id: str
    stage: Stage


@dataclass(frozen=True, slots=True, kw_only=True)
class Retranscribe(Command[Retranscribed]):
    """Send a `done` or halted record back to recognition, optionally in another language.

    The old recognition rows go, so the submit step starts (and pays for) a
    new operation: that is what was asked for. A record that is only resumed
    (`Resume`) keeps them, and nothing already paid for is repeated. The
    original and normalized copies stay, and so do the transcript and its
    structure until the new ones are written. `NotFound` for a record that
    is not the owner's; `Conflict` for one in any other stage.
    """

    name: ClassVar[str] = "retranscribe"
    record_id: str
    owner_id: str
    language: str | None = None
    # The model to recognize it with (a name the door checked); None: by the routes.
    model: str | None = None
    actor_id: str | None = None
    """Who asked (the journal names them); None: the owner, from before it was kept."""

    async def execute(self, ctx: WriteContext) -> Retranscribed:
        async with ctx.conn.execute(
            q.edits.SELECT_FOR_RETRANSCRIBE, {"id": self.record_id}
        ) as cursor:
            row = await cursor.fetchone()
        if row is None or row["owner_id"] != self.owner_id:
            raise NotFound(f"record {self.record_id} not found")
        if row["state"] != Stage.DONE.value and row["halted_at"] is None:
            raise Conflict(f"record {self.record_id} is neither done nor halted")
        stage = retranscribe_stage(has_normalized_copy=row["normalized_file_id"] is not None)
        await ctx.conn.execute(q.edits.DELETE_RECOGNITIONS, {"record_id": self.record_id})
        await ctx.conn.execute(q.edits.RETRANSCRIBE, {
            "id": self.record_id, "stage": stage.value, "language": self.language,
            "model_wanted": self.model, "now": ctx.now()})
        await insert_event(ctx, record_id=self.record_id, origin="human", step="retranscribe",
                           outcome="resumed", actor_id=self.actor_id)
        return Retranscribed(record_id=self.record_id, stage=stage)
