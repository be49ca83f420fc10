"""`FfmpegTranscoder.samples` (the `DecodesSamples` port of text while recording): a
stretch of a WebM/Opus recording as 16 kHz mono PCM, read from a file cut off in the
middle, as an upload still going on is (its partial file has no extension)."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

from tests.helpers.audio import FIXTURES
from transcriber.domain.live_text import BYTES_PER_MS, silent
from transcriber.providers.ffmpeg import FfmpegTranscoder, ffmpeg_executable
from transcriber.settings import FfmpegSettings


async def test_a_recording_cut_off_mid_file_decodes_up_to_where_it_ends(
        tmp_path: Path) -> None:
    settings = FfmpegSettings()
    webm = tmp_path / "recording.webm"
    # What a browser's MediaRecorder sends: Opus in WebM, 32 kbit/s, 20 s of speech.
    await asyncio.to_thread(subprocess.run, [
        ffmpeg_executable(settings), "-nostdin", "-loglevel", "error", "-stream_loop", "-1",
        "-i", str(FIXTURES / "espeak_en.ogg"), "-t", "20", "-ac", "1", "-c:a", "libopus",
        "-b:a", "32k", "-f", "webm", str(webm)], check=True, timeout=60)
    data = webm.read_bytes()
    partial = tmp_path / "01jabcdefghjkmnpqrstvwxyz0.part"
    partial.write_bytes(data[: len(data) // 2])  # about 10 s stored so far
    ffmpeg = FfmpegTranscoder(settings)

    whole = await ffmpeg.samples(partial, start_ms=0, length_ms=15_000)
    assert 7_000 * BYTES_PER_MS < len(whole) < 13_000 * BYTES_PER_MS
    assert not silent(whole)
    later = await ffmpeg.samples(partial, start_ms=4_000, length_ms=15_000)
    assert abs(len(whole) - len(later) - 4_000 * BYTES_PER_MS) < 100 * BYTES_PER_MS
    assert await ffmpeg.samples(partial, start_ms=30_000, length_ms=15_000) == b""
