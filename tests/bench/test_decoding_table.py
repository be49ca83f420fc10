"""The VAD threshold, the batch size and the language-detection window chosen by
measurement (issue 45, item 5), as the beam size is (`test_decoding_choice.py`): the
hard-audio corpus decoded by the service's own recognizer (batched, the default), each
file at every setting in turn, error rate (WER in English, CER in Russian) and speed
side by side, per condition and language.

- VAD threshold (`speakers.vad.SPEECH_THRESHOLD`): Silero's speech probability that
  starts a region, 0.35, 0.5 and 0.65, on the conditions where speech and sound are
  hard to tell apart (noise, a music bed, quiet speech).
- Batch size (`recognizer.batch_size`): 1, 2, 4 and 8 clips decoded at once, on records
  long enough for several batches.
- Language window (`whisper_decoding.LANGUAGE_WINDOWS`): the record's language not
  given, Whisper hears 1, 2 or 3 windows of 30 s of its speech; the detected language,
  its probability, the error and the speed.
- Temperature fallback (`whisper_fallback.FALLBACK`, `whisper_decoding.TEMPERATURES`):
  what a window that fails Whisper's checks is decoded with on the sequential path (the
  coverage repair and the guard's re-decoding; the batched pipeline decodes at the
  first temperature only): the service's deterministic beam steps, no fallback (the
  temperature-0 decoding kept whatever it is), the service's steps less the repetition
  penalty (`no_penalty`), and faster-whisper's own sampled ladder
  0.0, 0.2, ..., 1.0; on hard audio and the invented-text voices (loops are what the
  fallback is for).

Conditions: TRANSCRIBER_BENCH_TABLE_VAD, _BATCH, _WINDOW, _FALLBACK (comma-separated condition
names of `tests/helpers/hard_audio.py`); speech length: TRANSCRIBER_BENCH_TABLE_SECONDS
(overrides each table's own). One test per table:
`PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_decoding_table.py`
(the tables in docs/recognition.md, "VAD threshold", "Batch size", "Language-detection
window" and "Temperature fallback").
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, TypeVar

import orjson
import pytest

from tests.helpers import hard_audio, invented_audio
from tests.helpers.textmetrics import cer, wer
from tests.helpers.whisper import MakeWhisper
from transcriber.providers import whisper_decoding, whisper_fallback
from transcriber.providers.speakers import vad
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.providers.whisper_fallback import DecodingStep
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

S = TypeVar("S")


def _names(variable: str, default: str) -> list[str]:
    return [n for n in os.environ.get(variable, default).split(",") if n]


def _seconds(default: float) -> float:
    return float(os.environ.get("TRANSCRIBER_BENCH_TABLE_SECONDS", default))


VAD_THRESHOLDS = (0.35, 0.5, 0.65)
BATCH_SIZES = (1, 2, 4, 8)
LANGUAGE_WINDOWS = (1, 2, 3)
FALLBACKS = ("service", "none", "no_penalty", "sampled")
# faster-whisper's default temperatures (`WhisperModel.transcribe`).
SAMPLED_TEMPERATURES = (0.0, 0.2, 0.4, 0.6, 0.8, 1.0)


class Recording(Protocol):
    @property
    def path(self) -> Path: ...
    @property
    def text(self) -> str: ...
    @property
    def language(self) -> str: ...
    @property
    def duration_s(self) -> float: ...


def _build(name: str, seconds: float, target: Path) -> Recording:
    """A hard-audio condition, or one of the invented-text corpus (its espeak-ng voices:
    the Russian one passes for Bulgarian, the hard case for language detection)."""
    if name in hard_audio.CONDITIONS:
        condition = hard_audio.CONDITIONS[name]
        hard_audio.require(condition.language)
        return hard_audio.build(condition, seconds, target)
    invented_audio.require(name)
    return invented_audio.CONDITIONS[name][1](seconds, target)


@dataclass(frozen=True, slots=True, kw_only=True)
class Cell:
    error: float
    rtf: float
    language: str | None
    probability: float | None
    redecoded: int = 0  # clips the guard decoded again (the sequential path)


def _decode(recognizer: WhisperRecognizer, recording: Recording,
            language: str | None) -> Cell:
    started = time.perf_counter()
    payload = orjson.loads(recognizer._recognize(recording.path, threading.Event(), language))
    spent = time.perf_counter() - started
    text = " ".join(s["text"] for s in payload["segments"])
    error = cer if recording.language == "ru" else wer
    probability = payload.get("language_probability")
    return Cell(error=error(recording.text, text), rtf=spent / recording.duration_s,
                language=payload.get("language"),
                probability=None if probability is None else float(probability),
                redecoded=sum(payload.get("redecoded", {}).values()))


def _table(title: str, conditions: Sequence[str], seconds: float, settings: Sequence[S],
              run: Callable[[S, Recording], Cell], folder: Path, *,
              languages: bool = False) -> dict[S, list[Cell]]:
    """Every condition's file decoded at each setting in turn (the shared machine's
    drift falls on all of them); the table printed as docs/recognition.md shows it."""
    cells: dict[S, list[Cell]] = {setting: [] for setting in settings}
    rows: list[str] = []
    # Each setting decodes a short file first: a recognizer's first part pays for its
    # model load and the VAD's session, which no column should carry.
    warm = _build(conditions[0], 5.0, folder / "warm.flac")
    for setting in settings:
        run(setting, warm)
    for name in conditions:
        recording = _build(name, seconds, folder / f"{name}.flac")
        row = [name, recording.language]
        for setting in settings:
            cell = run(setting, recording)
            cells[setting].append(cell)
            row += [f"{cell.error:.3f}", f"{cell.rtf:.3f}"]
            if languages:
                row.append(f"{cell.language} {cell.probability or 0:.2f}")
        rows.append("| " + " | ".join(row) + " |")
        print(rows[-1], flush=True)
    per = ("error", "RTF", "heard") if languages else ("error", "RTF")
    head = " | ".join(f"{title} {s} {what}" for s in settings for what in per)
    print(f"\n| condition | language | {head} |")
    print("| --- | --- |" + " --- |" * len(per) * len(settings))
    print("\n".join(rows))
    means = " | ".join(f"{sum(c.error for c in cells[s]) / len(cells[s]):.3f} | "
                       f"{sum(c.rtf for c in cells[s]) / len(cells[s]):.3f}"
                       + (" |" if languages else "") for s in settings)
    print(f"| mean | | {means} |", flush=True)
    return cells


def _mean_error(cells: list[Cell]) -> float:
    return sum(c.error for c in cells) / len(cells)


@pytest.mark.timeout(3600)
def test_vad_thresholds(make_whisper: MakeWhisper, tmp_path: Path,
                        monkeypatch: pytest.MonkeyPatch) -> None:
    recognizer = make_whisper(RecognizerSettings())

    def run(threshold: float, recording: Recording) -> Cell:
        monkeypatch.setattr(vad, "SPEECH_THRESHOLD", threshold)
        return _decode(recognizer, recording, recording.language)

    default = vad.SPEECH_THRESHOLD
    try:
        cells = _table("VAD", _names("TRANSCRIBER_BENCH_TABLE_VAD",
                                     "continuous,pink_5db,music_bed,quiet,russian_pink_5db"),
                       _seconds(60.0), VAD_THRESHOLDS, run, tmp_path)
    finally:
        asyncio.run(recognizer.close())
    means = {t: _mean_error(c) for t, c in cells.items()}
    assert means[default] <= min(means.values()) + hard_audio.WER_MARGIN


@pytest.mark.timeout(3600)
def test_batch_sizes(make_whisper: MakeWhisper, tmp_path: Path) -> None:
    recognizers = {size: make_whisper(RecognizerSettings(batch_size=size))
                   for size in BATCH_SIZES}

    def run(size: int, recording: Recording) -> Cell:
        return _decode(recognizers[size], recording, recording.language)

    try:
        cells = _table("batch", _names("TRANSCRIBER_BENCH_TABLE_BATCH", "continuous,russian"),
                       _seconds(120.0), BATCH_SIZES, run, tmp_path)
    finally:
        for recognizer in recognizers.values():
            asyncio.run(recognizer.close())
    means = {size: _mean_error(c) for size, c in cells.items()}
    default = RecognizerSettings().batch_size
    assert means[default] <= min(means.values()) + hard_audio.WER_MARGIN


@pytest.mark.timeout(3600)
def test_language_windows(make_whisper: MakeWhisper, tmp_path: Path,
                          monkeypatch: pytest.MonkeyPatch) -> None:
    recognizer = make_whisper(RecognizerSettings())

    def run(windows: int, recording: Recording) -> Cell:
        monkeypatch.setattr(whisper_decoding, "LANGUAGE_WINDOWS", windows)
        return _decode(recognizer, recording, None)  # the language detected

    default = whisper_decoding.LANGUAGE_WINDOWS
    conditions = _names("TRANSCRIBER_BENCH_TABLE_WINDOW",
                        "telephone,music_bed,russian_pink_5db,russian_brown_5db,"
                        "espeak_russian,espeak_english")
    try:
        cells = _table("window", conditions, _seconds(70.0), LANGUAGE_WINDOWS, run, tmp_path,
                       languages=True)
    finally:
        asyncio.run(recognizer.close())
    wanted = [hard_audio.CONDITIONS[name].language if name in hard_audio.CONDITIONS
              else invented_audio.CONDITIONS[name][0] for name in conditions]
    right = {w: sum(c.language == lang for c, lang in zip(cells[w], wanted, strict=True))
             for w in LANGUAGE_WINDOWS}
    print("languages heard right by window:", right)
    assert right[default] == max(right.values())
    means = {w: _mean_error(c) for w, c in cells.items()}
    assert means[default] <= min(means.values()) + hard_audio.WER_MARGIN


@pytest.mark.timeout(3600)
def test_temperature_fallback(make_whisper: MakeWhisper, tmp_path: Path,
                              monkeypatch: pytest.MonkeyPatch) -> None:
    from faster_whisper import WhisperModel  # noqa: PLC0415  # heavy import

    from transcriber.providers.whisper_alignment import WordAlignedWhisper  # noqa: PLC0415

    recognizer = make_whisper(RecognizerSettings())
    deterministic = WordAlignedWhisper.__dict__["generate_with_fallback"]
    service = (whisper_fallback.FALLBACK, whisper_decoding.TEMPERATURES, deterministic)
    settings = {
        "service": service,
        # The temperature-0 decoding only: what fails the checks is kept as it is.
        "none": ((DecodingStep(),), whisper_decoding.TEMPERATURES, deterministic),
        # The service's steps less the last, penalized one.
        "no_penalty": (whisper_fallback.FALLBACK[:3], whisper_decoding.TEMPERATURES,
                       deterministic),
        # faster-whisper's own fallback, sampled (`best_of` 5 at each temperature).
        "sampled": (whisper_fallback.FALLBACK, SAMPLED_TEMPERATURES,
                    WhisperModel.generate_with_fallback),
    }

    def run(name: str, recording: Recording) -> Cell:
        steps, temperatures, generate = settings[name]
        monkeypatch.setattr(whisper_fallback, "FALLBACK", steps)
        monkeypatch.setattr(whisper_decoding, "TEMPERATURES", temperatures)
        monkeypatch.setattr(WordAlignedWhisper, "generate_with_fallback", generate)
        cell = _decode(recognizer, recording, recording.language)
        print(f"{name}: {cell.redecoded} clips decoded again", flush=True)
        return cell

    conditions = _names("TRANSCRIBER_BENCH_TABLE_FALLBACK",
                        "pink_5db,russian_pink_5db,music_bed,espeak_russian,espeak_english,"
                        "repeated_sentence,applause_laughter")
    try:
        cells = _table("fallback", conditions, _seconds(60.0), FALLBACKS, run, tmp_path)
    finally:
        asyncio.run(recognizer.close())
    means = {name: _mean_error(c) for name, c in cells.items()}
    assert means["service"] <= min(means.values()) + hard_audio.WER_MARGIN
