"""What people found on the default settings (issue 38), through `transcriber describe ID`
and the describer actor on a real archive: a short Russian message said three times
gets a topic and no title that repeats it; a transcript a person corrected to be about
finance gets the owner's "Finance"."""

from __future__ import annotations

import pytest

from tests.helpers.describe import Finisher
from tests.helpers.meetings import VOICE_RU
from tests.helpers.pipeline import MakeActor
from transcriber.cli.describe import describe_command
from transcriber.db import reads
from transcriber.db.commands.edits import CorrectTranscript, EditRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.records import RecordCard
from transcriber.db.writer import Writer
from transcriber.domain.transcripts import dump_structure, plain_text, render
from transcriber.followups.describe import DescriberActor
from transcriber.ports import Utterance
from transcriber.providers.describe.extractive import ExtractiveDescriber
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock

FINANCE = ("We talked about finance today. Finance is hard this month. "
           "Our finances are fine though.")


@pytest.fixture
def finisher(make_actor: MakeActor, writer: Writer, readers: ReaderPool,
             clock: FakeClock) -> Finisher:
    return Finisher(make_actor=make_actor, writer=writer, readers=readers, clock=clock)


def _said(text: str, seconds: int = 6) -> list[Utterance]:
    return [Utterance(start_ms=0, end_ms=seconds * 1000, channel=0, text=text)]


async def _card(readers: ReaderPool, record_id: str) -> RecordCard:
    subject = await reads.describe.subject(readers, record_id=record_id)
    assert subject is not None
    card = await reads.records.card(readers, record_id=record_id, owner_id=subject.owner_id)
    assert card is not None
    return card


def _actor(finisher: Finisher, settings: Settings) -> DescriberActor:
    return DescriberActor(writer=finisher.writer, readers=finisher.readers,
                          clock=finisher.clock, describer=ExtractiveDescriber(),
                          settings=settings.describer)


async def _corrected_to_finance(finisher: Finisher, writer: Writer, readers: ReaderPool,
                                settings: Settings) -> str:
    """The owner holds "Finance" (on another record); a record the service described
    while it said something else is corrected to be about finance."""
    tagged = await finisher.finish(_said("Budget review for the quarter."))
    owner = (await reads.describe.subject(readers, record_id=tagged)).owner_id  # type: ignore[union-attr]
    await writer.ask(EditRecord(record_id=tagged, owner_id=owner, topics=("Finance",)))
    record_id = await finisher.finish(_said("Fine ants walk around the garden in the sun."))
    await _actor(finisher, settings).round()
    before = await _card(readers, record_id)
    assert before.topics_origin == "auto"
    assert "Finance" not in before.topics
    said = _said(FINANCE, seconds=9)
    await writer.ask(CorrectTranscript(
        record_id=record_id, owner_id=owner, revision=before.revision,
        structure_json=dump_structure(said), text=plain_text(said),
        revisions_max=settings.storage.revisions_max))
    return record_id


async def test_describe_id_after_a_correction_finds_the_owners_topic(
    finisher: Finisher, writer: Writer, readers: ReaderPool, settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    record_id = await _corrected_to_finance(finisher, writer, readers, settings)
    job = await reads.describe.job(readers, record_id=record_id)
    assert job is not None
    assert job.state == "pending"  # the correction asks for a description again
    assert await describe_command(settings, record=record_id, every=False,
                                  force_auto=False) == 0
    assert f"{record_id}: title, brief, topics by extractive" in capsys.readouterr().out
    card = await _card(readers, record_id)
    assert card.topics == ("Finance",)  # "finance" twice and "finances" once
    assert card.title.startswith("We talked about finance")
    job = await reads.describe.job(readers, record_id=record_id)
    assert job is not None
    assert job.state == "done"  # answered: the service does not describe it twice
    assert await _actor(finisher, settings).round() == 0


async def test_the_service_describes_a_corrected_transcript_again_but_not_a_persons_field(
    finisher: Finisher, writer: Writer, readers: ReaderPool, settings: Settings,
) -> None:
    record_id = await _corrected_to_finance(finisher, writer, readers, settings)
    owner = (await reads.describe.subject(readers, record_id=record_id)).owner_id  # type: ignore[union-attr]
    await writer.ask(EditRecord(record_id=record_id, owner_id=owner, title="Ants"))
    assert await _actor(finisher, settings).round() == 1
    card = await _card(readers, record_id)
    assert card.topics == ("Finance",)
    assert (card.title, card.title_origin) == ("Ants", "human")


async def test_a_short_russian_message_said_three_times_gets_a_topic_and_no_title(
    finisher: Finisher, readers: ReaderPool, settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    finisher.describing = False  # described by hand, as an archive from before
    records = [await finisher.finish(_said(VOICE_RU)) for _ in range(3)]
    assert await describe_command(settings, record=None, every=True, force_auto=False) == 0
    assert "described 3 records" in capsys.readouterr().out
    for record_id in records:
        card = await _card(readers, record_id)
        assert card.topics == ("распознавание русской речи",)
        assert card.title == ""  # the message is shorter than a title
        assert card.brief == VOICE_RU
        # The TXT export says the message once.
        assert render(_said(VOICE_RU), "txt", title=card.title).count("Сегодня") == 1
