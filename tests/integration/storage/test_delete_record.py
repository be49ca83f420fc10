"""DeleteRecord in the writer: a Telegram record deleted gets no reply afterwards.

Its pending outbox row (a reply written with `done`) goes with the record in
the same transaction, so the delivery actor finds nothing to send, and a
late delivery of the record finds no address."""

from __future__ import annotations

from tests.helpers.factories import make_record, make_user
from transcriber.db import queries as q
from transcriber.db.commands.edits import DeleteRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.followups.after import Delivered, Delivery
from transcriber.ids import new_id
from transcriber.stages import HaltReason
from transcriber.testing.notifier import RecordingNotifier


class _EnqueueReply(Command[None]):
    """The outbox row `done` writes for a Telegram record (the same named statement)."""

    name = "test_enqueue_reply"

    def __init__(self, record_id: str) -> None:
        self.record_id = record_id

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.telegram.ENQUEUE, {
            "id": new_id(), "record_id": self.record_id, "kind": "transcript",
            "halt_reason": None, "now": ctx.now()})


async def test_a_deleted_telegram_record_gets_no_reply(
    writer: Writer, readers: ReaderPool
) -> None:
    owner = await make_user(writer)
    record_id = await make_record(writer, owner, source="telegram", tg_chat_id=5,
                                  tg_message_id=7)
    await writer.ask(_EnqueueReply(record_id))
    params = {"record_id": record_id}
    assert len(await readers.fetch_all(q.telegram.OUTBOX_OF_RECORD, params)) == 1
    notifier = RecordingNotifier()
    delivery = Delivery(readers, lambda: notifier)
    # Before: the record is addressable (a run without the outbox says so).
    assert await delivery.transcript(record_id) == Delivered.UNDELIVERED
    await writer.ask(DeleteRecord(record_id=record_id, owner_id=owner.id))
    assert await readers.fetch_all(q.telegram.OUTBOX_OF_RECORD, params) == []
    assert await delivery.transcript(record_id) == Delivered.NO_REPLY
    assert await delivery.halt_notice(record_id, HaltReason.STUCK) == Delivered.NO_REPLY
    assert notifier.attempts == []
