"""Normalize with the real ffmpeg: OGG Opus mono, duration measured, P17 kinds, cancellation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import av
import pytest

from tests.helpers import hostile_media as hm
from tests.helpers.audio import FIXTURES, tone_mp3
from tests.helpers.pipeline import MakeActor
from tests.helpers.settings import SettingsFactory
from tests.helpers.steps import AddRecord, drive, record_row
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import HaltReason, Stage
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import UNCONVERTIBLE, FfmpegTranscoder, ffmpeg_executable
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import FfmpegSettings, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeRecognizer


def _steps() -> dict:  # type: ignore[type-arg]
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=FakeRecognizer(),
                            store=None)


async def test_normalize_makes_ogg_opus_mono_and_measures_duration(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, record_files: LocalRecordFiles,
) -> None:
    record_id = await add_record(FIXTURES / "espeak_en.ogg")  # Vorbis: must be re-encoded
    actor = make_actor(_steps(), settings)
    await drive(actor, clock, readers, record_id, until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halted_at"] is None
    assert 6200 <= row["duration_ms"] <= 6600
    file_row = await readers.fetch_one(q.records.SELECT_FILE, {"id": row["normalized_file_id"]})
    assert file_row is not None
    assert file_row["format"] == "ogg"
    assert file_row["duration_ms"] == row["duration_ms"]
    path = record_files.path_of(record_id, file_row["file_name"])
    with av.open(str(path)) as container:
        stream = container.streams.audio[0]
        assert stream.codec_context.name == "opus"
        assert stream.codec_context.channels == 1
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".part")]


async def test_p17_normalize_not_audio_halts_at_once(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, tmp_path: Path,
) -> None:
    text = tmp_path / "notes.mp3"
    text.write_text("this is a text file, not a recording\n" * 20)
    record_id = await add_record(text)
    actor = make_actor(_steps(), settings)
    reports = await drive(actor, clock, readers, record_id, until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STEP_FAILED.value
    assert row["error_text"].endswith("not audio")
    assert row["state"] == Stage.UPLOADED.value
    assert len([r for r in reports if r.outcome != "empty"]) == 1  # no retry


async def test_p17_normalize_missing_ffmpeg_is_transient(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory, clock: FakeClock,
    readers: ReaderPool, tmp_path: Path,
) -> None:
    settings = make_settings(pipeline={"attempts_limit": 2, "backoff_base_seconds": 1.0,
                                       "backoff_cap_seconds": 1.0})
    broken = FfmpegTranscoder(FfmpegSettings(path=tmp_path / "no-such-ffmpeg"))
    steps = build_step_table(transcoder=broken, cutter=broken, recognizer=FakeRecognizer(),
                             store=None)
    record_id = await add_record(FIXTURES / "librivox_0880.mp3")
    reports = await drive(make_actor(steps, settings), clock, readers, record_id,
                          until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert [r.outcome for r in reports if r.outcome != "empty"][:2] == ["failure", "failure"]
    assert row["halt_reason"] == HaltReason.ATTEMPTS_EXHAUSTED.value


def _ffmpeg_pids_writing(target: Path) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            status = (entry / "status").read_text()
        except OSError:
            continue
        if str(target).encode() in cmdline and "State:\tZ" not in status:
            pids.append(int(entry.name))
    return pids


async def test_cancelling_normalize_kills_ffmpeg(tmp_path: Path) -> None:
    fifo = tmp_path / "endless.wav"
    os.mkfifo(fifo)  # ffmpeg blocks on it forever: only a kill ends it
    target = tmp_path / "out.ogg"
    transcoder = FfmpegTranscoder(FfmpegSettings())
    task = asyncio.create_task(transcoder.normalize(fifo, target, max_seconds=60))
    for _ in range(200):
        if _ffmpeg_pids_writing(target):
            break
        await asyncio.sleep(0.02)
    assert _ffmpeg_pids_writing(target), "ffmpeg did not start"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _ffmpeg_pids_writing(target) == []


async def test_a_record_longer_than_its_header_said_halts_when_converted(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, record_files: LocalRecordFiles,
) -> None:
    """A record over the limit that got in (stored before the limit) halts at once with
    the reason, after converting at most a second past the limit."""
    settings = make_settings(server={"record_max_seconds": 1})
    record_id = await add_record(FIXTURES / "librivox_0880.mp3")  # about 3 s
    reports = await drive(make_actor(_steps(), settings), clock, readers, record_id,
                          until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STEP_FAILED.value
    assert "longer than 1 s" in row["error_text"]
    assert len([r for r in reports if r.outcome != "empty"]) == 1
    assert row["normalized_file_id"] is None
    assert [p.name for p in record_files.record_dir(record_id).iterdir()] == [
        row["original_file_id"] + ".mp3"]  # no copy, no temporary file left


async def test_a_flac_bomb_whose_header_lies_halts_with_a_clear_reason(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, tmp_path: Path,
) -> None:
    """200 s of silence in about 9 KB, its STREAMINFO declaring 10 s: intake's probe sees
    10 s; the converted stream is what counts."""
    bomb = hm.lying_flac(ffmpeg_executable(FfmpegSettings()), tmp_path / "bomb.flac",
                         seconds=200, declared_seconds=10)
    assert bomb.stat().st_size < 20_000
    probe = await FfmpegTranscoder(FfmpegSettings()).probe(bomb)
    assert probe.duration_ms == 10_000  # the lie intake sees
    settings = make_settings(server={"record_max_seconds": 60})
    record_id = await add_record(bomb)
    reports = await drive(make_actor(_steps(), settings), clock, readers, record_id,
                          until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STEP_FAILED.value
    assert row["error_text"].endswith(
        "the audio is longer than 60 s, the longest accepted "
        "(measured on the converted stream; its header declared less)")
    assert len([r for r in reports if r.outcome != "empty"]) == 1


async def test_a_short_flac_whose_header_declares_more_is_measured_by_its_stream(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, tmp_path: Path,
) -> None:
    """The other lie: 5 s of audio declaring 50 s. It is within the limit either way;
    the record's duration is the stream's."""
    short = hm.lying_flac(ffmpeg_executable(FfmpegSettings()), tmp_path / "short.flac",
                          seconds=5, declared_seconds=50)
    settings = make_settings(server={"record_max_seconds": 60})
    record_id = await add_record(short)
    await drive(make_actor(_steps(), settings), clock, readers, record_id,
                until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halted_at"] is None
    assert 4900 <= row["duration_ms"] <= 5200


async def test_a_record_just_within_the_limit_is_normalized(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool, tmp_path: Path,
) -> None:
    settings = make_settings(server={"record_max_seconds": 3})
    record_id = await add_record(tone_mp3(tmp_path, 3))
    await drive(make_actor(_steps(), settings), clock, readers, record_id,
                until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halted_at"] is None
    assert 2900 <= row["duration_ms"] <= 3200


async def test_a_wav_declaring_two_billion_hertz_halts_after_one_attempt(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, tmp_path: Path,
) -> None:
    """ffmpeg reads its header but cannot set a resampler up for 2 147 483 647 Hz: no
    retry can change that (it used to be retried 8 times over 16 minutes)."""
    wav = tmp_path / "absurd.wav"
    wav.write_bytes(hm.absurd_rate_wav())
    record_id = await add_record(wav)
    reports = await drive(make_actor(_steps(), settings), clock, readers, record_id,
                          until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STEP_FAILED.value
    assert row["error_text"].endswith(UNCONVERTIBLE)
    assert row["attempts"] == 1
    assert len([r for r in reports if r.outcome != "empty"]) == 1
