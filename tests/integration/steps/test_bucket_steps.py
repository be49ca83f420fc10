"""The real steps (ffmpeg, the fake recognizer) with the record files in a bucket (moto):
a worker host with none of them on its disk fetches what it reads into its working
folder, uploads what it writes, and drops its copies when the record is done."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import av
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.pipeline import MakeActor
from tests.helpers.s3 import Bucket
from tests.helpers.settings import SettingsFactory
from tests.helpers.steps import AddRecord, drive, record_row
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import HaltReason, Stage
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.s3_files import S3RecordFiles
from transcriber.settings import FfmpegSettings, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.recognizer import FakeRecognizer


@pytest.fixture
async def record_files(make_settings: SettingsFactory, s3_bucket: Bucket,
                       data_dir: Path) -> AsyncIterator[S3RecordFiles]:
    """The record files of every fixture here (intake's `add_record`, the actor's) in
    the bucket."""
    store = S3ObjectStore(make_settings(s3=s3_bucket.settings()).s3)
    await store.start()
    yield S3RecordFiles(store, prefix=s3_bucket.prefix, data_dir=data_dir)
    await store.close()


def _steps() -> dict:  # type: ignore[type-arg]
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=FakeRecognizer(),
                            store=None)


async def test_a_record_goes_through_every_step_with_its_files_in_the_bucket(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, record_files: S3RecordFiles, s3_bucket: Bucket, data_dir: Path,
    tmp_path: Path,
) -> None:
    record_id = await add_record(FIXTURES / "espeak_en.ogg")
    await record_files.release(record_id)  # placed by another host: nothing here
    await drive(make_actor(_steps(), settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert (row["state"], row["halted_at"]) == (Stage.DONE.value, None)
    names = {key.rsplit("/", 1)[-1] for key in s3_bucket.record_keys(record_id)}
    normalized = await readers.fetch_one(q.records.SELECT_FILE,
                                         {"id": row["normalized_file_id"]})
    assert normalized is not None
    assert normalized["file_name"] in names
    assert {name.rsplit(".", 1)[-1] for name in names} == {"ogg", "json"}  # + the answer
    assert len(names) == 3
    copy = tmp_path / "copy.ogg"
    copy.write_bytes(s3_bucket.get(
        f"{s3_bucket.prefix}records/{record_id}/{normalized['file_name']}"))
    with av.open(str(copy)) as container:
        assert container.streams.audio[0].codec_context.name == "opus"
    assert not (data_dir / "records").exists()
    assert not (data_dir / "work" / record_id).exists()  # dropped when done


async def test_an_original_missing_from_the_bucket_halts_the_record(
    add_record: AddRecord, make_actor: MakeActor, settings: Settings, clock: FakeClock,
    readers: ReaderPool, record_files: S3RecordFiles, s3_bucket: Bucket, data_dir: Path,
) -> None:
    record_id = await add_record(FIXTURES / "espeak_en.ogg")
    await record_files.release(record_id)
    for key in s3_bucket.record_keys(record_id):
        s3_bucket.delete(key)
    await drive(make_actor(_steps(), settings), clock, readers, record_id)
    row = await record_row(readers, record_id)
    assert row["halt_reason"] == HaltReason.STEP_FAILED.value
    assert row["error_text"].endswith("the original file is missing")
    assert list((data_dir / "work").glob("*/*")) == []
