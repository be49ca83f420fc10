"""What a stereo call costs: the channel measurement at normalization, and the local
recognizer hearing each channel against hearing the mono mix.

    PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_stereo_cost.py
"""

from __future__ import annotations

import resource
import subprocess
import time
from pathlib import Path

import imageio_ffmpeg
import numpy as np
import pytest

from tests.helpers.speaker_audio import POCKETSPHINX, SAMPLE_RATE, decode, write_wav
from transcriber.ports import AudioPart
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.speakers.channels import ChannelVerdict
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import FfmpegSettings, RecognizerSettings

pytestmark = pytest.mark.bench


@pytest.fixture
def thirty_minutes(tmp_path: Path) -> Path:
    source = tmp_path / "call30.mp3"
    subprocess.run([imageio_ffmpeg.get_ffmpeg_exe(), "-nostdin", "-v", "error", "-y",
                    "-f", "lavfi", "-i", "anoisesrc=d=1800:c=pink:r=16000:a=0.1",
                    "-f", "lavfi", "-i", "sine=f=220:d=1800:r=16000",
                    "-filter_complex", "[0][1]amerge=inputs=2", "-c:a", "libmp3lame",
                    "-b:a", "64k", str(source)], check=True, timeout=600)
    return source


async def test_measuring_thirty_minutes_of_stereo(thirty_minutes: Path, tmp_path: Path) -> None:
    source = thirty_minutes
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    started = time.perf_counter()
    report = await ffmpeg.measure_channels(source, max_seconds=4 * 3600)
    measure = time.perf_counter() - started
    assert report is not None
    assert report.verdict is ChannelVerdict.DIFFERENT
    started = time.perf_counter()
    await ffmpeg.normalize(source, tmp_path / "copy.ogg", max_seconds=4 * 3600, channels=2)
    normalize = time.perf_counter() - started
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    print(f"\n30 min stereo: measure {measure:.1f} s, normalize {normalize:.1f} s, "
          f"peak RSS {rss} MB")


def _call(path: Path) -> bool:
    """The five LibriVox clips (left) answered by the five `cards` clips (right), each once."""
    reader = sorted((POCKETSPHINX / "librivox").glob("*.wav"))
    cards = sorted((POCKETSPHINX / "cards").glob("*.wav"))
    if not reader or not cards:
        return False
    gap = np.zeros(SAMPLE_RATE // 2, dtype=np.float32)
    left: list[np.ndarray] = []
    right: list[np.ndarray] = []
    for a, b in zip((decode(p) for p in reader), (decode(p) for p in cards), strict=False):
        left += [a, np.zeros_like(b), gap]
        right += [np.zeros_like(a), b, gap]
    noise = np.random.default_rng(1)
    channels = [np.concatenate(c) for c in (left, right)]
    channels = [c + 3e-4 * noise.standard_normal(c.shape[0]) for c in channels]
    write_wav(np.stack(channels, axis=1), path)
    return True


async def test_recognizing_each_channel_against_the_mono_mix(tmp_path: Path) -> None:
    call = tmp_path / "call.wav"
    if not _call(call):
        pytest.skip("apt-get install pocketsphinx-testdata")
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    mono, stereo = tmp_path / "mono.ogg", tmp_path / "stereo.ogg"
    await ffmpeg.normalize(call, mono, max_seconds=3600, channels=1)
    await ffmpeg.normalize(call, stereo, max_seconds=3600, channels=2)
    duration = await ffmpeg.probe_duration_ms(mono)
    whisper = WhisperRecognizer(RecognizerSettings(language="en"),
                                cache_dir=tmp_path / "whisper", default_time_limit_seconds=3600)
    try:
        await whisper.submit(AudioPart(path=mono, uri=None, duration_ms=duration))  # loads
        for _ in range(2):
            started = time.perf_counter()
            await whisper.submit(AudioPart(path=mono, uri=None, duration_ms=duration))
            mixed = time.perf_counter() - started
            started = time.perf_counter()
            for channel in (0, 1):
                part = tmp_path / f"channel{channel}.wav"
                await ffmpeg.cut(stereo, part, start_ms=0, length_ms=duration, channel=channel)
                await whisper.submit(AudioPart(path=part, uri=None, duration_ms=duration))
            both = time.perf_counter() - started
            print(f"\n{duration / 1000:.0f} s call: mono mix {mixed:.1f} s, "
                  f"each channel {both:.1f} s ({both / mixed:.2f}x)")
    finally:
        await whisper.close()
