"""No loops, no invented text at full size: the recordings of
`tests/helpers/invented_audio.py`, the default (batched) decoding against the sequential
one on the same files.

Monotone synthetic Russian and English (espeak-ng) over 2 and 5 minutes; a minute of a
music-like bed and a minute of crowd-like noise between two stretches of speech;
applause and laughter-like bursts over 2 minutes of speech; 2 minutes of speech with one
sentence said six times in the middle. It fails where a transcript repeats a phrase more
often than the audio, puts a word inside a stretch without speech, or where the default
is worse than sequential + 0.03 (CER for Russian). Prints the table of
docs/hard-audio.md.

Sizes: TRANSCRIBER_BENCH_INVENTED_SECONDS ("120,300", the espeak conditions;
the others run at the first size); conditions: TRANSCRIBER_BENCH_INVENTED_ONLY.
Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_invented_text.py`.
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

from tests.helpers import invented_audio
from tests.helpers.hard_audio import WER_MARGIN
from tests.helpers.invented_audio import most_repeats, words_in
from tests.helpers.textmetrics import cer, wer
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

SIZES = [float(s) for s in
         os.environ.get("TRANSCRIBER_BENCH_INVENTED_SECONDS", "120,300").split(",")]
ONLY = [n for n in os.environ.get("TRANSCRIBER_BENCH_INVENTED_ONLY", "").split(",") if n]
SPEECH_AROUND_GAPS = 60.0  # seconds of speech around the minute of music or crowd


def _decode(recognizer: WhisperRecognizer, recording: invented_audio.Invented
            ) -> tuple[dict[str, Any], float]:
    started = time.perf_counter()
    payload = recognizer._recognize(recording.path, threading.Event(), recording.language)
    answer: dict[str, Any] = orjson.loads(payload)
    return answer, time.perf_counter() - started


@pytest.mark.timeout(4 * 3600)
def test_no_loops_and_no_invented_text_at_full_size(tmp_path: Path) -> None:
    folder = tmp_path / "whisper"
    recognizers = {batched: WhisperRecognizer(RecognizerSettings(batched=batched),
                                              cache_dir=folder, default_time_limit_seconds=1e6)
                   for batched in (True, False)}
    rows: list[str] = []
    failures: list[str] = []
    runs = [(name, size) for name in invented_audio.CONDITIONS
            for size in (SIZES if name.startswith("espeak") else SIZES[:1])
            if not ONLY or name in ONLY]
    try:
        for name, size in runs:
            invented_audio.require(name)
            language, make = invented_audio.CONDITIONS[name]
            seconds = SPEECH_AROUND_GAPS if name.endswith("_between") else size
            recording = make(seconds, tmp_path / f"{name}.flac")
            error = cer if language == "ru" else wer
            cells: list[str] = []
            scores: dict[bool, float] = {}
            for batched in (True, False):
                answer, spent = _decode(recognizers[batched], recording)
                text = " ".join(s["text"] for s in answer["segments"])
                scores[batched] = error(recording.text, text)
                repeats = most_repeats(text)
                stray = words_in(answer, recording.no_speech)
                unclear = sum(b - a for a, b in answer["unclear"]) / 1000
                cells += [f"{scores[batched]:.3f}", str(repeats), str(len(stray)),
                          ",".join(f"{k} {v}" for k, v in sorted(answer["redecoded"].items()))
                          or "-", str(answer["repeats_removed"]), f"{unclear:.1f}",
                          f"{spent / recording.duration_s:.3f}"]
                side = "batched" if batched else "sequential"
                if repeats > recording.repeats:
                    failures.append(f"{name} {side}: a phrase {repeats} times")
                if stray:
                    failures.append(f"{name} {side}: {len(stray)} words without speech")
            if scores[True] > scores[False] + WER_MARGIN:
                failures.append(f"{name}: {scores[True]:.3f} against {scores[False]:.3f}")
            rows.append(f"| {name} | {recording.duration_s / 60:.1f} min | "
                        + " | ".join(cells) + " |")
            print(rows[-1], flush=True)
    finally:
        for recognizer in recognizers.values():
            asyncio.run(recognizer.close())
    print("\n| condition | length | batched error | most repeats | words without speech | "
          "decoded again | copies removed | unclear s | RTF | sequential error | most repeats"
          " | words without speech | decoded again | copies removed | unclear s | RTF |")
    print("| --- " * 16 + "|")
    print("\n".join(rows))
    assert not failures, failures
