"""An acknowledged upload is never lost: SIGKILL a real `transcriber serve` mid-uploads.

Several clients upload at once over HTTP (some quickly, some trickling their
bytes so they are surely in flight); right after a few 201 answers have
arrived the process is killed with SIGKILL (no shutdown path runs). After a
restart every record that was answered 201 exists with its original intact,
every `files` row has its file and every file its row; the temporary files
the killed uploads left behind are swept at start (`stale_temp_removed`).
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sqlite3
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import orjson

from tests.helpers.processes import free_port, start_server, wait_ready
from transcriber.db.connection import database_path
from transcriber.providers.local_files import RECORDS_DIR, TEMP_SUFFIX

AUDIO = Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "librivox_0880.mp3"
FAST_CLIENTS = 4
SLOW_CLIENTS = 4
KILL_AFTER_ACKS = 6


async def _trickle(data: bytes) -> AsyncIterator[bytes]:
    """The body 1 KiB at a time, its last KiB never sent: the kill cuts it
    whenever it comes (a loaded machine once took longer to reach the kill
    than a trickle of the whole file takes, and nothing was left to sweep)."""
    for start in range(0, len(data) - 1024, 1024):
        yield data[start:start + 1024]
        await asyncio.sleep(0.1)
    await asyncio.Event().wait()
    yield b""  # pragma: no cover - the generator is cut while it waits


async def _upload(session: aiohttp.ClientSession, url: str, body: object) -> str | None:
    async with session.post(url, data=body, headers={"X-Filename": "talk.mp3"}) as resp:
        if resp.status != 201:
            return None
        return str(orjson.loads(await resp.read())["id"])


async def _upload_until_killed(port: int, proc: subprocess.Popen[bytes], data: bytes) -> set[str]:
    """Upload from several clients; SIGKILL the server once enough 201s arrived."""
    url = f"http://127.0.0.1:{port}/app/audiorecords"
    acked: set[str] = set()
    killed = asyncio.Event()

    async def fast(session: aiohttp.ClientSession) -> None:
        while not killed.is_set():
            record_id = await _upload(session, url, data)
            if record_id is not None:
                acked.add(record_id)
            if len(acked) >= KILL_AFTER_ACKS and not killed.is_set():
                proc.send_signal(signal.SIGKILL)  # others are still in flight
                killed.set()

    async def slow(session: aiohttp.ClientSession) -> None:
        record_id = await _upload(session, url, _trickle(data))
        if record_id is not None:  # pragma: no cover - the kill comes first
            acked.add(record_id)

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        slow_tasks = [asyncio.create_task(slow(session)) for _ in range(SLOW_CLIENTS)]
        await asyncio.sleep(0.3)  # the trickling uploads have begun their files
        fast_tasks = [asyncio.create_task(fast(session)) for _ in range(FAST_CLIENTS)]
        await asyncio.wait(fast_tasks + slow_tasks, timeout=20)
        for task in fast_tasks + slow_tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, aiohttp.ClientError, OSError):
                await task
    assert killed.is_set(), "the uploads never reached the kill point"
    return acked


def _disk_files(data_dir: Path) -> set[tuple[str, str]]:
    return {(path.parent.name, path.name)
            for path in (data_dir / RECORDS_DIR).glob("*/*") if path.is_file()}


def _db_rows(data_dir: Path, query: str) -> list[sqlite3.Row]:
    db = database_path(data_dir)
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        return list(conn.execute(query))


def _events(output: str, name: str) -> list[dict[str, object]]:
    found = []
    for line in output.splitlines():
        with contextlib.suppress(ValueError):
            event = orjson.loads(line)
            if isinstance(event, dict) and event.get("event") == name:
                found.append(event)
    return found


async def test_an_acknowledged_upload_survives_sigkill_and_temporaries_are_swept(
    data_dir: Path,
) -> None:
    data = AUDIO.read_bytes()
    port = free_port()
    # Eight uploads at once by one (anonymous) user: above the default per-user cap.
    first = start_server(data_dir, port, TRANSCRIBER_SERVER_UPLOADS_PER_USER_MAX="8")
    try:
        await asyncio.to_thread(wait_ready, port, first)
        acked = await _upload_until_killed(port, first, data)
        await asyncio.to_thread(first.communicate, timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    assert first.returncode == -signal.SIGKILL
    left = {name for _, name in _disk_files(data_dir) if name.endswith(TEMP_SUFFIX)}
    assert left, "no upload was cut mid-stream; the sweep would go untested"

    port = free_port()
    second = start_server(data_dir, port)
    try:
        await asyncio.to_thread(wait_ready, port, second)
        async with aiohttp.ClientSession() as session:
            for record_id in acked:
                url = f"http://127.0.0.1:{port}/app/audiorecords/{record_id}"
                async with session.get(url) as resp:
                    assert resp.status == 200, record_id
                async with session.get(f"{url}/file", params={"copy": "original"}) as resp:
                    assert resp.status == 200, record_id
                    assert await resp.read() == data  # intact, byte for byte
    finally:
        second.send_signal(signal.SIGTERM)
        output = (await asyncio.to_thread(second.communicate, timeout=20))[0].decode()

    on_disk = _disk_files(data_dir)
    rows = {(row["record_id"], row["file_name"])
            for row in _db_rows(data_dir, "SELECT record_id, file_name FROM files")}
    assert not any(name.endswith(TEMP_SUFFIX) for _, name in on_disk)
    assert rows - on_disk == set(), "a files row without its file"
    assert on_disk - rows == set(), "a file without its row"
    records = {row["id"] for row in _db_rows(data_dir, "SELECT id FROM audio_records")}
    assert acked <= records
    for record_id, file_name in on_disk:
        assert (data_dir / RECORDS_DIR / record_id / file_name).stat().st_size == len(data)
    swept = _events(output, "stale_temp_removed")
    assert len(swept) == 1
    assert swept[0]["count"] == len(left)
    assert not any(name in output for name in left)  # counts only, never names
