"""Backup, restore and verify of a 5 000-record archive (one file and one
transcript each), DEST on the same file system: the times the operations
guide quotes. `TRANSCRIBER_BENCH_BACKUP_RECORDS` sets the size.

    sh .ci/dev bench -k backup
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.helpers.archive import make_archive
from transcriber.db.connection import database_path
from transcriber.maintenance.backup import backup
from transcriber.maintenance.restore import restore
from transcriber.maintenance.verify import verify

RECORDS = int(os.environ.get("TRANSCRIBER_BENCH_BACKUP_RECORDS", "5000"))


@pytest.mark.bench
def test_backup_restore_verify_times(tmp_path: Path) -> None:
    make_archive(tmp_path / "data", RECORDS)
    started = time.perf_counter()
    manifest = backup(tmp_path / "data", tmp_path / "backup")
    backed_up = time.perf_counter()
    restore(tmp_path / "backup", tmp_path / "restored")
    restored = time.perf_counter()
    report = verify(database_path(tmp_path / "restored"), tmp_path / "restored")
    verified = time.perf_counter()
    print(f"\nbackup_scale records={manifest.records} linked={manifest.linked} "
          f"copied={manifest.copied} database_bytes={manifest.database_bytes} "
          f"backup_s={backed_up - started:.2f} restore_s={restored - backed_up:.2f} "
          f"verify_s={verified - restored:.2f}")
    assert report.ok, report.problems
    assert manifest.records == manifest.files == RECORDS
