"""The checks of the hard corpora's short versions (`hard_audio.py`, `invented_audio.py`)
on the default settings: the batched decoding against the sequential one on the same
file. Each corpus runs in several test modules (`tests/integration/steps/
test_hard_audio*.py`, `test_invented_text*.py`) so that xdist's `--dist loadscope`,
which keeps a module on one process, spreads them over the processes; each module
loads its own pair of recognizers (`recognizers` in the steps' conftest).

The full corpora are the benchmarks `tests/bench/test_hard_audio.py` and
`tests/bench/test_invented_text.py`.
"""

from __future__ import annotations

import itertools
import threading
from pathlib import Path
from typing import Any

import orjson
from prometheus_client import REGISTRY

from tests.helpers import hard_audio, invented_audio
from tests.helpers.hard_audio import (
    CONDITIONS,
    END_WITHIN_SECONDS,
    REPEATS_ALLOWED,
    WER_MARGIN,
    HardRecording,
    longest_run,
)
from tests.helpers.invented_audio import Invented, Make, most_repeats, words_in
from tests.helpers.textmetrics import cer, wer
from tests.helpers.verdicts import report_of_answer
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.providers.whisper_answer import parse_local_payload

Recognizers = dict[bool, WhisperRecognizer]

# --- The hard conditions -------------------------------------------------------------

SPEECH_SECONDS = 32.0
GAP_SECONDS = 20.0
# Clean speech: the quality report a person reads says "good" (issue 38).
CLEAN = ("continuous", "russian")
# The conditions by test module, about the same decoding time each.
HARD_GROUPS: dict[str, tuple[str, ...]] = {
    "noise": ("continuous", "pink_10db", "pink_5db", "brown_10db", "brown_5db", "music_bed"),
    "rooms": ("telephone", "quiet", "clipped", "hum_50hz", "silence_gap", "noise_gap"),
    "russian": ("russian", "russian_pink_10db", "russian_pink_5db", "russian_brown_10db",
                "russian_brown_5db"),
}


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


def check_hard_condition(name: str, recognizers: Recognizers, tmp_path: Path) -> None:
    """About 32 s of continuous speech (a gap condition: 20 s of silence or noise in the
    middle), more than one window, so every condition crosses a cut: WER (CER for
    Russian) at most the sequential decoding's plus 0.03, the last utterance ending
    within 3 s of the last speech, no utterance repeated more than twice in a row."""
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


# --- The invented-text recordings ----------------------------------------------------

SHORT: dict[str, tuple[float, Make]] = {  # seconds of speech, and how the short one is made
    "espeak_russian": (35.0, invented_audio.CONDITIONS["espeak_russian"][1]),
    "espeak_english": (35.0, invented_audio.CONDITIONS["espeak_english"][1]),
    "music_between": (24.0, invented_audio.between("music", 20.0)),
    "crowd_between": (24.0, invented_audio.between("crowd", 20.0)),
    "applause_laughter": (30.0, invented_audio.CONDITIONS["applause_laughter"][1]),
    "repeated_sentence": (24.0, invented_audio.CONDITIONS["repeated_sentence"][1]),
}
INVENTED_GROUPS: dict[str, tuple[str, ...]] = {
    "loops": ("espeak_russian", "music_between", "crowd_between"),
    "voices": ("espeak_english", "applause_laughter", "repeated_sentence"),
}


def _answer(recognizer: WhisperRecognizer, recording: Invented) -> dict[str, Any]:
    payload = recognizer._recognize(recording.path, threading.Event(), recording.language)
    assert parse_local_payload(payload) is not None
    answer: dict[str, Any] = orjson.loads(payload)
    # The verdict a person reads follows what the guard did: text it dropped as unclear
    # (past the report's 2 %) or loops it removed are never "good".
    report = report_of_answer(payload)
    if answer["repeats_removed"] or report.unclear_ms > 0.02 * max(report.speech_ms, 1):
        assert report.verdict != "good", report
    answer["verdict"] = report.verdict
    return answer


def _redecoded(reason: str) -> float:
    return REGISTRY.get_sample_value("transcriber_recognition_redecoded_total",
                                     {"reason": reason}) or 0.0


def _contract(answer: dict[str, Any]) -> None:
    """The saved answer's fields the quality report is built on (docs/recognition.md)."""
    for segment in answer["segments"]:
        for word in segment["words"]:
            assert set(word) == {"start_ms", "end_ms", "text", "probability"}
            assert round(word["probability"], 3) == word["probability"]
    for field in ("unclear", "speech"):
        spans = answer[field]
        assert all(a < b for a, b in spans)
        assert all(x[1] <= y[0] for x, y in itertools.pairwise(spans))
    assert isinstance(answer["repeats_removed"], int)
    assert set(answer["redecoded"]) <= {"compression", "repeats", "logprob", "non_speech",
                                        "outside_clip"}


def check_invented(name: str, recognizers: Recognizers, tmp_path: Path) -> None:
    """No phrase follows itself more often than the audio says it, no word inside a
    stretch without speech, the error against the known text (CER for Russian) at most
    the sequential decoding's plus 0.03, and the saved answer's guard fields in their
    contract."""
    invented_audio.require(name)
    seconds, make = SHORT[name]
    recording = make(seconds, tmp_path / f"{name}.flac")
    error = cer if recording.language == "ru" else wer
    before = {reason: _redecoded(reason) for reason in ("compression", "repeats")}
    batched = _answer(recognizers[True], recording)
    sequential = _answer(recognizers[False], recording)
    _contract(batched)
    _contract(sequential)
    for answer in (batched, sequential):
        text = " ".join(s["text"] for s in answer["segments"])
        assert most_repeats(text) <= recording.repeats, text
        assert words_in(answer, recording.no_speech) == [], text
    text = " ".join(s["text"] for s in batched["segments"])
    reference = " ".join(s["text"] for s in sequential["segments"])
    assert error(recording.text, text) <= error(recording.text, reference) + WER_MARGIN, (
        text, reference)
    if name == "espeak_russian":
        # Issue 38: Whisper base loops on this voice ("и прохожу" 40 times in a batched
        # clip); the guard found it, decoded the clip again and counted it.
        assert set(batched["redecoded"]) & {"compression", "repeats"}
        assert sum(_redecoded(r) - before[r] for r in before) >= 1
    if name == "repeated_sentence":
        # Said six times with pauses between: every copy stays, on both paths, and the
        # clean read speech is reported good (real repetition is no loop).
        assert batched["verdict"] == "good", batched
        for answer in (batched, sequential):
            said = " ".join(s["text"] for s in answer["segments"]).casefold()
            assert said.count("young man") >= invented_audio.REPEATED_TIMES, said
