"""The watched folder (`service.watch.FolderWatcher`) on a real database and a real
folder, the fake clock deciding when a file has been still long enough (issue 42,
item 5): a file written slowly is taken only once it stops changing; it becomes
exactly one record, also across a restart (a new watcher: nothing in memory) and when
the same bytes are dropped in again; sync tools' partial names are never taken; a
refused file goes to `failed/` with its reason beside it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.helpers.database import TestDatabase
from tests.helpers.settings import SettingsFactory
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.service import watch
from transcriber.service.watch import FolderWatcher
from transcriber.settings import Secret
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import NOT_AUDIO_MARKER, FakeTranscoder

STABLE = 10.0
MakeWatcher = Callable[[], FolderWatcher]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "inbox"
    path.mkdir()
    return path


@pytest.fixture
def make_watcher(make_settings: SettingsFactory, folder: Path, writer: Writer,
                 readers: ReaderPool, record_files: LocalRecordFiles, clock: FakeClock,
                 database_url: str | None) -> MakeWatcher:
    storage = {} if database_url is None else {"database_url": Secret(database_url)}
    settings = make_settings(storage=storage, watch={
        "dirs": (str(folder),), "owner": "alice", "stable_seconds": STABLE})

    def make() -> FolderWatcher:
        return FolderWatcher(settings=settings, writer=writer, readers=readers,
                             files=record_files, transcoder=FakeTranscoder(), clock=clock)

    return make


async def _settle(watcher: FolderWatcher, clock: FakeClock) -> int:
    """Two looks a stable time apart: what a still file needs to be taken."""
    taken = await watcher.look_once()
    clock.advance(STABLE)
    return taken + await watcher.look_once()


def _records(database: TestDatabase) -> list[tuple[str, str, str | None]]:
    return database.rows("SELECT original_filename, source, via FROM audio_records "
                         "ORDER BY original_filename")


async def test_a_file_written_slowly_is_taken_once_it_stops_growing(
        make_watcher: MakeWatcher, folder: Path, clock: FakeClock, database: TestDatabase) -> None:
    watcher = make_watcher()
    memo = folder / "memo.m4a"
    memo.write_bytes(b"a" * 1000)
    assert await watcher.look_once() == 0
    for step in range(3):  # still written: a piece every few seconds
        clock.advance(STABLE / 2)
        with memo.open("ab") as handle:
            handle.write(b"b" * 1000)
        assert await watcher.look_once() == 0, step
    assert _records(database) == []
    clock.advance(STABLE - 0.5)
    assert await watcher.look_once() == 0
    clock.advance(0.5)
    assert await watcher.look_once() == 1
    assert _records(database) == [("memo.m4a", "http", "folder")]
    assert not memo.exists()
    assert (folder / "done" / "memo.m4a").stat().st_size == 4000
    owner = database.scalar("SELECT u.provider_login FROM audio_records r "
                            "JOIN users u ON u.id = r.owner_id")
    assert owner == "alice"


async def test_a_file_is_never_read_twice_across_a_restart(
        make_watcher: MakeWatcher, folder: Path, clock: FakeClock, database: TestDatabase,
        monkeypatch: pytest.MonkeyPatch) -> None:
    memo = folder / "memo.m4a"
    memo.write_bytes(b"recording")
    # The service stops after the record is stored, before the file is moved.
    monkeypatch.setattr(watch, "move_into", _refuse_move)
    assert await _settle(make_watcher(), clock) == 1
    assert memo.exists()
    monkeypatch.undo()
    restarted = make_watcher()  # nothing in memory: only the database remembers
    assert await _settle(restarted, clock) == 0
    assert not memo.exists()
    assert (folder / "done" / "memo.m4a").exists()
    # The same bytes dropped in again under another name: still the one record.
    (folder / "again.mp3").write_bytes(b"recording")
    assert await _settle(restarted, clock) == 0
    assert (folder / "done" / "again.mp3").exists()
    assert len(_records(database)) == 1
    assert database.count("watched_files") == 1


def _refuse_move(path: Path, subfolder: str, *, reason: str | None = None) -> Path:
    raise PermissionError("the service stopped here")


async def test_partial_names_of_sync_tools_are_never_taken(
        make_watcher: MakeWatcher, folder: Path, clock: FakeClock, database: TestDatabase) -> None:
    watcher = make_watcher()
    names = [".syncthing.memo.m4a.tmp", "~syncthing~memo.m4a.tmp", "memo.m4a.part",
             ".memo.m4a.~1234", "notes.txt"]
    for name in names:
        (folder / name).write_bytes(b"half a recording")
    assert await _settle(watcher, clock) == 0
    clock.advance(STABLE * 10)
    assert await watcher.look_once() == 0
    assert sorted(os.listdir(folder)) == sorted(names)
    # The sync tool renames it in when complete: now it is taken.
    (folder / "memo.m4a.part").rename(folder / "memo.m4a")
    assert await _settle(watcher, clock) == 1
    assert _records(database) == [("memo.m4a", "http", "folder")]


async def test_a_refused_file_goes_to_failed_with_its_reason(
        make_watcher: MakeWatcher, folder: Path, clock: FakeClock, database: TestDatabase) -> None:
    (folder / "fake.mp3").write_bytes(NOT_AUDIO_MARKER + b" a text file")
    assert await _settle(make_watcher(), clock) == 0
    assert _records(database) == []
    assert (folder / "failed" / "fake.mp3").exists()
    assert (folder / "failed" / "fake.mp3.reason.txt").read_text() == "not audio\n"
    assert database.count("watched_files") == 0


async def test_a_file_that_changes_while_read_waits_again(
        make_watcher: MakeWatcher, folder: Path, clock: FakeClock, database: TestDatabase,
        monkeypatch: pytest.MonkeyPatch) -> None:
    watcher = make_watcher()
    (folder / "memo.m4a").write_bytes(b"first bytes")
    # The bytes streamed into the record are not those hashed before: still written.
    monkeypatch.setattr(watch, "sha256_of", lambda path: "0" * 64)
    assert await _settle(watcher, clock) == 0
    assert _records(database) == []
    assert (folder / "memo.m4a").exists()
    assert not (folder / "failed").exists()
    monkeypatch.undo()
    assert await _settle(watcher, clock) == 1
