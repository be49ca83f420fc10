"""DeleteRecord in the writer: a Telegram record deleted gets no reply afterwards."""

from __future__ import annotations

from tests.factories import make_record, make_user
from transcriber.db.commands.edits import DeleteRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.pipeline.notify import Delivered, Delivery
from transcriber.stages import HaltReason
from transcriber.testing.notifier import RecordingNotifier


async def test_a_deleted_telegram_record_gets_no_reply(
    writer: Writer, readers: ReaderPool
) -> None:
    owner = await make_user(writer)
    record_id = await make_record(writer, owner, source="telegram", tg_chat_id=5,
                                  tg_message_id=7)
    notifier = RecordingNotifier()
    delivery = Delivery(readers, lambda: notifier)
    assert await delivery.transcript(record_id) == Delivered.SENT  # before: it would answer
    await writer.ask(DeleteRecord(record_id=record_id, owner_id=owner.id))
    assert await delivery.transcript(record_id) == Delivered.NO_REPLY
    assert await delivery.halt_notice(record_id, HaltReason.STUCK) == Delivered.NO_REPLY
    assert len(notifier.attempts) == 1
