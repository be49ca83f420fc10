"""The Telegram reply starts with the record's title (and its brief past a minute): the
reply written with `done` waits for the description, at most
`describer.reply_wait_seconds`, and goes as soon as the description is stored."""

from __future__ import annotations

import pytest

from tests.helpers.describe import Finisher
from tests.helpers.meetings import MEETING_EN, utterances
from tests.helpers.pipeline import MakeActor
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.quality import assess
from transcriber.followups.describe import DescriberActor
from transcriber.ports import Span, Utterance
from transcriber.providers.describe.extractive import ExtractiveDescriber
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock

CHAT = 4242


@pytest.fixture
def finisher(make_actor: MakeActor, writer: Writer, readers: ReaderPool,
             clock: FakeClock) -> Finisher:
    return Finisher(make_actor=make_actor, writer=writer, readers=readers, clock=clock)


async def _telegram_record(finisher: Finisher, settings: Settings, *, duration_ms: int,
                           wait: float = 30.0) -> str:
    finisher.with_bot(settings, reply_wait_seconds=wait)
    return await finisher.finish(utterances(MEETING_EN), source="telegram", tg_chat_id=CHAT,
                                 tg_message_id=7, duration_ms=duration_ms)


def _describer(finisher: Finisher, settings: Settings) -> DescriberActor:
    outbox = finisher.outbox
    assert outbox is not None
    return DescriberActor(writer=finisher.writer, readers=finisher.readers,
                          clock=finisher.clock, describer=ExtractiveDescriber(),
                          settings=settings.describer, described=outbox.deliver_record)


async def test_the_reply_waits_for_the_title_and_starts_with_it(
    finisher: Finisher, settings: Settings,
) -> None:
    await _telegram_record(finisher, settings, duration_ms=45_000)
    assert finisher.notifier.sent == []  # done, but its title is still being written
    await _describer(finisher, settings).round()
    [reply] = finisher.notifier.sent
    assert "release" in reply.title.lower()
    assert reply.brief == ""  # under a minute: the title alone
    assert reply.text is not None
    assert reply.text.startswith(f"S1: {MEETING_EN[0]}")  # the transcript itself follows


async def test_a_recording_over_a_minute_also_gets_its_brief(
    finisher: Finisher, settings: Settings,
) -> None:
    await _telegram_record(finisher, settings, duration_ms=5 * 60_000)
    await _describer(finisher, settings).round()
    [reply] = finisher.notifier.sent
    assert reply.title
    assert reply.brief
    assert reply.brief != reply.title


async def test_the_wait_is_bounded(finisher: Finisher, settings: Settings) -> None:
    await _telegram_record(finisher, settings, duration_ms=45_000, wait=30.0)
    outbox = finisher.outbox
    assert outbox is not None
    finisher.clock.advance(29)
    await outbox.round()
    assert finisher.notifier.sent == []
    finisher.clock.advance(1)  # no description after 30 s: the reply goes without one
    await outbox.round()
    [reply] = finisher.notifier.sent
    assert (reply.title, reply.brief) == ("", "")


async def test_a_record_whose_fields_are_all_a_persons_is_answered_at_once(
    finisher: Finisher, settings: Settings,
) -> None:
    from transcriber.db import reads  # noqa: PLC0415
    from transcriber.db.commands.edits import EditRecord  # noqa: PLC0415

    record_id = await _telegram_record(finisher, settings, duration_ms=45_000)
    subject = await reads.describe.subject(finisher.readers, record_id=record_id)
    assert subject is not None
    await finisher.writer.ask(EditRecord(record_id=record_id, owner_id=subject.owner_id,
                                         title="Mine", brief="", topics=()))
    await _describer(finisher, settings).round()  # nothing to write: settled, reply told
    [reply] = finisher.notifier.sent
    assert (reply.title, reply.brief) == ("Mine", "")


async def test_the_reply_carries_the_quality_report_and_a_poor_one_no_title(
    finisher: Finisher, settings: Settings,
) -> None:
    said = [Utterance(start_ms=0, end_ms=1500, channel=0, text="Subscribe")]
    poor = assess(said, speech=[Span(start_ms=0, end_ms=40_000)],
                  unclear=[Span(start_ms=1500, end_ms=40_000)], repeats_removed=0)
    finisher.with_bot(settings, reply_wait_seconds=30.0)
    await finisher.finish(said, source="telegram", tg_chat_id=CHAT, tg_message_id=7,
                          duration_ms=40_000, quality=poor)
    await _describer(finisher, settings).round()
    [reply] = finisher.notifier.sent
    assert reply.quality == poor
    assert reply.title == ""  # no title made of the few words of a poor transcript
