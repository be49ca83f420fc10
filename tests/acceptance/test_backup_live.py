"""Back up a live `serve` under upload and pipeline load; restore; verify; search.

A real server (real steps and ffmpeg, the fake recognizer) takes uploads from
several clients the whole time while `transcriber backup` runs in another
process. The backup holds exactly the records of its snapshot: more are
uploaded after it, none of them is in it. `transcriber restore` puts it into
a new folder, `transcriber verify` finds it complete and consistent, every
file is byte for byte the original, the transcripts are the server's, and a
server on the restored folder finds them by search.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.helpers.archive import raw
from tests.helpers.processes import free_port, start_server, wait_ready
from transcriber.db.connection import database_path
from transcriber.maintenance.backup import MANIFEST_NAME

pytestmark = pytest.mark.slow

AUDIO = Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "librivox_0880.mp3"
CLIENTS = 3
DONE_BEFORE_BACKUP = 3
WAIT_SECONDS = 60.0
RECORDS = "SELECT id, state, title, original_filename, size_bytes FROM audio_records ORDER BY id"
TRANSCRIPTS = "SELECT record_id, contents FROM texts WHERE kind = 'transcript' ORDER BY record_id"
FILES = "SELECT record_id, file_name, size_bytes FROM files ORDER BY record_id, file_name"


def _cli(data_dir: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir)}
    return subprocess.run([sys.executable, "-m", "transcriber.cli", *argv], env=env,
                          capture_output=True, text=True, timeout=120, check=False)


def _start_with_fake_recognizer(data_dir: Path, port: int) -> subprocess.Popen[bytes]:
    """A real serve with the real steps (ffmpeg) and the fake recognizer."""
    env = {**os.environ, "TRANSCRIBER_STORAGE_DATA_DIR": str(data_dir),
           "TRANSCRIBER_SERVER_PORT": str(port), "TRANSCRIBER_PIPELINE_WORKERS": "2",
           "TRANSCRIBER_SERVER_UPLOADS_PER_USER_MAX": "8",
           "TRANSCRIBER_STORAGE_MIN_FREE_BYTES": "0"}
    return subprocess.Popen([sys.executable, "-m", "tests.serve_with_fakes",
                             "--fake-recognizer"], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


def _count(data_dir: Path, sql: str) -> int:
    return len(raw(database_path(data_dir), sql))


async def _keep_uploading(port: int, data: bytes, stop: asyncio.Event) -> list[str]:
    url = f"http://127.0.0.1:{port}/app/audiorecords"
    acked: list[str] = []

    async def client(session: aiohttp.ClientSession, n: int) -> None:
        while not stop.is_set():
            headers = {"X-Filename": f"talk {n}.mp3"}
            async with session.post(url, data=data, headers=headers) as resp:
                assert resp.status == 201, await resp.text()
                acked.append(str(orjson.loads(await resp.read())["id"]))

    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
        await asyncio.gather(*(client(session, n) for n in range(CLIENTS)))
    return acked


async def _wait_for(condition: Callable[[], bool]) -> None:
    deadline = asyncio.get_running_loop().time() + WAIT_SECONDS
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "timed out"
        await asyncio.sleep(0.1)


async def test_backup_of_a_live_server_restores_complete_and_consistent(tmp_path: Path) -> None:
    data_dir, dest, restored = tmp_path / "data", tmp_path / "backup", tmp_path / "restored"
    data_dir.mkdir()
    port = free_port()
    server = _start_with_fake_recognizer(data_dir, port)
    stop = asyncio.Event()
    try:
        await asyncio.to_thread(wait_ready, port, server)
        uploads = asyncio.create_task(_keep_uploading(port, AUDIO.read_bytes(), stop))
        await _wait_for(lambda: _count(data_dir, TRANSCRIPTS) >= DONE_BEFORE_BACKUP)
        made = await asyncio.to_thread(_cli, data_dir, "backup", str(dest), "--json")
        at_backup = _count(data_dir, RECORDS)
        await _wait_for(lambda: _count(data_dir, RECORDS) >= at_backup + CLIENTS)
        stop.set()
        acked = await uploads
        await _wait_for(lambda: _count(data_dir, TRANSCRIPTS) == len(acked))
    finally:
        stop.set()
        server.terminate()
        output = (await asyncio.to_thread(server.communicate, timeout=30))[0]
    assert server.returncode == 0, output.decode()[-3000:]
    assert made.returncode == 0, made.stderr
    manifest = orjson.loads(made.stdout)
    assert manifest == orjson.loads((dest / MANIFEST_NAME).read_bytes())

    snapshot = raw(dest / "transcriber.sqlite3", RECORDS)
    # Uploads and the pipeline went on: the snapshot is a strict part of the archive.
    assert DONE_BEFORE_BACKUP <= manifest["transcripts"] <= manifest["records"] == len(snapshot)
    assert len(snapshot) < len(acked)
    assert {row["id"] for row in snapshot} < set(acked)
    assert manifest["files"] == _count(dest, FILES)
    assert manifest["missing"] == []
    assert not list((dest / "records").glob("*/*.part"))

    restore = await asyncio.to_thread(_cli, restored, "restore", str(dest))
    assert restore.returncode == 0, restore.stderr
    verify = await asyncio.to_thread(_cli, restored, "verify")
    assert verify.returncode == 0, verify.stderr
    assert "complete and consistent" in verify.stdout
    live_db, copy_db = database_path(data_dir), database_path(restored)
    assert [tuple(r) for r in raw(copy_db, RECORDS)] == [tuple(r) for r in snapshot]
    live_transcripts = {r["record_id"]: r["contents"] for r in raw(live_db, TRANSCRIPTS)}
    copy_transcripts = raw(copy_db, TRANSCRIPTS)
    assert len(copy_transcripts) == manifest["transcripts"]
    for row in copy_transcripts:
        assert live_transcripts[row["record_id"]] == row["contents"]
    for row in raw(copy_db, FILES):
        relative = Path("records") / row["record_id"] / row["file_name"]
        assert (restored / relative).read_bytes() == (data_dir / relative).read_bytes()

    # Search works on the restored archive: every transcribed record is found.
    port = free_port()
    again = start_server(restored, port)
    try:
        await asyncio.to_thread(wait_ready, port, again)
        async with aiohttp.ClientSession() as session, session.get(
                f"http://127.0.0.1:{port}/app/audiorecords",
                params={"q": "fake recognizer", "limit": "100"}) as resp:
            assert resp.status == 200
            found = {item["id"] for item in orjson.loads(await resp.read())["items"]}
    finally:
        again.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            await asyncio.to_thread(again.communicate, timeout=30)
    assert found == {row["record_id"] for row in copy_transcripts}
