"""`transcriber upload --wait`: its line per record says the time left, from the card's
`progress.eta_seconds`, in English and Russian, in whole minutes."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from transcriber.cli.answers import Card
from transcriber.cli.upload import progress_line, time_left


def _card(stage: str, fraction: float, eta: int | None, *, done: int = 0) -> Card:
    return Card.from_body(orjson.dumps(
        {"stage": "normalized", "halt": None, "poll_after_ms": 1000,
         "progress": {"stage": stage, "done": done, "total": 1, "fraction": fraction,
                      "eta_seconds": eta}}))


def _plain(card: dict[str, Any]) -> Card:
    return Card.from_body(orjson.dumps({"halt": None, **card}))


@pytest.fixture
def english(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")


@pytest.mark.usefixtures("english")
def test_the_line_of_a_queued_short_record_says_the_time_left() -> None:
    assert progress_line("call.ogg", _card("queue", 0.0, 12)) == \
        "call.ogg: queue 0/1 0%, less than a minute left"
    assert progress_line("call.ogg", _card("recognize", 0.5, 150)) == \
        "call.ogg: recognize 0/1 50%, about 2 min left"
    assert progress_line("talk.mp3", _card("recognize", 0.999, 3725, done=3)) == \
        "talk.mp3: recognize 3/1 99%, about 1 h 2 min left"
    # No estimate (none offered): the line without it; no progress: the stage.
    assert progress_line("call.ogg", _card("recognize", 0.5, None)) == \
        "call.ogg: recognize 0/1 50%"
    assert progress_line("call.ogg", _plain({"stage": "done", "progress": None})) == \
        "call.ogg: done"


@pytest.mark.usefixtures("english")
def test_the_time_left_changes_only_with_whole_minutes() -> None:
    assert time_left(61) == time_left(89) == ", about 1 min left"
    assert time_left(None) == ""


def test_the_line_follows_a_russian_locale(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LC_ALL", "ru_RU.UTF-8")
    assert progress_line("call.ogg", _card("queue", 0.0, 30)) == \
        "call.ogg: queue 0/1 0%, осталось меньше минуты"
    assert time_left(600) == ", осталось около 10 мин"
