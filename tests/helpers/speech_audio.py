"""Long test recordings built from the speech fixtures, with a known text.

A recording is a list of pieces: a fixture (its known words), silence, or
music-like noise (chords with a slow tremolo and a little hiss: what makes
Whisper loop on long audio). Pieces are decoded to 16 kHz mono PCM with the
ffmpeg the service uses, joined, and encoded once (MP3, as an upload would be).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from tests.helpers.audio import FIXTURES
from transcriber.providers.ffmpeg import ffmpeg_executable
from transcriber.settings import FfmpegSettings

RATE = 16_000

TEXTS = {
    "librivox_0880.mp3": "he was not an ill disposed young man",
    "espeak_en.ogg": ("The quick brown fox jumps over the lazy dog. "
                      "Our archive keeps every recording safe."),
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    fixture: str | None = None
    silence_s: float = 0.0
    noise_s: float = 0.0


def _pcm(path: Path) -> np.ndarray:
    raw = subprocess.run(
        [ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error", "-i", str(path),
         "-ac", "1", "-ar", str(RATE), "-f", "s16le", "-"], check=True, capture_output=True,
    ).stdout
    return np.frombuffer(raw, dtype=np.int16)


def _music(seconds: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * RATE)) / RATE
    chord = np.zeros(t.size)
    for frequency in rng.choice([220, 277, 330, 392, 440], 3):
        chord += np.sin(2 * np.pi * frequency * t)
    tremolo = 0.6 + 0.4 * np.sin(2 * np.pi * 0.7 * t)
    signal = 0.15 * chord * tremolo / 3 + 0.02 * rng.standard_normal(t.size)
    music: np.ndarray = (np.clip(signal, -1, 1) * 32767).astype(np.int16)
    return music


def fixture_spans(pieces: list[Piece]) -> list[tuple[str, int, int]]:
    """Where each fixture lies in the recording `build` makes of `pieces`: (fixture,
    start ms, end ms). A fixture is one voice, so these are the known turns (each
    with the fixture's own leading and trailing quiet)."""
    lengths: dict[str, int] = {}
    spans: list[tuple[str, int, int]] = []
    at = 0
    for piece in pieces:
        if piece.fixture is not None:
            if piece.fixture not in lengths:
                lengths[piece.fixture] = _pcm(FIXTURES / piece.fixture).size
            spans.append((piece.fixture, at * 1000 // RATE,
                          (at + lengths[piece.fixture]) * 1000 // RATE))
            at += lengths[piece.fixture]
        # As `build` joins them: the silence, then the noise (`_music`'s length).
        at += int(piece.silence_s * RATE) + int(piece.noise_s * RATE)
    return spans


def build(pieces: list[Piece], target: Path) -> str:
    """Write the recording to `target` (by its extension); return its known text."""
    cache: dict[str, np.ndarray] = {}
    chunks: list[np.ndarray] = []
    words: list[str] = []
    for number, piece in enumerate(pieces):
        if piece.fixture is not None:
            if piece.fixture not in cache:
                cache[piece.fixture] = _pcm(FIXTURES / piece.fixture)
            chunks.append(cache[piece.fixture])
            words.append(TEXTS[piece.fixture])
        if piece.silence_s:
            chunks.append(np.zeros(int(piece.silence_s * RATE), dtype=np.int16))
        if piece.noise_s:
            chunks.append(_music(piece.noise_s, seed=number))
    pcm = np.concatenate(chunks).tobytes()
    subprocess.run(
        [ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error", "-y",
         "-f", "s16le", "-ar", str(RATE), "-ac", "1", "-i", "-", "-b:a", "48k", str(target)],
        input=pcm, check=True)
    return " ".join(words)


def speech_minutes(minutes: float) -> list[Piece]:
    """About `minutes` of the English fixtures with short pauses between them."""
    cycle = [Piece(fixture="espeak_en.ogg", silence_s=0.8),
             Piece(fixture="librivox_0880.mp3", silence_s=1.2)]
    cycle_seconds = 6.4 + 0.8 + 3.0 + 1.2
    return cycle * max(round(minutes * 60 / cycle_seconds), 1)
