"""Normalize with the real ffmpeg: OGG Opus mono, duration measured, P17 kinds, cancellation."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import av
import pytest

from tests.conftest import SettingsFactory
from tests.integration.steps.conftest import FIXTURES, AddRecord, MakeActor, drive, record_row
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.files import RecordFiles
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.settings import FfmpegSettings, Settings
from transcriber.stages import HaltReason, Stage
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeRecognizer


def _steps() -> dict:  # type: ignore[type-arg]
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=FakeRecognizer(),
                            store=None)


async def test_normalize_makes_ogg_opus_mono_and_measures_duration(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, record_files: RecordFiles,
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


async def test_normalized_copy_stops_at_record_max_seconds_and_its_duration_is_measured(
    add_record: AddRecord, make_actor: MakeActor, make_settings: SettingsFactory,
    clock: FakeClock, readers: ReaderPool,
) -> None:
    """A record over the limit that got in (stored before the limit, or lying in its header)
    costs downstream at most the limit: the recognizers' time limits follow this duration."""
    settings = make_settings(server={"record_max_seconds": 1})
    record_id = await add_record(FIXTURES / "librivox_0880.mp3")  # about 3 s
    await drive(make_actor(_steps(), settings), clock, readers, record_id,
                until=Stage.NORMALIZED)
    row = await record_row(readers, record_id)
    assert row["halted_at"] is None
    assert 900 <= row["duration_ms"] <= 1100
