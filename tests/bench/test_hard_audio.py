"""The hard-conditions corpus at full size: the default (batched) decoding against the
sequential one, condition by condition, on the same files in one run.

Every condition of `tests/helpers/hard_audio.py` over 60 s and 5 min of continuous speech (the
gap conditions: the speech split by 5 minutes of silence or pink noise). For each: WER
(CER for Russian), words per minute of speech, real-time factor, and for the default
the spans its coverage check decoded again. It fails where the default is worse than
sequential + 0.03, where its last utterance ends more than 3 s before the last speech,
or where an utterance follows itself more than twice. Prints the table that
docs/recognition.md carries.

Sizes: TRANSCRIBER_BENCH_CORPUS_SECONDS ("60,300"); conditions:
TRANSCRIBER_BENCH_CORPUS_ONLY (comma-separated names, default all).
Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_hard_audio.py`.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
import structlog

from tests.helpers import hard_audio
from tests.helpers.hard_audio import END_WITHIN_SECONDS, REPEATS_ALLOWED, WER_MARGIN, longest_run
from tests.helpers.textmetrics import cer, wer
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

SIZES = [float(s) for s in os.environ.get("TRANSCRIBER_BENCH_CORPUS_SECONDS", "60,300").split(",")]
ONLY = [n for n in os.environ.get("TRANSCRIBER_BENCH_CORPUS_ONLY", "").split(",") if n]
GAP_SECONDS = 300.0


def _decode(recognizer: WhisperRecognizer, recording: hard_audio.HardRecording
            ) -> tuple[list[dict[str, Any]], float, int]:
    with structlog.testing.capture_logs() as logs:
        started = time.perf_counter()
        payload = recognizer._recognize(recording.path, threading.Event(), recording.language)
        seconds = time.perf_counter() - started
    repaired = sum(e.get("repaired_spans", 0) for e in logs
                   if e["event"] == "recognition_uncovered")
    return orjson.loads(payload)["segments"], seconds, repaired


@pytest.mark.timeout(6 * 3600)
def test_the_corpus_batched_against_sequential(tmp_path: Path) -> None:
    folder = tmp_path / "whisper"
    recognizers = {batched: WhisperRecognizer(RecognizerSettings(batched=batched),
                                              cache_dir=folder, default_time_limit_seconds=1e6)
                   for batched in (True, False)}
    rows: list[str] = []
    failures: list[str] = []
    try:
        for seconds in SIZES:
            for name, condition in hard_audio.CONDITIONS.items():
                if ONLY and name not in ONLY:
                    continue
                hard_audio.require(condition.language)
                recording = hard_audio.build(condition, seconds, tmp_path / f"{name}.flac",
                                             gap_seconds=GAP_SECONDS)
                error = cer if condition.language == "ru" else wer
                speech_minutes = len(hard_audio.continuous(
                    hard_audio.russian_sentences() if condition.language == "ru"
                    else hard_audio.english_sentences(), seconds).samples) / 16_000 / 60
                cells: list[str] = []
                scores: dict[bool, float] = {}
                for batched in (True, False):
                    segments, spent, repaired = _decode(recognizers[batched], recording)
                    text = " ".join(s["text"] for s in segments)
                    scores[batched] = error(recording.text, text)
                    cells += [f"{scores[batched]:.3f}",
                              f"{len(text.split()) / speech_minutes:.0f}",
                              f"{spent / recording.duration_s:.3f}"]
                    if batched:
                        cells.append(str(repaired))
                        end = segments[-1]["end_ms"] / 1000 if segments else 0.0
                        if end < recording.speech_end_s - END_WITHIN_SECONDS:
                            failures.append(f"{name} {seconds:.0f}s ends at {end:.1f} s")
                        if longest_run([s["text"] for s in segments]) > REPEATS_ALLOWED:
                            failures.append(f"{name} {seconds:.0f}s repeats an utterance")
                if scores[True] > scores[False] + WER_MARGIN:
                    failures.append(f"{name} {seconds:.0f}s: {scores[True]:.3f} against "
                                    f"{scores[False]:.3f}")
                known = len(recording.text.split()) / speech_minutes
                rows.append(f"| {name} | {recording.duration_s / 60:.1f} min | {known:.0f} | "
                            + " | ".join(cells) + " |")
                print(rows[-1], flush=True)
    finally:
        for recognizer in recognizers.values():
            asyncio.run(recognizer.close())
    print("\n| condition | length | words/min known | batched WER | words/min | RTF | "
          "spans decoded again | sequential WER | words/min | RTF |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    print("\n".join(rows))
    assert not failures, failures
