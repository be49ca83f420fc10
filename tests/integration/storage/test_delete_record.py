"""DeleteRecord in the writer: a Telegram record deleted gets no reply afterwards.

Its pending outbox row (a reply written with `done`) goes with the record in
the same transaction, so the delivery actor finds nothing to send, and a
late delivery of the record finds no address."""

from __future__ import annotations

from tests.helpers.factories import make_record, make_user
from transcriber.core.clock import SystemClock
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.edits import DeleteRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.domain.stages import HaltReason
from transcriber.followups.parts import Moment
from transcriber.followups.reply import Delivered, Outbox
from transcriber.settings import TelegramSettings
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
    # A run without the bot: the reply's worker says why a record gets no reply.
    outbox = Outbox(writer=writer, readers=readers, clock=SystemClock(),
                    notifier=lambda: None, settings=TelegramSettings())
    done = Moment(record_id=record_id, occasion="done")
    halted = Moment(record_id=record_id, occasion="halted", halt_reason=HaltReason.STUCK)
    # Before: the record is addressable (a run without the bot says so).
    assert await outbox.reply_after(done) == Delivered.UNDELIVERED
    await writer.ask(DeleteRecord(record_id=record_id, owner_id=owner.id))
    assert await readers.fetch_all(q.telegram.OUTBOX_OF_RECORD, params) == []
    assert await outbox.reply_after(done) == Delivered.NO_REPLY
    assert await outbox.reply_after(halted) == Delivered.NO_REPLY
    assert notifier.attempts == []
