"""The probe and ffmpeg with hostile files: only audio containers, read from the file itself.

Every file here is opened as the service opens an upload: no extension
(the sender's is never used), the real ffmpeg and PyAV.
"""

from __future__ import annotations

import shutil
import sys
import time
from pathlib import Path

import av
import pytest

from tests.helpers import hostile_media as hm
from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.providers import media
from transcriber.providers.ffmpeg import (
    TOO_SLOW,
    FfmpegTranscoder,
    classify_ffmpeg_failure,
    read_probe_answer,
)
from transcriber.settings import FfmpegSettings

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audio"


@pytest.fixture
def ffmpeg() -> FfmpegTranscoder:
    return FfmpegTranscoder(FfmpegSettings())


@pytest.fixture
def victim(tmp_path: Path) -> Path:
    """Another person's original, where the service keeps it."""
    folder = tmp_path / "records" / "01victimrecord"
    folder.mkdir(parents=True)
    target = folder / "01victimfile.mp3"
    shutil.copyfile(FIXTURES / "librivox_0880.mp3", target)
    return target


def _upload(tmp_path: Path, content: bytes) -> Path:
    folder = tmp_path / "records" / "01attackerrecord"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "01attackerfile"
    path.write_bytes(content)
    return path


@pytest.mark.parametrize(("fixture", "extension"), [
    ("librivox_0880.mp3", ".mp3"), ("espeak_en.ogg", ".ogg"), ("festival_ru.m4a", ".m4a"),
])
async def test_audio_is_probed_and_its_extension_comes_from_the_content(
    ffmpeg: FfmpegTranscoder, tmp_path: Path, fixture: str, extension: str
) -> None:
    path = _upload(tmp_path, (FIXTURES / fixture).read_bytes())
    probe = await ffmpeg.probe(path)
    assert probe.extension == extension
    assert probe.duration_ms > 1000
    assert probe.sample_rate >= 8000


async def test_wav_and_one_hertz_wav_are_told_apart(
    ffmpeg: FfmpegTranscoder, tmp_path: Path
) -> None:
    probe = await ffmpeg.probe(_upload(tmp_path, hm.wav(seconds=2)))
    assert (probe.extension, probe.duration_ms, probe.sample_rate) == (".wav", 2000, 16000)
    slow = await ffmpeg.probe(_upload(tmp_path, hm.one_hertz_wav()))
    assert slow.sample_rate == 1
    assert slow.duration_ms > 27 * 3600 * 1000


async def test_the_probe_reads_rate_and_channels_intake_bounds(
    ffmpeg: FfmpegTranscoder, tmp_path: Path
) -> None:
    """What `server.max_sample_rate` and `server.max_channels` are checked against."""
    wide = await ffmpeg.probe(_upload(tmp_path, hm.wav(rate=48000, seconds=0.1, channels=9)))
    assert (wide.sample_rate, wide.channels) == (48000, 9)
    fast = await ffmpeg.probe(_upload(tmp_path, hm.wav(rate=1_048_575, seconds=0.1,
                                                       channels=8)))
    assert (fast.sample_rate, fast.channels) == (1_048_575, 8)
    absurd = await ffmpeg.probe(_upload(tmp_path, hm.absurd_rate_wav()))
    assert absurd.sample_rate == 2_147_483_647


def _hostile(victim: Path) -> dict[str, bytes]:
    return {
        "hls_relative": hm.hls_playlist(f"../{victim.parent.name}/{victim.name}"),
        "hls_file_url": hm.hls_playlist(f"file://{victim}"),
        "hls_absolute": hm.hls_playlist(str(victim)),
        "hls_live": hm.hls_playlist(f"../{victim.parent.name}/{victim.name}", live=True),
        "hls_live_missing_segment": hm.live_playlist(),
        "ffconcat": hm.ffconcat(str(victim)),
        "subtitle": hm.SUBTITLE,
        "image": hm.png(),
    }


@pytest.mark.parametrize("kind", list(_hostile(Path("/x/y.mp3"))))
async def test_hostile_files_are_not_audio_and_refused_at_once(
    ffmpeg: FfmpegTranscoder, tmp_path: Path, victim: Path, kind: str
) -> None:
    path = _upload(tmp_path, _hostile(victim)[kind])
    started = time.monotonic()
    with pytest.raises(PermanentFailure, match="not audio"):
        await ffmpeg.probe(path)
    assert time.monotonic() - started < 5  # refused, not waited out


@pytest.mark.parametrize("name", ["evil.m3u8", "evil.mp3", "evil"])
async def test_normalizer_never_reads_through_a_playlist(
    ffmpeg: FfmpegTranscoder, tmp_path: Path, victim: Path, name: str
) -> None:
    """An original stored before the allow-list, under the sender's extension."""
    folder = tmp_path / "records" / "01attackerrecord"
    folder.mkdir(parents=True)
    source = folder / name
    source.write_bytes(hm.hls_playlist(f"../{victim.parent.name}/{victim.name}"))
    target = folder / "out.ogg"
    with pytest.raises(PermanentFailure, match="not audio"):
        await ffmpeg.normalize(source, target, max_seconds=60)
    assert not target.exists() or target.stat().st_size == 0


async def test_normalizer_stops_at_the_longest_record(
    ffmpeg: FfmpegTranscoder, tmp_path: Path
) -> None:
    source = tmp_path / "long.mp3"
    shutil.copyfile(FIXTURES / "librivox_0880.mp3", source)  # about 3 s
    target = tmp_path / "out.ogg"
    await ffmpeg.normalize(source, target, max_seconds=1)
    assert 900 <= await ffmpeg.probe_duration_ms(target) <= 1100


async def test_a_probe_past_its_deadline_is_killed_and_refused(tmp_path: Path) -> None:
    ffmpeg = FfmpegTranscoder(FfmpegSettings(probe_timeout_seconds=0.5, probe_concurrency=1))
    ffmpeg.probe_command = [sys.executable, "-c",
                            "import os, sys, time; "
                            "open(sys.argv[1] + '.pid', 'w').write(str(os.getpid())); "
                            "time.sleep(60)"]
    path = _upload(tmp_path, b"anything")
    started = time.monotonic()
    with pytest.raises(PermanentFailure) as failure:
        await ffmpeg.probe(path)
    assert failure.value.reason == TOO_SLOW
    # One probe at a time: the second waited for the first, then ran out its own bound.
    with pytest.raises(PermanentFailure):
        await ffmpeg.probe(path)
    assert 1.0 <= time.monotonic() - started < 5
    assert not _alive(Path(f"{path}.pid"))  # killed and reaped


def _alive(pid_file: Path) -> bool:
    return Path(f"/proc/{int(pid_file.read_text())}").exists()


def test_the_allow_list_holds_audio_containers_only() -> None:
    names = {name for demuxer in media.AUDIO_CONTAINERS for name in demuxer.split(",")}
    assert not names & {"hls", "applehttp", "concat", "image2", "srt", "subviewer", "data",
                        "dash", "tee", "lavfi", "png_pipe", "ass", "webvtt"}
    for demuxer in media.FORMAT_WHITELIST.split(","):
        assert av.format.ContainerFormat(demuxer).name  # every entry is a demuxer of this build
    assert media.demuxer_for(".m4a") == "mov"
    assert media.demuxer_for(".m3u8") is None


def test_whitelist_refusals_are_not_audio() -> None:
    failure = classify_ffmpeg_failure(234, "[in#0] Format not on whitelist 'wav,mp3'\n")
    assert isinstance(failure, PermanentFailure)


@pytest.mark.parametrize(("returncode", "output", "kind"), [
    (-9, b"", TransientFailure),  # killed (out of memory): no verdict on the file
    (0, b"not json", TransientFailure),
    (0, b'{"container": "hls", "duration_ms": 1, "sample_rate": 8000}', TransientFailure),
    (0, b'{"container": "wav", "duration_ms": 1, "sample_rate": 8000}', TransientFailure),
    (0, b'{"error": "permanent", "reason": "not audio"}', PermanentFailure),
    (0, b'{"error": "transient", "reason": "audio file missing"}', TransientFailure),
])
def test_the_probes_answer_is_read_strictly(returncode: int, output: bytes,
                                            kind: type[Exception]) -> None:
    with pytest.raises(kind):
        read_probe_answer(returncode, output)
