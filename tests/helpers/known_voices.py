"""Real voices for the known-voice tests and the calibration bench.

What exists here (Debian's `pocketsphinx-testdata`, /usr/share/pocketsphinx/test/data):

- `LV`: the LibriVox reader of *Sense and Sensibility*, five clips (3-7 s, 24.7 s);
- `CD`: the `cards` speaker, five clips (1.1-3.5 s, 9.7 s);
- `DH`: the four raw clips `goforward`, `numbers`, `something` and
  `tidigits/dhd.2934z` (2.4-4 s, 12.2 s; 16-bit 16 kHz). Taken as one voice:
  `dhd` is the package author's initials, and the four are each other's
  nearest (cosine 0.51-0.77 against at most 0.54 to any other clip).

That is three real voices and fourteen clips, all English. Synthetic voices,
marked as such wherever they are used: Festival's Russian `msu_ru_nsh_clunits`
(`FR`) and espeak-ng's `en-us`, `en-us+f4` and `ru` (`E1`, `E2`, `E3`), only
ever as voices nobody named.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import ClassVar

import numpy as np
import pytest

from tests.helpers.der import Segment
from tests.helpers.speaker_audio import POCKETSPHINX, SAMPLE_RATE, Floats, decode, write_wav
from transcriber.db.writer import Command, WriteContext
from transcriber.pipeline.voices import ForgetVoices, SaveVoices
from transcriber.ports import Segment as WordSegment
from transcriber.ports import Separation, Utterance, Word
from transcriber.providers.speakers.separator import LocalSpeakerSeparator

REAL_VOICES = ("LV", "CD", "DH")
RAW = ("goforward.raw", "numbers.raw", "something.raw", "tidigits/dhd.2934z.raw")
SYNTHETIC_TEXTS = (
    "Good morning, thank you for calling the archive.",
    "I would like to ask about a recording from last week.",
    "Please send me the transcript when it is ready.",
)
RUSSIAN_TEXTS = (
    "Добрый день. Я хотел бы уточнить время встречи.",
    "Спасибо, я передам это всем участникам проекта.",
)


def _raw(path: Path) -> Floats:
    return np.frombuffer(path.read_bytes(), dtype="<i2").astype(np.float32) / 32768.0


@cache
def real_clips() -> Mapping[str, tuple[Floats, ...]]:
    """Each real voice's clips (16 kHz mono float32), in file order; the calling test is
    skipped without the package."""
    librivox = sorted((POCKETSPHINX / "librivox").glob("*.wav"))
    cards = sorted((POCKETSPHINX / "cards").glob("*.wav"))
    raw = [POCKETSPHINX / name for name in RAW]
    if not librivox or not cards or not all(p.is_file() for p in raw):
        pytest.skip("apt-get install pocketsphinx-testdata")
    return {"LV": tuple(decode(p) for p in librivox), "CD": tuple(decode(p) for p in cards),
            "DH": tuple(_raw(p) for p in raw)}


def synthetic_clips(folder: Path) -> dict[str, tuple[Floats, ...]]:
    """Synthetic voices (never passed off as real): Festival's Russian and espeak-ng's,
    those whose tool is installed."""
    found: dict[str, tuple[Floats, ...]] = {}
    if shutil.which("text2wave"):
        clips = []
        for n, text in enumerate(RUSSIAN_TEXTS):
            source = folder / f"fr{n}.txt"
            source.write_text(text, encoding="utf-8")
            out = folder / f"fr{n}.wav"
            subprocess.run(["text2wave", "-eval", "(voice_msu_ru_nsh_clunits)", str(source),
                            "-o", str(out)], check=True, capture_output=True, timeout=120)
            clips.append(decode(out))
        found["FR"] = tuple(clips)
    if shutil.which("espeak-ng"):
        for name, voice, texts in (("E1", "en-us", SYNTHETIC_TEXTS),
                                   ("E2", "en-us+f4", SYNTHETIC_TEXTS),
                                   ("E3", "ru", RUSSIAN_TEXTS)):
            clips = []
            for n, text in enumerate(texts):
                out = folder / f"{name}{n}.wav"
                subprocess.run(["espeak-ng", "-v", voice, "-s", "150", "-w", str(out), text],
                               check=True, capture_output=True, timeout=60)
                clips.append(decode(out))
            found[name] = tuple(clips)
    return found


def conversation(turns: Sequence[tuple[str, Floats]], *,
                 gap_s: float = 0.5) -> tuple[Floats, list[Segment]]:
    """The clips one after another with `gap_s` of faint noise between, and the turns."""
    noise = np.random.default_rng(7)
    pieces: list[Floats] = []
    reference: list[Segment] = []
    at = 0
    for voice, clip in turns:
        gap = int(gap_s * SAMPLE_RATE)
        pieces.append(np.zeros(gap, dtype=np.float32))
        at += gap
        pieces.append(clip)
        reference.append(Segment(start_ms=at * 1000 // SAMPLE_RATE,
                                 end_ms=(at + clip.shape[0]) * 1000 // SAMPLE_RATE,
                                 speaker=voice))
        at += clip.shape[0]
    audio = np.concatenate(pieces)
    audio += 1e-4 * noise.standard_normal(audio.shape[0], dtype=np.float32)
    return audio, reference


def word_segments(reference: Sequence[Segment]) -> list[WordSegment]:
    """What a recognizer would answer: one segment a turn, a word every 400 ms of it."""
    segments = []
    for n, turn in enumerate(reference):
        starts = range(turn.start_ms, turn.end_ms - 200, 400)
        words = tuple(Word(start_ms=s, end_ms=min(s + 350, turn.end_ms), text=f" w{n}")
                      for s in starts)
        segments.append(WordSegment(start_ms=turn.start_ms, end_ms=turn.end_ms,
                                    text=f"turn {n}", words=words))
    return segments


def voice_of(utterances: Sequence[Utterance], reference: Sequence[Segment]) -> dict[str, str]:
    """Each speaker label's voice: the reference voice its utterances overlap most."""
    overlap: dict[str, dict[str, int]] = {}
    for u in utterances:
        for turn in reference:
            shared = min(u.end_ms, turn.end_ms) - max(u.start_ms, turn.start_ms)
            if shared > 0 and u.speaker is not None:
                counts = overlap.setdefault(u.speaker, {})
                counts[turn.speaker] = counts.get(turn.speaker, 0) + shared
    return {label: max(counts, key=lambda v: counts[v]) for label, counts in overlap.items()}


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyVoices(Command[None]):
    """The poll step's voices effect on a record already done (a browser test gives a
    record of the fake recognizer the transcript and voices of a real recording)."""

    name: ClassVar[str] = "test_apply_voices"
    record_id: str
    effect: SaveVoices | ForgetVoices

    async def execute(self, ctx: WriteContext) -> None:
        await self.effect.apply(ctx, record_id=self.record_id, step="poll")


@dataclass(frozen=True, slots=True, kw_only=True)
class Recording:
    """A real-voice recording separated by the real engine, with each label's voice."""

    separation: Separation
    voices: dict[str, str]  # label -> real voice

    def label(self, voice: str) -> str:
        return next(label for label, found in self.voices.items() if found == voice)


def separated_recordings(folder: Path) -> dict[str, Recording]:
    """Three recordings separated by the real engine (VAD, ONNX embedder, clustering;
    the uploader's count of 2): `enrol` (LV and CD, to be named), `known` (other clips
    of LV and CD) and `stranger` (DH, never named, with LV)."""
    clips = real_clips()
    lv, cd, dh = clips["LV"], clips["CD"], clips["DH"]
    plans = {
        "enrol": [("LV", lv[2]), ("CD", cd[4]), ("LV", lv[4]),
                  ("CD", np.concatenate([cd[1], cd[2]]))],
        "known": [("LV", lv[0]), ("CD", cd[0]), ("LV", lv[3]), ("CD", cd[3]), ("LV", lv[1])],
        "stranger": [("DH", dh[0]), ("LV", lv[0]), ("DH", dh[1]), ("LV", lv[3])],
    }
    separator = LocalSpeakerSeparator()
    made = {}
    for name, turns in plans.items():
        audio, reference = conversation(turns)
        path = write_wav(audio, folder / f"{name}.wav")
        separation = separator._separate(path, word_segments(reference), 2, None)
        voices = voice_of(separation.utterances, reference)
        assert sorted(voices.values()) == sorted({v for v, _ in turns}), name
        made[name] = Recording(separation=separation, voices=voices)
    return made
