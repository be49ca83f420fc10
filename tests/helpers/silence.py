"""OGG Opus silence of any length and a normalize that copies: SpeechKit path tests."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from transcriber.providers import media
from transcriber.providers.ffmpeg import FfmpegTranscoder, ffmpeg_executable
from transcriber.settings import FfmpegSettings


class CopyTranscoder:
    """Normalize by copying (the input already is OGG Opus, or must stay non-Opus)."""

    async def normalize(self, source: Path, target: Path, *, max_seconds: int,
                        on_progress: object = None, channels: int = 1) -> None:
        shutil.copyfile(source, target)

    async def kept_channels(self, source: Path, *, max_seconds: int) -> int:
        return await FfmpegTranscoder(FfmpegSettings()).kept_channels(
            source, max_seconds=max_seconds)

    async def probe_duration_ms(self, path: Path) -> int:
        return probe_duration_ms(path)


def probe_duration_ms(path: Path) -> int:
    return int(media.probe(path)["duration_ms"])


def silence_minutes(folder: Path, minutes: int) -> Path:
    """`minutes` of OGG Opus silence: one minute encoded, then concatenated by stream copy."""
    exe = ffmpeg_executable(FfmpegSettings())
    minute = folder / "minute.ogg"
    subprocess.run([exe, "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i",
                    "anullsrc=r=48000:cl=mono", "-t", "60", "-c:a", "libopus", "-b:a", "6k",
                    str(minute)], check=True)
    listing = folder / "list.txt"
    listing.write_text("".join(f"file '{minute}'\n" for _ in range(minutes)))
    long = folder / "long.ogg"
    subprocess.run([exe, "-nostdin", "-loglevel", "error", "-f", "concat", "-safe", "0",
                    "-i", str(listing), "-c", "copy", str(long)], check=True)
    return long
