"""The word alignment's median filter: what width 7 (faster-whisper's) costs over 1 (ours).

ctranslate2's `Whisper.align` smooths the alignment heads' attention with a
median filter before its time warping; `whisper_alignment.WordAlignedWhisper`
asks for none (width 1). On both speaker bench conversations (known turns) the
service's own recognizer decodes with word times at each width in turn (ABBA…),
`find_alignment` timed inside the runs; then the word times of the two widths
are compared, and each word is placed in the reference turn it overlaps most, as
the separation places words in the turns it finds. Beside it, `align` alone on
one batch (the real conversation's first four clips and their decoded texts),
the widths alternating on the same encoder output and tokens: the inside timing
moves with the decoding around it, this one does not. It fails if a word lands
in another speaker's turn at width 1 than at 7, if the word times move by more
than three of Whisper's 20-ms steps at the 95th percentile, or if `align` alone
is not faster at width 1.

Needs `apt-get install pocketsphinx-testdata espeak-ng festival festvox-ru` (it
skips saying what is missing). Rounds: TRANSCRIBER_BENCH_FILTER_ROUNDS (4).
Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_alignment_filter.py`.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pytest

from tests.helpers.der import Segment
from tests.helpers.speaker_audio import conversations, write_wav
from tests.helpers.whisper_timing import timed_alignment
from transcriber.providers.whisper import WhisperRecognizer, batched_clips
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

ROUNDS = int(os.environ.get("TRANSCRIBER_BENCH_FILTER_ROUNDS", "4"))
ALIGN_CALLS = 8
CLIPS = 4
MEL_FRAMES = 3000  # Whisper's 30-s window
FASTER_WHISPERS_WIDTH = 7
P95_GOAL_MS = 60


def _speaker(word: dict[str, Any], reference: list[Segment]) -> str:
    """The reference speaker the word overlaps most; the nearest one when none."""
    def score(turn: Segment) -> tuple[int, int]:
        overlap = min(word["end_ms"], turn.end_ms) - max(word["start_ms"], turn.start_ms)
        distance = max(turn.start_ms - word["end_ms"], word["start_ms"] - turn.end_ms, 0)
        return overlap, -distance
    return max(reference, key=score).speaker


def _alignment_alone(recognizer: WhisperRecognizer, path: Path, texts: list[str],
                     widths: tuple[int, int]) -> dict[int, list[float]]:
    """Seconds of `align` alone over the file's first clips and texts, at each width in
    turn, on one encoder output and one set of tokens."""
    from faster_whisper.tokenizer import Tokenizer  # noqa: PLC0415 - heavy import

    model = recognizer.load()
    audio, clips = batched_clips(path)
    mels = [model.feature_extractor(audio[int(c["start"] * 16_000):int(c["end"] * 16_000)])
            [:, :MEL_FRAMES] for c in clips[:CLIPS]]
    frames = [mel.shape[1] for mel in mels]
    encoded = model.encode(np.stack([np.pad(mel, ((0, 0), (0, MEL_FRAMES - mel.shape[1])))
                                     for mel in mels]))
    tokenizer = Tokenizer(model.hf_tokenizer, model.model.is_multilingual,
                          task="transcribe", language="en")
    tokens = [tokenizer.encode(" " + text) for text in texts[:len(mels)]]
    seconds: dict[int, list[float]] = {w: [] for w in widths}
    for call in range(ALIGN_CALLS):
        for width in widths if call % 2 == 0 else widths[::-1]:
            started = time.perf_counter()
            model.model.align(encoded, tokenizer.sot_sequence, tokens, frames,
                              median_filter_width=width)
            seconds[width].append(time.perf_counter() - started)
    return seconds


@pytest.mark.timeout(3600)
def test_no_median_filter_keeps_every_word_with_its_speaker(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from transcriber.providers import whisper_alignment  # noqa: PLC0415 - heavy import

    widths = (FASTER_WHISPERS_WIDTH, whisper_alignment.ALIGNMENT_MEDIAN_WIDTH)
    corpora = conversations(tmp_path)
    width = {"now": widths[0]}
    spent = timed_alignment(monkeypatch, width=lambda: width["now"])
    recognizer = WhisperRecognizer(RecognizerSettings(language="en"),
                                   cache_dir=tmp_path / "whisper-base",
                                   default_time_limit_seconds=3600)
    failures = []
    alone: dict[int, list[float]] = {}
    try:
        for name, (audio, reference) in corpora.items():
            path = write_wav(audio, tmp_path / "conversation.wav")
            recognizer._recognize(path, threading.Event(), "en", True)  # warm-up
            seconds: dict[int, list[float]] = {w: [] for w in widths}
            words: dict[int, list[dict[str, Any]]] = {}
            for round_ in range(ROUNDS):
                for now in widths if round_ % 2 == 0 else widths[::-1]:
                    width["now"] = now
                    spent.clear()
                    payload = recognizer._recognize(path, threading.Event(), "en", True)
                    seconds[now].append(sum(spent))
                    words[now] = [w for s in orjson.loads(payload)["segments"]
                                  for w in s.get("words", [])]
            wide, narrow = (words[w] for w in widths)
            assert [w["text"] for w in wide] == [w["text"] for w in narrow]
            moved = [abs(a[key] - b[key]) for a, b in zip(wide, narrow, strict=True)
                     for key in ("start_ms", "end_ms")]
            changed = sum(_speaker(a, reference) != _speaker(b, reference)
                          for a, b in zip(wide, narrow, strict=True))
            times = {w: statistics.median(seconds[w]) for w in widths}
            outside = {w: sum(not any(t.start_ms <= (x["start_ms"] + x["end_ms"]) / 2 <= t.end_ms
                                      for t in reference) for x in words[w]) for w in widths}
            p95 = float(np.percentile(moved, 95))
            print(f"\n{name}, {audio.shape[0] / 16000:.0f} s, {len(wide)} words, medians of "
                  f"{ROUNDS} runs: find_alignment {times[widths[0]]:.2f} s at width "
                  f"{widths[0]}, {times[widths[1]]:.2f} s at width {widths[1]} "
                  f"({times[widths[1]] / times[widths[0]] - 1:+.0%}); word times moved "
                  f"{np.mean(moved):.1f} ms on average, {p95:.0f} ms at the 95th percentile, "
                  f"{max(moved)} ms at most; words in another speaker's turn: {changed}; word "
                  f"midpoints outside the reference speech {outside}; "
                  f"runs {seconds}", flush=True)
            if changed or p95 > P95_GOAL_MS:
                failures.append(name)
            if not alone:
                alone = _alignment_alone(recognizer, path,
                                         [s["text"] for s in orjson.loads(payload)["segments"]],
                                         widths)
    finally:
        asyncio.run(recognizer.close())
    medians = {w: statistics.median(alone[w]) for w in widths}
    print(f"\nalign alone, {CLIPS} clips of the real conversation, {ALIGN_CALLS} calls of "
          f"each width in turn, medians: {medians[widths[0]]:.3f} s at width {widths[0]}, "
          f"{medians[widths[1]]:.3f} s at width {widths[1]} "
          f"({medians[widths[1]] / medians[widths[0]] - 1:+.0%}); calls {alone}", flush=True)
    assert not failures
    assert medians[widths[1]] < medians[widths[0]]
