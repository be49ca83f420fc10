"""Record-file placement on both stores: the data folder (`LocalRecordFiles`) and a bucket
(`S3RecordFiles` on moto): a file is visible whole or not at all, nothing stays
behind a failed stream, names are ids."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from tests.helpers.s3 import Bucket
from tests.helpers.settings import SettingsFactory
from transcriber.core.errors import IncompleteInput, TooLarge, UnsafePath
from transcriber.core.ids import new_id
from transcriber.core.paths import clean_original_name
from transcriber.ports import RecordFiles
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.providers.object_store import MIN_PART_SIZE, S3ObjectStore
from transcriber.providers.s3_files import S3RecordFiles

MIB = 1024 * 1024


async def _chunks(*parts: bytes, fail_after: int | None = None) -> AsyncIterator[bytes]:
    for index, part in enumerate(parts):
        if fail_after is not None and index == fail_after:
            raise ConnectionResetError("peer went away")
        yield part


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


@pytest.fixture
async def client_store(make_settings: SettingsFactory, s3_bucket: Bucket
                       ) -> AsyncIterator[S3ObjectStore]:
    store = S3ObjectStore(make_settings(s3=s3_bucket.settings()).s3)
    await store.start()
    yield store
    await store.close()


@pytest.fixture
def bucket_files(client_store: S3ObjectStore, data_dir: Path) -> S3RecordFiles:
    # Parts of S3's smallest size, so a few MiB make a multipart upload.
    return S3RecordFiles(client_store, prefix="transcriber/", data_dir=data_dir,
                         part_size=MIN_PART_SIZE, copy_part_size=MIN_PART_SIZE)


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, data_dir: Path) -> RecordFiles:
    if request.param == "local":
        return LocalRecordFiles(data_dir)
    files: S3RecordFiles = request.getfixturevalue("bucket_files")
    return files


class Stored:
    """What a store holds, read behind its back: files or objects, and anything left."""

    def __init__(self, store: RecordFiles, data_dir: Path,
                 request: pytest.FixtureRequest) -> None:
        self.kind = store.kind
        self.data_dir = data_dir
        self.bucket: Bucket | None = (request.getfixturevalue("s3_bucket")
                                      if store.kind == "s3" else None)

    def content(self, record_id: str) -> dict[str, bytes]:
        if self.bucket is None:
            folder = self.data_dir / "records" / record_id
            return {p.name: p.read_bytes() for p in folder.iterdir()} if folder.exists() else {}
        return {key.rsplit("/", 1)[-1]: self.bucket.get(key)
                for key in self.bucket.record_keys(record_id)}

    def nothing_left(self) -> bool:
        local = _leftovers(self.data_dir)
        if self.bucket is None:
            return local == []
        return (local == [] and self.bucket.record_keys() == []
                and self.bucket.uploads_in_progress() == [])


@pytest.fixture
def stored(store: RecordFiles, data_dir: Path, request: pytest.FixtureRequest) -> Stored:
    return Stored(store, data_dir, request)


async def test_placed_file_lands_under_its_ids(store: RecordFiles, stored: Stored,
                                               data_dir: Path) -> None:
    record_id = new_id()
    placed = await store.place_stream(
        record_id, _chunks(b"abc", b"def"), ext=".mp3", limit=100, expected_size=6)
    assert placed.file_name == f"{placed.file_id}.mp3"
    assert stored.content(record_id) == {placed.file_name: b"abcdef"}
    assert placed.path.read_bytes() == b"abcdef"  # readable here (intake's probe)
    assert placed.size_bytes == 6
    assert placed.format == "mp3"
    if store.kind == "local":
        assert placed.path == data_dir / "records" / record_id / placed.file_name
        assert _leftovers(data_dir) == [placed.path]
    else:
        assert stored.bucket is not None
        assert stored.bucket.record_keys() == [
            f"transcriber/records/{record_id}/{placed.file_name}"]
        assert not (data_dir / "records").exists()
        await store.release(record_id)
        assert _leftovers(data_dir) == []


@pytest.mark.parametrize(
    ("chunks", "expected", "error"),
    [
        ((b"x" * 60, b"x" * 60), None, TooLarge),
        ((b"x" * 10,), 20, IncompleteInput),
        ((b"x" * 10,), 5, IncompleteInput),
    ],
)
async def test_nothing_stays_behind_when_the_stream_is_wrong(
    store: RecordFiles, stored: Stored, chunks: tuple[bytes, ...],
    expected: int | None, error: type[Exception],
) -> None:
    with pytest.raises(error):
        await store.place_stream(
            new_id(), _chunks(*chunks), ext=".wav", limit=100, expected_size=expected)
    assert stored.nothing_left()


async def test_a_declared_size_above_the_limit_is_refused_before_reading(
    store: RecordFiles, stored: Stored
) -> None:
    read: list[bool] = []

    async def never() -> AsyncIterator[bytes]:
        read.append(True)
        yield b"x" * 11

    with pytest.raises(TooLarge):
        await store.place_stream(new_id(), never(), ext="", limit=10, expected_size=11)
    assert read == []
    assert stored.nothing_left()


async def test_a_broken_stream_leaves_nothing(store: RecordFiles, stored: Stored) -> None:
    with pytest.raises(ConnectionResetError):
        await store.place_stream(
            new_id(), _chunks(b"a", b"b", b"c", fail_after=2), ext=".ogg", limit=100)
    assert stored.nothing_left()


async def test_a_stream_broken_after_some_parts_aborts_its_multipart_upload(
    bucket_files: S3RecordFiles, s3_bucket: Bucket, data_dir: Path
) -> None:
    part = b"p" * MIN_PART_SIZE
    with pytest.raises(ConnectionResetError):
        await bucket_files.place_stream(
            new_id(), _chunks(part, part, part, fail_after=2), ext=".ogg", limit=10**9)
    assert s3_bucket.record_keys() == []
    assert s3_bucket.uploads_in_progress() == []
    assert _leftovers(data_dir) == []


async def test_a_stream_of_many_parts_is_stored_whole(
    bucket_files: S3RecordFiles, s3_bucket: Bucket
) -> None:
    record_id = new_id()
    body = bytes(range(256)) * (MIN_PART_SIZE * 2 // 256 + 1000)
    pieces = [body[i:i + MIB] for i in range(0, len(body), MIB)]
    placed = await bucket_files.place_stream(record_id, _chunks(*pieces), ext=".wav",
                                             limit=10**9, expected_size=len(body))
    (key,) = s3_bucket.record_keys(record_id)
    assert s3_bucket.get(key) == body
    assert placed.size_bytes == len(body)


async def test_discard_removes_the_file(store: RecordFiles, stored: Stored) -> None:
    record_id = new_id()
    placed = await store.place_stream(record_id, _chunks(b"a"), ext="", limit=10)
    await store.discard(placed)
    assert stored.content(record_id) == {}
    assert stored.nothing_left()


async def test_retype_renames_the_stored_file(store: RecordFiles, stored: Stored) -> None:
    record_id = new_id()
    placed = await store.place_stream(record_id, _chunks(b"RIFF", b"data"), ext="", limit=99)
    retyped = await store.retype(placed, ".wav")
    assert retyped.file_name == f"{placed.file_id}.wav"
    assert stored.content(record_id) == {retyped.file_name: b"RIFFdata"}
    assert retyped.path.read_bytes() == b"RIFFdata"


async def test_retype_of_an_object_past_one_copy_goes_in_parts(
    bucket_files: S3RecordFiles, s3_bucket: Bucket
) -> None:
    record_id = new_id()
    body = b"q" * (MIN_PART_SIZE * 2 + 17)
    placed = await bucket_files.place_stream(record_id, _chunks(body), ext="", limit=10**9)
    retyped = await bucket_files.retype(placed, ".flac")
    (key,) = s3_bucket.record_keys(record_id)
    assert key.endswith(retyped.file_name)
    assert s3_bucket.get(key) == body


async def test_a_step_output_is_placed_and_read_back(store: RecordFiles, stored: Stored,
                                                     data_dir: Path) -> None:
    record_id = new_id()
    file_id, temp = store.temp_path(record_id, ".ogg")
    temp.write_bytes(b"OggS copy")
    placed = await store.finalize(record_id, file_id, temp)
    assert stored.content(record_id) == {f"{file_id}.ogg": b"OggS copy"}
    await store.release(record_id)
    local = await store.local_path(record_id, placed.file_name)
    assert local.read_bytes() == b"OggS copy"
    assert [b async for b in store.read(record_id, placed.file_name, start=2, end=6)] in (
        [b"gS c"], [b"g", b"S c"])


async def test_a_working_copy_is_fetched_once_and_released(
    bucket_files: S3RecordFiles, s3_bucket: Bucket, data_dir: Path
) -> None:
    record_id = new_id()
    placed = await bucket_files.place_stream(record_id, _chunks(b"audio"), ext=".mp3",
                                             limit=99)
    await bucket_files.release(record_id)
    local = await bucket_files.local_path(record_id, placed.file_name)
    assert local.is_relative_to(data_dir / "work" / record_id)
    assert local.read_bytes() == b"audio"
    s3_bucket.delete(s3_bucket.record_keys(record_id)[0])
    assert await bucket_files.local_path(record_id, placed.file_name) == local  # kept
    await bucket_files.release(record_id)
    assert _leftovers(data_dir) == []
    with pytest.raises(FileNotFoundError):
        await bucket_files.local_path(record_id, placed.file_name)
    assert _leftovers(data_dir) == []


async def test_remove_record_removes_its_files_only(store: RecordFiles,
                                                    stored: Stored) -> None:
    gone, kept = new_id(), new_id()
    for record_id in (gone, kept, gone):
        await store.place_stream(record_id, _chunks(b"x"), ext=".ogg", limit=9)
    await store.remove_record(gone)
    assert stored.content(gone) == {}
    assert len(stored.content(kept)) == 1


async def test_the_sweep_removes_old_objects_without_a_row(
    bucket_files: S3RecordFiles, s3_bucket: Bucket
) -> None:
    record_id = new_id()
    named = await bucket_files.place_stream(record_id, _chunks(b"a"), ext=".ogg", limit=9)
    orphan = await bucket_files.place_stream(record_id, _chunks(b"b"), ext=".ogg", limit=9)
    s3_bucket.put("transcriber/elsewhere/part-000.ogg", b"a SpeechKit part")
    keep = {(record_id, named.file_name)}
    earlier = datetime.now(UTC) - timedelta(hours=1)
    assert await bucket_files.sweep(keep, before=earlier) == 0  # too young to be sure
    later = datetime.now(UTC) + timedelta(minutes=1)
    assert await bucket_files.sweep(keep, before=later) == 1
    assert s3_bucket.keys() == sorted([
        f"transcriber/records/{record_id}/{named.file_name}",
        "transcriber/elsewhere/part-000.ogg"])
    assert orphan.file_name not in str(s3_bucket.keys())


async def test_names_from_outside_never_become_keys(bucket_files: S3RecordFiles) -> None:
    for record_id, name in (("..", "x.ogg"), ("r", "../x.ogg"), ("r", "a/b")):
        with pytest.raises(UnsafePath):
            await bucket_files.servable(record_id, name)


@pytest.mark.parametrize(
    ("raw", "cleaned"),
    [
        ("talk.mp3", "talk.mp3"),
        ("../../etc/passwd", "passwd"),
        ("C:\\Users\\me\\call.m4a", "call.m4a"),
        ("bad\x00name\x1b[31m.wav", "badname[31m.wav"),
        ("", ""),
        (None, ""),
        ("a" * 300 + ".wav", "a" * 255),
    ],
)
def test_sender_names_are_cleaned(raw: str | None, cleaned: str) -> None:
    assert clean_original_name(raw) == cleaned
