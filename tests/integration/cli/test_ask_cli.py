"""`transcriber ask QUESTION --login LOGIN`: a person's passages, printed, the best line
marked; another person's records never answer."""

from __future__ import annotations

import json

import pytest

from tests.helpers.describe import Finisher
from tests.helpers.pipeline import MakeActor
from transcriber.cli.ask import ask_command
from transcriber.cli.exits import EXIT_REFUSED
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.ports import Utterance
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock

LINES = ("Good morning, let's start.", "Поставщик бумаги поднял цены на восемь процентов.",
         "Надо согласовать новый договор до конца месяца.")


@pytest.fixture
def finisher(make_actor: MakeActor, writer: Writer, readers: ReaderPool,
             clock: FakeClock) -> Finisher:
    return Finisher(make_actor=make_actor, writer=writer, readers=readers, clock=clock,
                    describing=False)


def _said(lines: tuple[str, ...]) -> list[Utterance]:
    return [Utterance(start_ms=n * 4000, end_ms=n * 4000 + 3000, channel=0, text=text)
            for n, text in enumerate(lines)]


async def test_ask_prints_the_persons_passages_only(
    finisher: Finisher, settings: Settings, capsys: pytest.CaptureFixture[str],
) -> None:
    mine = await finisher.finish(_said(LINES), login="alice")
    theirs = await finisher.finish(_said(("Поставщик Зефир берёт тринадцать процентов.",)),
                                   login="bob")
    capsys.readouterr()  # the pipeline's log lines
    assert await ask_command(settings, question="На сколько поставщик поднял цены?",
                             login="alice", date_from=None, date_to=None, as_json=False) == 0
    out = capsys.readouterr().out
    assert f"[1] 2026-01-01 - ({mine})" in out
    assert " > 0:00:04 -: Поставщик бумаги поднял цены на восемь процентов." in out
    assert theirs not in out
    assert "Зефир" not in out
    assert await ask_command(settings, question="поставщ", login="alice", date_from=None,
                             date_to=None, as_json=True) == 0
    body = json.loads(capsys.readouterr().out)
    assert body["answer"] is None
    assert body["citations"][0]["quote"] == LINES[1]
    assert {p["record_id"] for p in body["passages"]} == {mine}
    assert await ask_command(settings, question="поставщик", login="nobody", date_from=None,
                             date_to=None, as_json=False) == EXIT_REFUSED
