"""The start-up sweep of record folders: what a killed process left is removed,
nothing else (stored files, files newer than the start, another process's work)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from transcriber.providers.local_files import RECORDS_DIR, take_instance_lock
from transcriber.service.storage import sweep_record_folders


def _file(path: Path, age_seconds: float) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x")
    moment = time.time() - age_seconds
    os.utime(path, (moment, moment))
    return path


def test_sweep_removes_old_temporaries_and_rowless_files_only(data_dir: Path) -> None:
    records = data_dir / RECORDS_DIR
    stored = _file(records / "r1" / "f1.mp3", 60)
    temp = _file(records / "r1" / ".f2.mp3.part", 60)
    orphan = _file(records / "r2" / "f3.mp3", 60)  # its row never committed
    fresh_temp = _file(records / "r3" / ".f4.mp3.part", -5)  # written after the start
    fresh = _file(records / "r3" / "f5.mp3", -5)

    removed = sweep_record_folders(data_dir, {("r1", "f1.mp3")}, before=time.time())

    assert removed == (1, 1)
    assert stored.exists()
    assert not temp.exists()
    assert not orphan.exists()
    assert not (records / "r2").exists()  # an emptied folder goes too
    assert fresh_temp.exists()
    assert fresh.exists()


def test_sweep_of_a_folder_without_records_does_nothing(data_dir: Path) -> None:
    assert sweep_record_folders(data_dir, set(), before=time.time()) == (0, 0)


def test_a_second_process_on_the_folder_is_not_alone(data_dir: Path) -> None:
    first, first_alone = take_instance_lock(data_dir)
    try:
        second, second_alone = take_instance_lock(data_dir)  # another open file: as a process
        os.close(second)
    finally:
        os.close(first)
    assert (first_alone, second_alone) == (True, False)
