"""backup, restore and verify on a small archive: what each one refuses and finds."""

from __future__ import annotations

import errno
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.helpers.archive import kept_logging, make_archive, raw, tamper
from transcriber.cli import main
from transcriber.core.hashing import sha256_of
from transcriber.db.connection import database_path
from transcriber.maintenance.backup import MANIFEST_NAME, BackupError, MissingFiles, backup
from transcriber.maintenance.restore import restore
from transcriber.maintenance.verify import verify
from transcriber.providers.local_files import INSTANCE_LOCK, RECORDS_DIR


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    with kept_logging():
        yield


def _cli(monkeypatch: pytest.MonkeyPatch, data_dir: Path, *argv: str) -> int:
    monkeypatch.setenv("TRANSCRIBER_STORAGE_DATA_DIR", str(data_dir))
    return main(list(argv))


def test_backup_restore_verify_round_trip(tmp_path: Path, data_dir: Path,
                                          monkeypatch: pytest.MonkeyPatch,
                                          capsys: pytest.CaptureFixture[str]) -> None:
    stored = make_archive(data_dir, records=6)
    (data_dir / "models").mkdir()
    (data_dir / "models" / "model.bin").write_bytes(b"cache")  # an old layout's cache
    dest = tmp_path / "backup"
    capsys.readouterr()
    assert _cli(monkeypatch, data_dir, "backup", str(dest), "--json") == 0
    manifest = orjson.loads(capsys.readouterr().out)
    assert (manifest["records"], manifest["files"], manifest["transcripts"]) == (6, 6, 6)
    assert manifest["file_bytes"] == sum(map(len, stored.values()))
    assert manifest["linked"] + manifest["copied"] == 6
    assert manifest["missing"] == []
    assert manifest["database_sha256"] == sha256_of(dest / "transcriber.sqlite3")
    assert sorted(p.name for p in dest.iterdir()) == [MANIFEST_NAME, RECORDS_DIR,
                                                      "transcriber.sqlite3"]
    assert not list(tmp_path.glob(".backup.part*"))
    assert _cli(monkeypatch, data_dir, "verify", str(dest)) == 0

    target = tmp_path / "restored"
    assert _cli(monkeypatch, target, "restore", str(dest)) == 0
    for relative, body in stored.items():
        assert (target / relative).read_bytes() == body
    assert not (target / "models").exists()
    assert _cli(monkeypatch, target, "verify") == 0
    query = "SELECT r.id, r.title, t.contents FROM audio_records r JOIN texts t " \
            "ON t.record_id = r.id ORDER BY r.id"
    assert ([tuple(r) for r in raw(database_path(target), query)]
            == [tuple(r) for r in raw(database_path(data_dir), query)])


def test_a_file_the_snapshot_names_but_missing_fails_the_backup(
        tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stored = make_archive(data_dir, records=3)
    gone = sorted(stored)[1]
    (data_dir / gone).unlink()
    with pytest.raises(MissingFiles) as caught:
        backup(data_dir, tmp_path / "b1")
    assert caught.value.manifest.missing == [gone]
    assert not (tmp_path / "b1").exists()
    assert not list(tmp_path.glob(".b1*"))
    assert _cli(monkeypatch, data_dir, "backup", str(tmp_path / "b2")) == 1
    assert gone in capsys.readouterr().err


def test_backup_refuses_an_existing_destination(tmp_path: Path, data_dir: Path) -> None:
    make_archive(data_dir, records=1)
    (tmp_path / "there").mkdir()
    with pytest.raises(BackupError, match="already exists"):
        backup(data_dir, tmp_path / "there")


def test_restore_refuses_a_folder_not_empty_or_in_use(tmp_path: Path, data_dir: Path,
                                                      monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]
                                                      ) -> None:
    make_archive(data_dir, records=2)
    backup(data_dir, tmp_path / "b")
    full = tmp_path / "full"
    full.mkdir()
    (full / "something").write_text("x")
    assert _cli(monkeypatch, full, "restore", str(tmp_path / "b")) == 1
    assert "not empty" in capsys.readouterr().err
    assert (full / "something").read_text() == "x"
    busy = tmp_path / "busy"
    busy.mkdir()
    fd = os.open(busy / INSTANCE_LOCK, os.O_RDWR | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_SH)  # as a running serve holds it
    try:
        with pytest.raises(BackupError, match="in use"):
            restore(tmp_path / "b", busy)
    finally:
        os.close(fd)
    with pytest.raises(BackupError, match="not a backup"):
        restore(data_dir, tmp_path / "empty")


def test_restore_refuses_a_database_that_does_not_match_its_manifest(
        tmp_path: Path, data_dir: Path) -> None:
    make_archive(data_dir, records=2)
    backup(data_dir, tmp_path / "b")
    tamper(tmp_path / "b" / "transcriber.sqlite3", "UPDATE users SET name = 'x'")
    with pytest.raises(BackupError, match="SHA-256"):
        restore(tmp_path / "b", tmp_path / "new")
    assert not database_path(tmp_path / "new").exists()


def test_verify_lists_every_kind_of_problem(data_dir: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    stored = make_archive(data_dir, records=4)
    assert verify(database_path(data_dir), data_dir).ok
    first, second, *_ = sorted(stored)
    (data_dir / first).unlink()
    (data_dir / second).write_bytes(b"short")
    (data_dir / RECORDS_DIR / "r0003" / "stray.bin").write_bytes(b"?")
    db = database_path(data_dir)
    tamper(db, "DROP TRIGGER texts_search_update",
           "UPDATE texts SET contents = 'changed words' WHERE record_id = 'r0002'",
           "PRAGMA foreign_keys = OFF",
           "INSERT INTO record_topics (record_id, topic_id) VALUES ('r0001', 'no-such-topic')")
    report = verify(db, data_dir)
    assert not report.ok
    assert report.problems["missing_files"] == [first]
    assert report.problems["wrong_size"] == [f"{second}: 5 bytes, the row says "
                                             f"{len(stored[second])}"]
    assert report.problems["files_without_row"] == [f"{RECORDS_DIR}/r0003/stray.bin"]
    assert report.problems["search"] == ["search terms of record r0002 differ from the record"]
    assert len(report.problems["foreign_keys"]) == 1
    assert "integrity" not in report.problems
    assert _cli(monkeypatch, data_dir, "verify") == 1
    err = capsys.readouterr().err
    for shown in (first, "stray.bin", "r0002"):
        assert shown in err


def test_verify_finds_a_record_missing_from_the_search_index(data_dir: Path) -> None:
    make_archive(data_dir, records=2)
    db = database_path(data_dir)
    tamper(db, "DELETE FROM record_search_keys WHERE record_id = 'r0001'")
    problems = verify(db, data_dir).problems["search"]
    assert "record r0001 has no search key" in problems


def test_another_file_system_gets_copies(tmp_path: Path, data_dir: Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    stored = make_archive(data_dir, records=3)

    def cross_device(source: object, target: object, **flags: object) -> None:
        raise OSError(errno.EXDEV, "Invalid cross-device link")

    monkeypatch.setattr(os, "link", cross_device)
    manifest = backup(data_dir, tmp_path / "b")
    assert (manifest.linked, manifest.copied) == (0, 3)
    for relative, body in stored.items():
        copy = tmp_path / "b" / relative
        assert copy.read_bytes() == body
        assert copy.stat().st_ino != (data_dir / relative).stat().st_ino
    assert verify(database_path(tmp_path / "b"), tmp_path / "b").ok


def test_backup_refuses_a_symlink_in_the_data_folder(tmp_path: Path, data_dir: Path) -> None:
    """Only regular files are backed up: a symlink planted under a stored name would
    carry whatever it points at into the backup."""
    stored = make_archive(data_dir, records=2)
    planted = data_dir / sorted(stored)[0]
    secret = tmp_path / "secret"
    secret.write_bytes(planted.read_bytes())
    planted.unlink()
    planted.symlink_to(secret)
    with pytest.raises(BackupError, match="symlink"):
        backup(data_dir, tmp_path / "b")
    assert not (tmp_path / "b").exists()
    assert secret.stat().st_nlink == 1
