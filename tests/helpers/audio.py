"""The audio fixtures' folder and audio made on the spot with the service's ffmpeg."""

from __future__ import annotations

import subprocess
from pathlib import Path

from transcriber.providers.ffmpeg import ffmpeg_executable
from transcriber.settings import FfmpegSettings

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "audio"


def tone_mp3(folder: Path, seconds: int) -> Path:
    """A mono 440 Hz tone of `seconds`, as a 32 kb/s MP3 in `folder`."""
    path = folder / "tone.mp3"
    subprocess.run([ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error",
                    "-f", "lavfi", "-i", f"sine=frequency=440:duration={seconds}", "-ac", "1",
                    "-c:a", "libmp3lame", "-b:a", "32k", str(path)], check=True)
    return path


def browser_webm(folder: Path, source: Path) -> Path:
    """`source` as a browser's MediaRecorder sends it: Opus in WebM, mono."""
    path = folder / "recording.webm"
    subprocess.run([ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error",
                    "-i", str(source), "-ac", "1", "-c:a", "libopus", "-b:a", "32k",
                    "-f", "webm", str(path)], check=True)
    return path
