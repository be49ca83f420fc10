"""A real `transcriber serve` recognizing a long record: shared by the kill -9
acceptance test and the long-recording benchmarks."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, TypeVar

import orjson

from tests.helpers.factories import make_user
from transcriber.core.clock import SystemClock
from transcriber.core.ids import new_id
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.writer import Writer
from transcriber.providers import media
from transcriber.providers.local_files import LocalRecordFiles

T = TypeVar("T")


async def _accept(data_dir: Path, source: Path) -> str:
    migrate(data_dir)
    writer = Writer(database_path(data_dir), clock=SystemClock())
    await writer.start()
    try:
        owner = await make_user(writer)
        files = LocalRecordFiles(data_dir)
        record_id = new_id()
        file_id, temp = files.temp_path(record_id, source.suffix)
        shutil.copyfile(source, temp)
        placed = await files.finalize(record_id, file_id, temp)
        duration_ms = int(media.probe(files.path_of(record_id, placed.file_name))["duration_ms"])
        await writer.ask(AcceptRecord(
            record_id=record_id, owner_id=owner.id,
            original=StoredFile(id=placed.file_id, file_name=placed.file_name,
                                size_bytes=placed.size_bytes, format=placed.format,
                                duration_ms=duration_ms),
            original_filename="talk" + source.suffix, duration_ms=duration_ms))
        return record_id
    finally:
        await writer.stop()


def accept_file(data_dir: Path, source: Path) -> str:
    """The file as an accepted record of `alice`, at the first stage."""
    return asyncio.run(_accept(data_dir, source))


def serve(data_dir: Path, port: int, log: IO[bytes], **env: str) -> subprocess.Popen[bytes]:
    """`transcriber serve` with JSON logs into `log` (a file: a pipe would fill up)."""
    environment = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
                   "TRANSCRIBER_SERVER_PORT": str(port), "TRANSCRIBER_LOGGING_FORMAT": "json",
                   **env}
    return subprocess.Popen([sys.executable, "-m", "transcriber.cli", "serve"],
                            env=environment, stdout=log, stderr=subprocess.STDOUT)


def query(db: Path, sql: str, *params: object) -> list[sqlite3.Row]:
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True,
                                            timeout=5)) as conn:
        conn.row_factory = sqlite3.Row
        return list(conn.execute(sql, params))


def saved_parts(db: Path, record_id: str) -> dict[int, str]:
    rows = query(db, "SELECT part_index, payload_file FROM recognitions "
                     "WHERE record_id = ? AND payload_file IS NOT NULL", record_id)
    return {r["part_index"]: r["payload_file"] for r in rows}


def state(db: Path, record_id: str) -> sqlite3.Row:
    return query(db, "SELECT state, halted_at, error_text FROM audio_records WHERE id = ?",
                 record_id)[0]


def wait_for(probe: Callable[[], T | None], what: str, *, timeout: float,
             proc: subprocess.Popen[bytes] | None = None) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc is None or proc.poll() is None, f"serve exited while waiting for {what}"
        with contextlib.suppress(sqlite3.OperationalError):  # the database is being created
            found = probe()
            if found is not None:
                return found
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def recognition_starts(*logs: Path) -> collections.Counter[int]:
    """How many times each part's recognition started, from the serve logs."""
    starts: collections.Counter[int] = collections.Counter()
    for path in logs:
        for line in path.read_bytes().splitlines():
            if not line.startswith(b"{"):
                continue
            event = orjson.loads(line)
            if event.get("event") == "recognition_started":
                starts[int(event["part"])] += 1
    return starts


def transcript(db: Path, record_id: str) -> str:
    rows = query(db, "SELECT contents FROM texts WHERE record_id = ? AND kind = 'transcript'",
                 record_id)
    return str(rows[0]["contents"]) if rows else ""
