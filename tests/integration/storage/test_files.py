from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from transcriber.errors import IncompleteInput, TooLarge
from transcriber.files import RecordFiles, clean_original_name
from transcriber.ids import new_id


async def _chunks(*parts: bytes, fail_after: int | None = None) -> AsyncIterator[bytes]:
    for index, part in enumerate(parts):
        if fail_after is not None and index == fail_after:
            raise ConnectionResetError("peer went away")
        yield part


def _leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


async def test_placed_file_lands_under_its_ids(record_files: RecordFiles, data_dir: Path) -> None:
    record_id = new_id()
    placed = await record_files.place_stream(
        record_id, _chunks(b"abc", b"def"), ext=".mp3", limit=100, expected_size=6)
    assert placed.path == data_dir / "records" / record_id / f"{placed.file_id}.mp3"
    assert placed.path.read_bytes() == b"abcdef"
    assert placed.size_bytes == 6
    assert placed.format == "mp3"
    assert _leftovers(data_dir) == [placed.path]


@pytest.mark.parametrize(
    ("chunks", "expected", "error"),
    [
        ((b"x" * 60, b"x" * 60), None, TooLarge),
        ((b"x" * 10,), 20, IncompleteInput),
        ((b"x" * 10,), 5, IncompleteInput),
    ],
)
async def test_nothing_stays_behind_when_the_stream_is_wrong(
    record_files: RecordFiles, data_dir: Path, chunks: tuple[bytes, ...],
    expected: int | None, error: type[Exception],
) -> None:
    with pytest.raises(error):
        await record_files.place_stream(
            new_id(), _chunks(*chunks), ext=".wav", limit=100, expected_size=expected)
    assert _leftovers(data_dir) == []
    assert list((data_dir / "records").iterdir()) == []


async def test_a_declared_size_above_the_limit_is_refused_before_reading(
    record_files: RecordFiles, data_dir: Path
) -> None:
    read: list[bool] = []

    async def never() -> AsyncIterator[bytes]:
        read.append(True)
        yield b"x" * 11

    with pytest.raises(TooLarge):
        await record_files.place_stream(new_id(), never(), ext="", limit=10, expected_size=11)
    assert read == []
    assert _leftovers(data_dir) == []


async def test_a_broken_stream_leaves_nothing(record_files: RecordFiles, data_dir: Path) -> None:
    with pytest.raises(ConnectionResetError):
        await record_files.place_stream(
            new_id(), _chunks(b"a", b"b", b"c", fail_after=2), ext=".ogg", limit=100)
    assert _leftovers(data_dir) == []


async def test_discard_removes_the_file_and_its_empty_folder(
    record_files: RecordFiles, data_dir: Path
) -> None:
    record_id = new_id()
    placed = await record_files.place_stream(record_id, _chunks(b"a"), ext="", limit=10)
    await record_files.discard(placed)
    assert not record_files.record_dir(record_id).exists()


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
