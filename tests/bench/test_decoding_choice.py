"""Beam size chosen by measurement (issue 45): the hard-audio corpus decoded by the
service's own recognizer (batched, the default) at beam 1, 3 and 5, error rate and
speed side by side, per condition and language.

Conditions: TRANSCRIBER_BENCH_BEAM_ONLY (comma-separated, default: continuous,
pink_5db, telephone, russian, russian_pink_5db); length: TRANSCRIBER_BENCH_BEAM_SECONDS
(60); beams: TRANSCRIBER_BENCH_BEAM_SIZES ("1,3,5").
Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_decoding_choice.py`
(the table in docs/recognition.md, "Beam size").
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path

import orjson
import pytest

from tests.helpers import hard_audio
from tests.helpers.textmetrics import cer, wer
from tests.helpers.whisper import MakeWhisper
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

ONLY = [n for n in os.environ.get(
    "TRANSCRIBER_BENCH_BEAM_ONLY",
    "continuous,pink_5db,telephone,russian,russian_pink_5db").split(",") if n]
SECONDS = float(os.environ.get("TRANSCRIBER_BENCH_BEAM_SECONDS", "60"))
BEAMS = [int(b) for b in os.environ.get("TRANSCRIBER_BENCH_BEAM_SIZES", "1,3,5").split(",")]


@pytest.mark.timeout(3600)
def test_beam_sizes_on_the_hard_corpus(make_whisper: MakeWhisper, tmp_path: Path) -> None:
    recognizers = {beam: make_whisper(RecognizerSettings(beam_size=beam)) for beam in BEAMS}
    rows: list[str] = []
    totals: dict[int, list[float]] = {beam: [] for beam in BEAMS}
    try:
        for name in ONLY:
            condition = hard_audio.CONDITIONS[name]
            hard_audio.require(condition.language)
            recording = hard_audio.build(condition, SECONDS, tmp_path / f"{name}.flac")
            error = cer if condition.language == "ru" else wer
            cells: list[str] = []
            # Beams in turn on the same file: the shared machine's drift falls on all.
            for beam in BEAMS:
                started = time.perf_counter()
                payload = recognizers[beam]._recognize(
                    recording.path, threading.Event(), condition.language)
                spent = time.perf_counter() - started
                text = " ".join(s["text"] for s in orjson.loads(payload)["segments"])
                score = error(recording.text, text)
                totals[beam].append(score)
                cells += [f"{score:.3f}", f"{spent / recording.duration_s:.3f}"]
            rows.append(f"| {name} | {condition.language} | " + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    finally:
        for recognizer in recognizers.values():
            asyncio.run(recognizer.close())
    head = " | ".join(f"beam {b} error | beam {b} RTF" for b in BEAMS)
    print(f"\n| condition | language | {head} |")
    print("| --- | --- |" + " --- | --- |" * len(BEAMS))
    print("\n".join(rows))
    means = {beam: sum(v) / len(v) for beam, v in totals.items()}
    print("mean error by beam:", {b: round(m, 3) for b, m in means.items()})
    # The default (5) must not lose to a narrower beam by more than the corpus margin.
    assert means[max(BEAMS)] <= min(means.values()) + hard_audio.WER_MARGIN
