"""Findings reproduced through `transcriber describe ID` on a real archive."""

from __future__ import annotations

import pytest

from tests.helpers.describe import Finisher
from tests.helpers.pipeline import MakeActor
from transcriber.cli.describe import describe_command
from transcriber.db import reads
from transcriber.db.commands.edits import CorrectTranscript, EditRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.ports import Utterance
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.transcripts import dump_structure, plain_text


@pytest.fixture
def finisher(make_actor: MakeActor, writer: Writer, readers: ReaderPool,
             clock: FakeClock) -> Finisher:
    return Finisher(make_actor=make_actor, writer=writer, readers=readers, clock=clock,
                    describing=True)


async def test_finance(finisher: Finisher, writer: Writer, readers: ReaderPool,
                       settings: Settings, capsys: pytest.CaptureFixture[str]) -> None:
    tagged = await finisher.finish([Utterance(start_ms=0, end_ms=4000, channel=0,
                                              text="Budget review for the quarter.")])
    owner = (await reads.describe.subject(readers, record_id=tagged)).owner_id
    await writer.ask(EditRecord(record_id=tagged, owner_id=owner, topics=("Finance",)))
    record = await finisher.finish([Utterance(start_ms=0, end_ms=9000, channel=0,
                                              text="The weather is nice today and we walk.")])
    from transcriber.pipeline.describer import DescriberActor
    from transcriber.providers.extractive import ExtractiveDescriber
    await DescriberActor(writer=writer, readers=readers, clock=finisher.clock, describer=ExtractiveDescriber(), settings=settings.describer).round()
    card = await reads.records.card(readers, record_id=record, owner_id=owner)
    print("before", card.title, card.brief, card.topics, card.topics_origin)
    said = [Utterance(start_ms=0, end_ms=9000, channel=0,
                      text="We talked about finance today. Finance is hard. "
                           "Our finances are fine.")]
    await writer.ask(CorrectTranscript(record_id=record, owner_id=owner,
                                       revision=card.revision,
                                       structure_json=dump_structure(said),
                                       text=plain_text(said), revisions_max=5))
    assert await describe_command(settings, record=record, every=False,
                                  force_auto=False) == 0
    print(capsys.readouterr())
    card = await reads.records.card(readers, record_id=record, owner_id=owner)
    print(card.title, card.brief, card.topics)
    assert 0
