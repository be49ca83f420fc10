"""backup, restore and verify with `storage.files = s3` (a bucket on moto): the backup
holds the objects as files, restore puts them into the configured (empty) bucket,
verify checks the objects."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest

from tests.helpers.archive import kept_logging, make_archive, raw
from tests.helpers.s3 import REGION, Bucket
from transcriber.cli import main
from transcriber.db.connection import database_path
from transcriber.providers.local_files import RECORDS_DIR


@pytest.fixture(autouse=True)
def restore_logging() -> Iterator[None]:
    with kept_logging():
        yield


def _cli(monkeypatch: pytest.MonkeyPatch, data_dir: Path, bucket: Bucket, *argv: str) -> int:
    for name, value in {
        "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir), "TRANSCRIBER_STORAGE_FILES": "s3",
        "TRANSCRIBER_S3_ENDPOINT_URL": bucket.endpoint, "TRANSCRIBER_S3_BUCKET": bucket.name,
        "TRANSCRIBER_S3_REGION": REGION, "TRANSCRIBER_S3_PREFIX": bucket.prefix,
        "TRANSCRIBER_S3_ACCESS_KEY_ID": "test", "TRANSCRIBER_S3_SECRET_ACCESS_KEY": "test",
    }.items():
        monkeypatch.setenv(name, value)
    return main(list(argv))


def _archive_in(bucket: Bucket, data_dir: Path, records: int) -> dict[str, bytes]:
    """A small archive whose files are objects of `bucket` (none in the data folder)."""
    stored = make_archive(data_dir, records=records)
    for relative, body in stored.items():
        bucket.put(bucket.prefix + relative, body)
    shutil.rmtree(data_dir / RECORDS_DIR)
    return stored


def test_backup_restore_verify_round_trip_through_buckets(
        tmp_path: Path, data_dir: Path, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    source = Bucket(s3_endpoint)
    stored = _archive_in(source, data_dir, records=4)
    assert _cli(monkeypatch, data_dir, source, "verify") == 0
    dest = tmp_path / "backup"
    capsys.readouterr()
    assert _cli(monkeypatch, data_dir, source, "backup", str(dest), "--json") == 0
    manifest = orjson.loads(capsys.readouterr().out)
    assert (manifest["files"], manifest["copied"], manifest["missing"]) == (4, 4, [])
    for relative, body in stored.items():
        assert (dest / relative).read_bytes() == body
    assert _cli(monkeypatch, data_dir, source, "verify", str(dest)) == 0  # the backup's files

    target, empty = tmp_path / "restored", Bucket(s3_endpoint)
    assert _cli(monkeypatch, target, empty, "restore", str(dest)) == 0
    assert {key.removeprefix(empty.prefix): empty.get(key)
            for key in empty.record_keys()} == stored
    assert not (target / RECORDS_DIR).exists()
    assert _cli(monkeypatch, target, empty, "verify") == 0
    query = "SELECT r.id, t.contents FROM audio_records r JOIN texts t ON t.record_id = r.id"
    assert ([tuple(r) for r in raw(database_path(target), query)]
            == [tuple(r) for r in raw(database_path(data_dir), query)])

    # A bucket that already holds record files takes no restore.
    again = tmp_path / "again"
    capsys.readouterr()
    assert _cli(monkeypatch, again, empty, "restore", str(dest)) == 1
    assert "already holds record files" in capsys.readouterr().err
    assert len(empty.record_keys()) == 4


def test_verify_finds_missing_resized_and_unnamed_objects(
        data_dir: Path, s3_bucket: Bucket, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    stored = _archive_in(s3_bucket, data_dir, records=3)
    first, second, _ = sorted(stored)
    s3_bucket.delete(s3_bucket.prefix + first)
    s3_bucket.put(s3_bucket.prefix + second, b"short")
    s3_bucket.put(f"{s3_bucket.prefix}{RECORDS_DIR}/r9999/f9999.mp3", b"stray")
    s3_bucket.put(f"{s3_bucket.prefix}r0001/part-000.ogg", b"a SpeechKit part, not a file")
    capsys.readouterr()
    assert _cli(monkeypatch, data_dir, s3_bucket, "verify", "--json") == 1
    problems = orjson.loads(capsys.readouterr().out)["problems"]
    assert problems == {
        "missing_files": [first],
        "wrong_size": [f"{second}: 5 bytes, the row says {len(stored[second])}"],
        "files_without_row": [f"{RECORDS_DIR}/r9999/f9999.mp3"],
    }


def test_a_failed_restore_leaves_the_bucket_empty(
        tmp_path: Path, data_dir: Path, s3_endpoint: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    source = Bucket(s3_endpoint)
    stored = _archive_in(source, data_dir, records=3)
    dest = tmp_path / "backup"
    assert _cli(monkeypatch, data_dir, source, "backup", str(dest)) == 0
    (dest / sorted(stored)[-1]).unlink()  # the backup lacks a file its database names
    target, empty = tmp_path / "restored", Bucket(s3_endpoint)
    capsys.readouterr()
    assert _cli(monkeypatch, target, empty, "restore", str(dest)) == 1
    assert "lacks a file" in capsys.readouterr().err
    assert empty.record_keys() == []
    assert list(target.iterdir()) == []


def test_a_backup_fails_on_an_object_the_snapshot_names_but_missing(
        tmp_path: Path, data_dir: Path, s3_bucket: Bucket,
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    stored = _archive_in(s3_bucket, data_dir, records=3)
    gone = sorted(stored)[1]
    s3_bucket.delete(s3_bucket.prefix + gone)
    capsys.readouterr()
    assert _cli(monkeypatch, data_dir, s3_bucket, "backup", str(tmp_path / "b")) == 1
    assert gone in capsys.readouterr().err
    assert not (tmp_path / "b").exists()
    assert not list(tmp_path.glob(".b*"))
