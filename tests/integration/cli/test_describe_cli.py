"""`transcriber describe RECORD_ID|--all [--force-auto]`: the describer by hand, on
finished records, never over a person's field."""

from __future__ import annotations

import dataclasses
import subprocess
import sys

import pytest

from tests.helpers.describe import Finisher
from tests.helpers.meetings import MEETING_EN, MEETING_RU, utterances
from tests.helpers.pipeline import MakeActor
from transcriber.cli.describe import describe_command
from transcriber.db import reads
from transcriber.db.commands.edits import EditRecord
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.records import RecordCard
from transcriber.db.writer import Writer
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock


@pytest.fixture
def finisher(make_actor: MakeActor, writer: Writer, readers: ReaderPool,
             clock: FakeClock) -> Finisher:
    # An archive from before the describer: `done` asked for no description.
    return Finisher(make_actor=make_actor, writer=writer, readers=readers, clock=clock,
                    describing=False)


async def _card(readers: ReaderPool, record_id: str) -> RecordCard:
    subject = await reads.describe.subject(readers, record_id=record_id)
    assert subject is not None
    card = await reads.records.card(readers, record_id=record_id, owner_id=subject.owner_id)
    assert card is not None
    return card


async def test_all_fills_what_nobody_set_and_keeps_a_persons_title(
    finisher: Finisher, writer: Writer, readers: ReaderPool, settings: Settings,
    capsys: pytest.CaptureFixture[str],
) -> None:
    english = await finisher.finish(utterances(MEETING_EN))
    russian = await finisher.finish(utterances(MEETING_RU))
    owner = (await reads.describe.subject(readers, record_id=english)).owner_id  # type: ignore[union-attr]
    await writer.ask(EditRecord(record_id=english, owner_id=owner, title="Mine"))
    third = await finisher.finish(utterances(MEETING_EN))
    assert await describe_command(settings, record=None, every=True, force_auto=False) == 0
    out = capsys.readouterr().out
    assert f"{english}: brief, topics by extractive" in out
    assert f"{russian}: title, brief, topics by extractive" in out
    assert "described 3 records" in out
    assert f"{third}: title, brief, topics by extractive" in out
    card = await _card(readers, english)
    assert (card.title, card.title_origin, card.brief_origin) == ("Mine", "human", "auto")
    assert "переезд" in (await _card(readers, russian)).title.lower()

    # Again: nothing left to fill; --force-auto describes the automatic fields again.
    assert await describe_command(settings, record=None, every=True, force_auto=False) == 0
    assert "described 0 records" in capsys.readouterr().out
    assert await describe_command(settings, record=english, every=False,
                                  force_auto=True) == 0
    assert f"{english}: brief, topics by extractive" in capsys.readouterr().out
    assert (await _card(readers, english)).title == "Mine"


async def test_one_record_that_is_not_done_or_not_there_is_refused(
    finisher: Finisher, writer: Writer, settings: Settings, capsys: pytest.CaptureFixture[str],
) -> None:
    from tests.helpers.factories import make_record, make_user  # noqa: PLC0415

    waiting = await make_record(writer, await make_user(writer, "bob"))
    assert await describe_command(settings, record=waiting, every=False, force_auto=False) == 1
    assert "is not done" in capsys.readouterr().err
    assert await describe_command(settings, record="nonsense", every=False,
                                  force_auto=False) == 1
    assert "not found" in capsys.readouterr().err
    off = dataclasses.replace(settings, describer=dataclasses.replace(
        settings.describer, provider="off"))
    assert await describe_command(off, record=None, every=True, force_auto=False) == 1
    assert "off" in capsys.readouterr().err


def test_the_command_line_needs_a_record_or_all() -> None:
    result = subprocess.run([sys.executable, "-m", "transcriber.cli", "describe"],
                            capture_output=True, text=True, check=False)
    assert result.returncode == 2
    assert "record_id --all" in result.stderr
