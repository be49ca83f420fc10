"""`transcriber transcribe` progress: the bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io
from pathlib import Path

from transcriber.cli.transcribe import Tracked, _plain, bar
from transcriber.pipeline.progress import Progress


def _progress(fraction: float, done: int, eta: int | None) -> Progress:
    return Progress(stage="recognize", done=done, total=6, fraction=fraction, eta_seconds=eta)


def test_the_bar_shows_the_fraction_parts_and_eta() -> None:
    assert bar(_progress(0.5, 3, 65), width=10) == "[#####.....]  50% 3/6 ETA 1m05s"
    assert bar(_progress(1.0, 6, 0), width=4) == "[####] 100% 6/6 ETA 0s"
    assert bar(_progress(0.1, 0, None), width=10) == "[#.........]  10% 0/6"
    assert bar(_progress(0.2, 1, 7300), width=5).endswith("ETA 2h01m")
    assert bar(None) == ""


def test_plain_lines_only_when_something_changed() -> None:
    err = io.StringIO()
    item = Tracked(path=Path("talk.mp3"), record_id="r", stage="normalized")
    item.progress = _progress(0.2, 1, 100)
    _plain([item], err)
    item.progress = _progress(0.2, 1, 90)  # only the ETA moved: nothing new to say
    _plain([item], err)
    item.progress = _progress(0.35, 2, 80)
    _plain([item], err)
    assert err.getvalue().splitlines() == [
        "talk.mp3: normalized recognize 1/6 20% ETA 1m40s",
        "talk.mp3: normalized recognize 2/6 35% ETA 1m20s",
    ]
