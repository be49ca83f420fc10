"""Two-channel test audio: a call with one real speaker per channel, and a mono
recording copied to both channels (which must stay mono)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import imageio_ffmpeg
import numpy as np

from tests.helpers.der import Segment
from tests.helpers.speaker_audio import SAMPLE_RATE, real_two_speakers, write_wav


def write_stereo(path: Path, left: np.ndarray, right: np.ndarray) -> None:
    write_wav(np.stack([left, right], axis=1), path)


def stereo_call(path: Path, *, seconds: float = 30.0) -> list[Segment] | None:
    """The turns of two real speakers (pocketsphinx-testdata) as a call: speaker A on
    the left channel, B on the right, each channel with its own faint noise floor.
    Returns the turns (A, B), or None without the package."""
    made = real_two_speakers(target_seconds=seconds)
    if made is None:
        return None
    audio, turns = made
    mask = {"A": np.zeros(audio.shape[0], dtype=bool), "B": np.zeros(audio.shape[0], dtype=bool)}
    for turn in turns:
        mask[turn.speaker][turn.start_ms * SAMPLE_RATE // 1000:
                           turn.end_ms * SAMPLE_RATE // 1000] = True
    noise = np.random.default_rng(5)
    left = np.where(mask["A"], audio, 0) + 3e-4 * noise.standard_normal(audio.shape[0])
    right = np.where(mask["B"], audio, 0) + 3e-4 * noise.standard_normal(audio.shape[0])
    write_stereo(path, left, right)
    return turns


def copied_to_stereo(source: Path, target: Path) -> None:
    """A mono recording on both channels, through a lossy joint-stereo MP3 as a phone
    app or an editor exports it."""
    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-v", "error", "-y", "-i",
                    str(source), "-ac", "2", "-c:a", "libmp3lame", "-b:a", "48k", str(target)],
                   check=True, timeout=60)
