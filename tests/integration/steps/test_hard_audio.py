"""The hard-conditions corpus, short versions, on the default settings: the batched
decoding against the sequential one on the same file (the full corpus is the benchmark
`tests/bench/test_hard_audio.py`).

Each recording holds about 32 s of continuous speech (a long gap condition: 20 s of
silence or noise in the middle), more than one window, so every condition crosses a
cut. For each: WER (CER for Russian) at most the sequential decoding's plus 0.03, the
last utterance ending within 3 s of the last speech, no utterance repeated more than
twice in a row.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.helpers import hard_audio
from tests.helpers.hard_audio import (
    CONDITIONS,
    END_WITHIN_SECONDS,
    REPEATS_ALLOWED,
    WER_MARGIN,
    HardRecording,
    longest_run,
)
from tests.helpers.textmetrics import cer, wer
from tests.helpers.verdicts import report_of_answer
from tests.helpers.whisper import MakeWhisper, batched_and_sequential
from transcriber.providers.whisper import WhisperRecognizer

pytestmark = pytest.mark.slow

SPEECH_SECONDS = 32.0
GAP_SECONDS = 20.0
# Clean speech: the quality report a person reads says "good" (issue 38).
CLEAN = ("continuous", "russian")


@pytest.fixture(scope="module")
def recognizers(make_whisper: MakeWhisper) -> Iterator[dict[bool, WhisperRecognizer]]:
    """The default (batched) recognizer and the sequential one, by `batched`."""
    yield from batched_and_sequential(make_whisper)


def _transcript(recognizer: WhisperRecognizer, recording: HardRecording, *,
                clean: bool) -> list[dict[str, Any]]:
    payload = recognizer._recognize(recording.path, threading.Event(), recording.language)
    answer = orjson.loads(payload)
    report = report_of_answer(payload)
    # The verdict follows what the decoding did: text dropped as unclear is never "good"
    # past the report's threshold, and clean speech is "good".
    if report.unclear_ms > 0.02 * max(report.speech_ms, 1):
        assert report.verdict != "good", report
    if clean:
        assert report.verdict == "good", report
    assert answer["unclear"] == [] or report.unclear_ms > 0
    segments: list[dict[str, Any]] = answer["segments"]
    return segments


@pytest.mark.parametrize("name", list(CONDITIONS))
def test_the_default_decoding_hears_every_word_of_a_hard_recording(
        name: str, recognizers: dict[bool, WhisperRecognizer], tmp_path: Path) -> None:
    condition = CONDITIONS[name]
    hard_audio.require(condition.language)
    recording = hard_audio.build(condition, SPEECH_SECONDS, tmp_path / f"{name}.flac",
                                 gap_seconds=GAP_SECONDS)
    error = cer if condition.language == "ru" else wer
    batched = _transcript(recognizers[True], recording, clean=name in CLEAN)
    sequential = _transcript(recognizers[False], recording, clean=name in CLEAN)
    text = " ".join(s["text"] for s in batched)
    reference = " ".join(s["text"] for s in sequential)
    assert error(recording.text, text) <= error(recording.text, reference) + WER_MARGIN, (
        text, reference)
    assert batched[-1]["end_ms"] / 1000 >= recording.speech_end_s - END_WITHIN_SECONDS
    assert longest_run([s["text"] for s in batched]) <= REPEATS_ALLOWED
