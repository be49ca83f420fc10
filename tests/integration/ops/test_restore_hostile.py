"""Crafted backups: restore and verify treat a backup as untrusted.

Each backup here is made by `backup` and then altered the way an attacker
would hand one over: its manifest is rewritten to match the altered database,
so only the paths give it away. Restore must refuse it, write nothing outside
the data folder, leave the folder empty, and verify must not call it sound.
"""

from __future__ import annotations

import os
from pathlib import Path

import orjson
import pytest

from tests.helpers.archive import kept_logging, make_archive, tamper
from transcriber.cli import main
from transcriber.core.hashing import sha256_of
from transcriber.db.connection import database_path
from transcriber.maintenance.backup import MANIFEST_NAME, BackupError, backup
from transcriber.maintenance.restore import RestoreUnverified, restore
from transcriber.maintenance.verify import verify
from transcriber.providers.local_files import RECORDS_DIR


def _crafted(tmp_path: Path, data_dir: Path) -> tuple[Path, dict[str, bytes]]:
    """A backup of four records, one level deeper than the restore target, so a
    `../` path means a different place seen from each."""
    stored = make_archive(data_dir, records=4)
    src = tmp_path / "handed-over" / "backup"
    src.parent.mkdir()
    backup(data_dir, src)
    return src, stored


def _reseal(src: Path) -> None:
    """Give the altered database a manifest that matches it (what an attacker does)."""
    manifest = orjson.loads((src / MANIFEST_NAME).read_bytes())
    manifest["database_sha256"] = sha256_of(database_path(src))
    (src / MANIFEST_NAME).write_bytes(orjson.dumps(manifest))


def _rename_row(src: Path, file_id: str, file_name: str) -> None:
    tamper(database_path(src),
           f"UPDATE files SET file_name = '{file_name}' WHERE id = '{file_id}'")
    _reseal(src)


def _refused(src: Path, target: Path) -> BackupError:
    with pytest.raises(BackupError) as caught:
        restore(src, target)
    assert not isinstance(caught.value, RestoreUnverified)  # refused before it was placed
    assert list(target.iterdir()) == []
    return caught.value


def test_a_row_with_dot_dot_is_refused_and_nothing_lands_outside(
        tmp_path: Path, data_dir: Path) -> None:
    src, _stored = _crafted(tmp_path, data_dir)
    escape = "../../../escape.mp3"
    # The file sits where the row leads from the backup: verify used to find it there.
    (src / RECORDS_DIR / "r0000" / "f0000.mp3").rename(tmp_path / "handed-over" / "escape.mp3")
    _rename_row(src, "f0000", escape)
    report = verify(database_path(src), src)
    assert not report.ok
    assert report.problems["unsafe_files"] == [
        f"'{RECORDS_DIR}/r0000/{escape}': a path component is not a plain name"]
    target = tmp_path / "restored"
    assert "not a plain name" in str(_refused(src, target))
    assert not (tmp_path / "escape.mp3").exists()  # where the old restore wrote it


def test_an_absolute_row_is_refused(tmp_path: Path, data_dir: Path) -> None:
    src, stored = _crafted(tmp_path, data_dir)
    secret = tmp_path / "secret.mp3"
    secret.write_bytes(stored[f"{RECORDS_DIR}/r0001/f0001.mp3"])  # the size the row says
    (src / RECORDS_DIR / "r0001" / "f0001.mp3").unlink()
    _rename_row(src, "f0001", str(secret))
    assert "unsafe_files" in verify(database_path(src), src).problems
    target = tmp_path / "restored"
    _refused(src, target)
    assert secret.stat().st_nlink == 1  # never linked into the data folder


def test_a_symlinked_file_is_refused_not_followed(tmp_path: Path, data_dir: Path) -> None:
    src, stored = _crafted(tmp_path, data_dir)
    secret = tmp_path / "secret.mp3"
    secret.write_bytes(stored[f"{RECORDS_DIR}/r0002/f0002.mp3"])
    planted = src / RECORDS_DIR / "r0002" / "f0002.mp3"
    planted.unlink()
    planted.symlink_to(secret)
    report = verify(database_path(src), src)
    assert report.problems["unsafe_files"] == [
        f"'{RECORDS_DIR}/r0002/f0002.mp3': the file is a symlink or not a regular file"]
    target = tmp_path / "restored"
    assert "symlink" in str(_refused(src, target))
    assert secret.stat().st_nlink == 1


def test_a_symlinked_record_folder_is_refused(tmp_path: Path, data_dir: Path) -> None:
    src, _stored = _crafted(tmp_path, data_dir)
    outside = tmp_path / "outside"
    (src / RECORDS_DIR / "r0003").rename(outside)
    (src / RECORDS_DIR / "r0003").symlink_to(outside, target_is_directory=True)
    report = verify(database_path(src), src)
    assert report.problems["unsafe_files"] == [
        f"'{RECORDS_DIR}/r0003/f0003.mp3': a folder on the way is a symlink or not a folder"]
    links = (outside / "f0003.mp3").stat().st_nlink  # the data folder's and the backup's
    target = tmp_path / "restored"
    assert "symlink" in str(_refused(src, target))
    assert (outside / "f0003.mp3").stat().st_nlink == links


def test_a_symlinked_records_folder_or_database_is_refused(
        tmp_path: Path, data_dir: Path) -> None:
    src, _ = _crafted(tmp_path, data_dir)
    elsewhere = tmp_path / "elsewhere"
    (src / RECORDS_DIR).rename(elsewhere)
    (src / RECORDS_DIR).symlink_to(elsewhere, target_is_directory=True)
    assert not verify(database_path(src), src).ok
    _refused(src, tmp_path / "r1")
    (src / RECORDS_DIR).unlink()
    elsewhere.rename(src / RECORDS_DIR)
    db = database_path(src)
    db.rename(tmp_path / "db")
    db.symlink_to(tmp_path / "db")
    assert "database is refused" in str(_refused(src, tmp_path / "r2"))


def test_a_manifest_naming_a_database_outside_is_refused(
        tmp_path: Path, data_dir: Path) -> None:
    src, _ = _crafted(tmp_path, data_dir)
    manifest = orjson.loads((src / MANIFEST_NAME).read_bytes())
    manifest["database"] = "../backup/transcriber.sqlite3"
    (src / MANIFEST_NAME).write_bytes(orjson.dumps(manifest))
    with pytest.raises(BackupError, match="outside the backup"):
        restore(src, tmp_path / "restored")


def test_restore_runs_verify_and_keeps_nothing_when_it_fails(
        tmp_path: Path, data_dir: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    """Paths all sound, but the content is not: a file shorter than its row says."""
    src, _ = _crafted(tmp_path, data_dir)
    (src / RECORDS_DIR / "r0001" / "f0001.mp3").write_bytes(b"short")
    target = tmp_path / "restored"
    with pytest.raises(RestoreUnverified) as caught:
        restore(src, target)
    assert list(caught.value.report.problems) == ["wrong_size"]
    assert list(target.iterdir()) == []
    monkeypatch.setenv("TRANSCRIBER_STORAGE_DATA_DIR", str(target))
    capsys.readouterr()
    with kept_logging():
        assert main(["restore", str(src)]) == 1
    err = capsys.readouterr().err
    assert "failed verify" in err
    assert "wrong_size: 1" in err
    assert list(target.iterdir()) == []


def test_a_sound_backup_is_restored_with_regular_files_only(
        tmp_path: Path, data_dir: Path) -> None:
    src, stored = _crafted(tmp_path, data_dir)
    target = tmp_path / "restored"
    restore(src, target)
    for relative, body in stored.items():
        path = target / relative
        assert not path.is_symlink()
        assert path.read_bytes() == body
    assert sorted(p.name for p in target.iterdir() if not p.name.endswith(".lock")) == [
        RECORDS_DIR, "transcriber.sqlite3"]
    assert verify(database_path(target), target).ok
    assert not [name for name in os.listdir(target) if name.startswith(".")]
