"""The normalized copy's Opus encoder effort against recognition (issue 38 item 7).

The service encodes every upload to OGG Opus at `OPUS_COMPRESSION_LEVEL`
(transcriber/providers/ffmpeg.py). For each hard condition (short versions,
`tests/helpers/hard_audio.py`) the same recording is normalized as the service does
it at the service's level and at a candidate level (TRANSCRIBER_BENCH_OPUS_LEVEL, 0),
and both copies are recognized on the default settings: WER (CER for Russian) and
the encoding's CPU seconds are printed side by side. Fails where the candidate errs
more than the service's level plus `tests.helpers.hard_audio.WER_MARGIN` on one
condition (a 32 s recording: two words of about a hundred move a WER by 0.02 either
way) or plus `MARGIN` on their mean, or where it encodes no cheaper. Short recordings do not show
a level's effect on the coverage check over minutes of audio: the overhead bench
(test_service_overhead.py) does.

Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_opus_level.py`
(TRANSCRIBER_BENCH_OPUS_CONDITIONS: a comma-separated list; every condition unset;
TRANSCRIBER_BENCH_OPUS_LEVEL: the candidate, 0).
"""

from __future__ import annotations

import asyncio
import os
import resource
import threading
from pathlib import Path

import orjson
import pytest

from tests.helpers import hard_audio
from tests.helpers.textmetrics import cer, wer
from tests.helpers.whisper import MakeWhisper
from transcriber.providers import ffmpeg
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.settings import FfmpegSettings

pytestmark = pytest.mark.bench

SPEECH_SECONDS = 32.0
GAP_SECONDS = 20.0
MARGIN = 0.01  # the candidate errs at most the service's level's plus this, on the mean
CANDIDATE = int(os.environ.get("TRANSCRIBER_BENCH_OPUS_LEVEL", "0"))
SERVICE = ffmpeg.OPUS_COMPRESSION_LEVEL
CHOSEN = [c for c in os.environ.get("TRANSCRIBER_BENCH_OPUS_CONDITIONS", "").split(",") if c]


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _normalize(source: Path, target: Path, level: int, monkeypatch: pytest.MonkeyPatch) -> float:
    """`source` normalized as the service does it at `level`; the encoding's CPU seconds."""
    monkeypatch.setattr(ffmpeg, "OPUS_COMPRESSION_LEVEL", level)
    before = _children_cpu()
    asyncio.run(FfmpegTranscoder(FfmpegSettings()).normalize(source, target, max_seconds=3600))
    return _children_cpu() - before


@pytest.mark.timeout(3600)
def test_a_cheaper_opus_level_costs_no_recognition(
        make_whisper: MakeWhisper, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert CANDIDATE != SERVICE, "the candidate is the service's level"
    recognizer = make_whisper()
    rows: list[tuple[str, float, float, float, float]] = []
    try:
        for name, condition in hard_audio.CONDITIONS.items():
            if CHOSEN and name not in CHOSEN:
                continue
            hard_audio.require(condition.language)
            recording = hard_audio.build(condition, SPEECH_SECONDS, tmp_path / f"{name}.flac",
                                         gap_seconds=GAP_SECONDS)
            error = cer if condition.language == "ru" else wer
            scored: dict[int, tuple[float, float]] = {}
            for level in (SERVICE, CANDIDATE):
                target = tmp_path / f"{name}-{level}.ogg"
                cpu = _normalize(recording.path, target, level, monkeypatch)
                payload = recognizer._recognize(target, threading.Event(), recording.language)
                text = " ".join(s["text"] for s in orjson.loads(payload)["segments"])
                scored[level] = (error(recording.text, text), cpu)
            ours, tried = scored[SERVICE], scored[CANDIDATE]
            rows.append((name, ours[0], tried[0], ours[1], tried[1]))
            print(f"{name}: error {ours[0]:.3f} at {SERVICE}, {tried[0]:.3f} at {CANDIDATE}",
                  flush=True)
    finally:
        asyncio.run(recognizer.close())
    print(f"\n| condition | WER/CER at {SERVICE} | at {CANDIDATE} | encoding CPU at "
          f"{SERVICE} / {CANDIDATE} |")
    print("| --- | --- | --- | --- |")
    for name, at_ours, at_tried, cpu_ours, cpu_tried in rows:
        print(f"| {name} | {at_ours:.3f} | {at_tried:.3f} | {cpu_ours:.2f} / {cpu_tried:.2f} s |")
    mean_ours = sum(r[1] for r in rows) / len(rows)
    mean_tried = sum(r[2] for r in rows) / len(rows)
    print(f"| mean | {mean_ours:.3f} | {mean_tried:.3f} | {sum(r[3] for r in rows):.2f} / "
          f"{sum(r[4] for r in rows):.2f} s |")
    worse = [r[0] for r in rows if r[2] > r[1] + hard_audio.WER_MARGIN]
    assert not worse, f"level {CANDIDATE} errs more than level {SERVICE} on {worse}"
    assert mean_tried <= mean_ours + MARGIN, (mean_tried, mean_ours)
    assert sum(r[4] for r in rows) < sum(r[3] for r in rows)
