"""What word timestamps cost in the batched decoding (issues 12 and 13).

The service's own recognizer (`WhisperRecognizer._recognize`, batched on our
pause-cut clips) decodes the same file with and without `words`, the two
alternating (ABBA…, so drift in the shared machine's load falls on both), and
faster-whisper's `find_alignment` (the `model.align` call, one per batch of
clips) is timed inside the runs with words. Wall times on the shared 2-core
machine move by ±30 % between identical runs; the alignment's own seconds
against the decoding's are the figure that carries over.

Size: TRANSCRIBER_BENCH_WORDS_MINUTES (5), rounds: TRANSCRIBER_BENCH_WORDS_ROUNDS (2),
clips at once: TRANSCRIBER_BENCH_WORDS_BATCH (4, the default).
Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_word_times.py`.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.helpers import speech_audio
from tests.helpers.textmetrics import wer
from tests.helpers.whisper_timing import timed_alignment
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

MINUTES = float(os.environ.get("TRANSCRIBER_BENCH_WORDS_MINUTES", "5"))
ROUNDS = int(os.environ.get("TRANSCRIBER_BENCH_WORDS_ROUNDS", "2"))
BATCH = int(os.environ.get("TRANSCRIBER_BENCH_WORDS_BATCH", "4"))
# Issue 13: speaker separation may add at most 15 % to recognition; the word
# times are one part of it, so they get at most 10 % of the decoding.
ALIGN_SHARE_GOAL = 0.10
LONG_TIMEOUT_S = 4 * 3600


def _segments(whisper: WhisperRecognizer, source: Path, words: bool) -> tuple[list[Any], float]:
    started = time.perf_counter()
    payload = whisper._recognize(source, cancel=threading.Event(), language="en", words=words)
    return orjson.loads(payload)["segments"], time.perf_counter() - started


def _check_words(segments: list[dict[str, Any]]) -> int:
    """Every segment has words, in order, inside the segment; their count."""
    count = 0
    for segment in segments:
        words = segment["words"]
        assert words, segment["text"]
        assert "".join(w["text"] for w in words).strip() == segment["text"]
        for before, after in itertools.pairwise(words):
            assert before["start_ms"] <= before["end_ms"] <= after["start_ms"] + 1
        assert segment["start_ms"] <= words[0]["start_ms"]
        assert words[-1]["end_ms"] <= segment["end_ms"]
        count += len(words)
    return count


@pytest.mark.timeout(LONG_TIMEOUT_S)
def test_word_times_cost_of_batched_decoding(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / f"speech-{MINUTES:g}min.mp3"
    known = speech_audio.build(speech_audio.speech_minutes(MINUTES), source)
    whisper = WhisperRecognizer(RecognizerSettings(language="en", part_seconds=10**6,
                                                   batch_size=BATCH),
                                cache_dir=tmp_path / "whisper", default_time_limit_seconds=10**6)
    spent = timed_alignment(monkeypatch)
    plain_s: list[float] = []
    words_s: list[float] = []
    align_s: list[float] = []
    texts: dict[bool, str] = {}
    try:
        whisper.load()
        _segments(whisper, source, False)  # warm-up: first calls pay allocations
        for number in range(ROUNDS):
            order = (False, True) if number % 2 == 0 else (True, False)
            for words in order:
                spent.clear()
                segments, seconds = _segments(whisper, source, words)
                texts[words] = "\n".join(s["text"] for s in segments)
                if words:
                    words_s.append(seconds)
                    align_s.append(sum(spent))
                    word_count = _check_words(segments)
                else:
                    plain_s.append(seconds)
    finally:
        asyncio.run(whisper.close())
    audio_s = MINUTES * 60
    plain, with_words, align = (statistics.median(v) for v in (plain_s, words_s, align_s))
    share = align / plain
    print(f"\n{MINUTES:g} min, batched ({BATCH}), beam 5, {ROUNDS} rounds, medians:"
          f"\n  without word times: {plain:.1f} s (RTF {plain / audio_s:.3f}), "
          f"WER {wer(known, texts[False]):.4f}"
          f"\n  with word times:    {with_words:.1f} s (RTF {with_words / audio_s:.3f}), "
          f"WER {wer(known, texts[True]):.4f}, {word_count} words"
          f"\n  of which alignment: {align:.2f} s = {share * 100:.1f} % of the decoding "
          f"(all runs: plain {[round(s, 1) for s in plain_s]}, "
          f"words {[round(s, 1) for s in words_s]}, align {[round(s, 2) for s in align_s]})",
          flush=True)
    # Word times must not change the words.
    assert texts[True] == texts[False]
    assert share <= ALIGN_SHARE_GOAL
