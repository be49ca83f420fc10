"""The benchmark conversations: known turns built from real or synthetic speech.

(a) Two real speakers from Debian's `pocketsphinx-testdata`
    (`apt-get install pocketsphinx-testdata`): the five LibriVox clips (one
    reader) against the five `cards` clips (another speaker), alternating,
    about 2.5 minutes; the few clips repeat in a seeded order.
(b) Three synthetic voices taking turns (`apt-get install espeak-ng festival
    festvox-ru`): espeak-ng's en-us male voice, espeak-ng's en-us+f4 female
    variant, and Festival's Russian `msu_ru_nsh_clunits`.
"""

from __future__ import annotations

import random
import shutil
import subprocess
import wave
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import numpy.typing as npt
import pytest

from tests.helpers.der import Segment

SAMPLE_RATE = 16_000
POCKETSPHINX = Path("/usr/share/pocketsphinx/test/data")
Floats = npt.NDArray[np.float32]

ENGLISH = [
    "Good morning, thank you for calling the archive.",
    "I would like to ask about a recording from last week.",
    "Of course. Could you tell me the date of the meeting?",
    "It was on Tuesday, the fourteenth, in the afternoon.",
    "I can see two files from that day in the list.",
    "The second one is the interview with the new team.",
    "Please send me the transcript when it is ready.",
    "We will email it to you before the end of the day.",
]
RUSSIAN = [
    "Добрый день. Я хотел бы уточнить время встречи.",
    "Встреча назначена на среду, в десять часов утра.",
    "Спасибо, я передам это всем участникам проекта.",
    "Пожалуйста, пришлите мне запись после разговора.",
]


def decode(path: Path) -> Floats:
    out = subprocess.run(
        [
            imageio_ffmpeg.get_ffmpeg_exe(),
            "-v",
            "error",
            "-i",
            str(path),
            "-ac",
            "1",
            "-ar",
            str(SAMPLE_RATE),
            "-f",
            "f32le",
            "-",
        ],
        check=True,
        capture_output=True,
        timeout=120,
    ).stdout
    return np.frombuffer(out, dtype=np.float32).copy()


def write_wav(audio: npt.NDArray[np.floating], path: Path) -> Path:
    """The samples as a 16-bit 16 kHz WAV file at `path`: mono from one dimension,
    one channel a column from two (samples, channels)."""
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1 if audio.ndim == 1 else audio.shape[1])
        out.setsampwidth(2)
        out.setframerate(SAMPLE_RATE)
        out.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())
    return path


def _assemble(turns: list[tuple[str, Floats]], seed: int) -> tuple[Floats, list[Segment]]:
    rng = random.Random(seed)
    noise = np.random.default_rng(seed)
    pieces: list[Floats] = []
    reference: list[Segment] = []
    at = 0
    for speaker, clip in turns:
        gap = int(SAMPLE_RATE * rng.uniform(0.25, 0.8))
        pieces.append(np.zeros(gap, dtype=np.float32))
        at += gap
        start = at * 1000 // SAMPLE_RATE
        pieces.append(clip)
        at += clip.shape[0]
        reference.append(Segment(start_ms=start, end_ms=at * 1000 // SAMPLE_RATE, speaker=speaker))
    audio = np.concatenate(pieces)
    # A faint noise floor, as any real recording has between words.
    audio += 1e-4 * noise.standard_normal(audio.shape[0], dtype=np.float32)
    return audio, reference


def real_two_speakers(
    target_seconds: float = 150.0, seed: int = 13
) -> tuple[Floats, list[Segment]] | None:
    reader = sorted((POCKETSPHINX / "librivox").glob("*.wav"))
    cards = sorted((POCKETSPHINX / "cards").glob("*.wav"))
    if not reader or not cards:
        return None
    a = [decode(p) for p in reader]
    b = [decode(p) for p in cards]
    rng = random.Random(seed)
    turns: list[tuple[str, Floats]] = []
    total = 0.0
    while total < target_seconds:
        first = rng.choice(a)
        # The second speaker answers with one or two of the short `cards` clips.
        second = np.concatenate([rng.choice(b) for _ in range(rng.choice((1, 2)))])
        turns += [("A", first), ("B", second)]
        total += (first.shape[0] + second.shape[0]) / SAMPLE_RATE + 1.0
    return _assemble(turns, seed)


def _espeak(text: str, voice: str, out: Path) -> Path:
    subprocess.run(
        ["espeak-ng", "-v", voice, "-s", "150", "-w", str(out), text],
        check=True,
        capture_output=True,
        timeout=60,
    )
    return out


def _festival(text: str, out: Path) -> Path:
    source = out.with_suffix(".txt")
    source.write_text(text, encoding="utf-8")
    subprocess.run(
        ["text2wave", "-eval", "(voice_msu_ru_nsh_clunits)", str(source), "-o", str(out)],
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out


def synthetic_three_voices(folder: Path, seed: int = 13) -> tuple[Floats, list[Segment]] | None:
    if not (shutil.which("espeak-ng") and shutil.which("text2wave")):
        return None
    turns: list[tuple[str, Floats]] = []
    for i in range(8):
        turns.append(("M", decode(_espeak(ENGLISH[i], "en-us", folder / f"m{i}.wav"))))
        turns.append(("F", decode(_espeak(ENGLISH[(i + 3) % 8], "en-us+f4", folder / f"f{i}.wav"))))
        if i % 2 == 0:
            turns.append(("R", decode(_festival(RUSSIAN[i // 2], folder / f"r{i}.wav"))))
    return _assemble(turns, seed)


def conversations(folder: Path) -> dict[str, tuple[Floats, list[Segment]]]:
    """Both benchmark conversations by name, (a) then (b); the calling test is skipped,
    saying what to install, when either cannot be made."""
    real = real_two_speakers()
    if real is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    synthetic = synthetic_three_voices(folder)
    if synthetic is None:
        pytest.skip("apt-get install espeak-ng festival festvox-ru")
    return {"real, 2 speakers": real, "synthetic, 3 voices": synthetic}
