"""Past one machine: one `web` and two `worker` processes that share only PostgreSQL
and a bucket (each its own data folder and cache), one worker killed with SIGKILL
in the middle of a step.

Twenty recordings go in through `web`; the workers take them with the real steps
(ffmpeg) and the fake recognizer. Once the first worker has taken a few records,
it is killed right after it claims the next one: that record's lease expires and
the other worker takes it over. Then every record is done with its transcript, no
record holds a result twice (one transcript; one original, one normalized copy and
one saved answer, each in the bucket), and the journal is exact: one row per stage change, each step
once, in stage order.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
from pathlib import Path

import aiohttp
import orjson
import pytest

from tests.helpers.audio import FIXTURES
from tests.helpers.database import TestDatabase
from tests.helpers.processes import free_port, start_server_with_fake_recognizer, wait_ready
from tests.helpers.s3 import Bucket
from transcriber.domain.stages import step_names

pytestmark = pytest.mark.slow

AUDIO = FIXTURES / "librivox_0880.mp3"
SAID = "hello from the fake recognizer"
RECORDS = 20
LEASE_SECONDS = 3
CLAIMS_BEFORE_KILL = 3


class Claims:
    """The records a worker claims, read from its log (JSON lines) as it runs."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.ids: list[str] = []
        self.changed = threading.Condition()
        self.lines: list[bytes] = []
        assert process.stdout is not None
        self._stdout = process.stdout
        self._thread = threading.Thread(target=self._read, name="worker-log", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Once its process ended: the rest read, the pipe closed."""
        self._thread.join(timeout=10)
        self._stdout.close()

    def _read(self) -> None:
        for line in self._stdout:
            self.lines.append(line)
            try:
                event = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            if isinstance(event, dict) and event.get("event") == "claim_step":
                with self.changed:
                    self.ids.append(str(event["record_id"]))
                    self.changed.notify_all()

    def wait_for(self, count: int, timeout: float) -> str:
        """The id of the `count`-th claim, once it is made."""
        with self.changed:
            assert self.changed.wait_for(lambda: len(self.ids) >= count, timeout), (
                b"".join(self.lines[-40:]).decode(errors="replace"))
            return self.ids[count - 1]


async def _upload(session: aiohttp.ClientSession, base: str) -> str:
    async with session.post(f"{base}/app/audiorecords", data=AUDIO.read_bytes(),
                            headers={"X-Filename": AUDIO.name}) as up:
        assert up.status == 201, await up.text()
        return up.headers["Location"]


async def _all_done(session: aiohttp.ClientSession, base: str, ids: list[str],
                    seconds: float) -> None:
    """Until every record is done (one page of the archive per second: within the rate
    limit a person's browser has)."""
    deadline = asyncio.get_running_loop().time() + seconds
    while True:
        async with session.get(f"{base}/app/audiorecords?limit=50") as response:
            assert response.status == 200, await response.text()
            items = (await response.json())["items"]
        assert all(item["halt"] is None for item in items), items
        if {item["id"] for item in items if item["stage"] == "done"} >= set(ids):
            return
        assert asyncio.get_running_loop().time() < deadline, (
            "not every record got done", sorted(item["stage"] for item in items))
        await asyncio.sleep(1)


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()


async def test_two_workers_share_postgresql_and_a_bucket_and_survive_a_kill(
    tmp_path: Path, postgres_url: str, s3_bucket: Bucket,
) -> None:
    shared = {
        "TRANSCRIBER_STORAGE_DATABASE_URL": postgres_url,
        "TRANSCRIBER_STORAGE_FILES": "s3",
        "TRANSCRIBER_S3_ENDPOINT_URL": s3_bucket.endpoint,
        "TRANSCRIBER_S3_BUCKET": s3_bucket.name,
        "TRANSCRIBER_S3_REGION": "us-east-1",
        "TRANSCRIBER_S3_PREFIX": s3_bucket.prefix,
        "TRANSCRIBER_S3_ACCESS_KEY_ID": "test",
        "TRANSCRIBER_S3_SECRET_ACCESS_KEY": "test",
        "TRANSCRIBER_STORAGE_MIN_FREE_BYTES": "0",
        "TRANSCRIBER_RECOGNIZER_DIARIZATION": "off",
        "TRANSCRIBER_DESCRIBER_PROVIDER": "off",
        "TRANSCRIBER_PIPELINE_LEASE_SECONDS": str(LEASE_SECONDS),
    }
    folders = {name: tmp_path / name for name in ("web", "a", "b")}
    for folder in folders.values():
        folder.mkdir()
    ports = {name: free_port() for name in folders}
    base = f"http://127.0.0.1:{ports['web']}"
    web = start_server_with_fake_recognizer(folders["web"], ports["web"], role="web", **shared)
    workers: dict[str, subprocess.Popen[bytes]] = {}
    # Every log read as it comes (a full pipe would stop its process).
    logs = [Claims(web)]
    try:
        await asyncio.to_thread(wait_ready, ports["web"], web)
        async with aiohttp.ClientSession() as session:
            cards = [await _upload(session, base) for _ in range(RECORDS)]
            ids = [card.rsplit("/", 1)[-1] for card in cards]
            for name in ("a", "b"):
                workers[name] = start_server_with_fake_recognizer(
                    folders[name], ports[name], role="worker", **shared,
                    TRANSCRIBER_PIPELINE_WORKERS="2", TRANSCRIBER_LOGGING_FORMAT="json",
                    # The claims are logged at DEBUG: worker a's tell the test when to kill.
                    TRANSCRIBER_LOGGING_LEVEL="DEBUG" if name == "a" else "INFO",
                    XDG_CACHE_HOME=str(folders[name] / "cache"))
            claims = Claims(workers["a"])
            logs += [claims, Claims(workers["b"])]
            # Killed right after it claimed its next record: in the middle of that step.
            killed = await asyncio.to_thread(claims.wait_for, CLAIMS_BEFORE_KILL + 1, 120)
            os.kill(workers["a"].pid, signal.SIGKILL)
            workers["a"].wait(timeout=30)
            await _all_done(session, base, ids, seconds=180)
            for card_url in cards:
                async with session.get(f"{base}{card_url}/transcript") as text:
                    assert (await text.text()).strip() == SAID
            async with session.get(f"http://127.0.0.1:{ports['b']}/metrics") as metrics:
                exposition = await metrics.text()
    finally:
        for process in (*workers.values(), web):
            _stop(process)
        for log in logs:
            log.close()

    database = TestDatabase(folders["web"], postgres_url)
    # The killed worker's record was taken over after its lease expired, by the other.
    expiries = [line for line in exposition.splitlines()
                if line.startswith("transcriber_lease_expiries_total")]
    assert expiries, exposition
    assert float(expiries[0].split()[-1]) >= 1, expiries
    assert database.scalar("SELECT state FROM audio_records WHERE id = :id",
                           {"id": killed}) == "done"
    # Exactly one journal row per stage change, each step once, in stage order.
    journal: dict[str, list[tuple[str, str, str]]] = {}
    for record_id, origin, step, outcome in database.rows(
            "SELECT record_id, origin, step, outcome FROM record_events "
            "ORDER BY record_id, created_at, id"):
        journal.setdefault(record_id, []).append((origin, step, outcome))
    expected = [("pipeline", step, "done") for step in step_names()]
    assert {record_id: journal.get(record_id) for record_id in ids} == dict.fromkeys(ids, expected)
    # No result twice: one transcript, one original, one normalized copy and one saved
    # recognizer answer per record, each of them in the bucket.
    assert database.rows(
        "SELECT record_id FROM texts WHERE kind = 'transcript' GROUP BY record_id "
        "HAVING count(*) <> 1") == []
    files = database.rows("SELECT record_id, id, format FROM files")
    by_record: dict[str, list[str]] = {}
    for record_id, _, kind in files:
        by_record.setdefault(record_id, []).append(kind)
    assert {record_id: sorted(kinds) for record_id, kinds in by_record.items()} == {
        record_id: ["json", "mp3", "ogg"] for record_id in ids}
    stored = {key.rsplit("/", 1)[-1].split(".", 1)[0] for key in s3_bucket.record_keys()}
    assert {file_id for _, file_id, _ in files} <= stored
    assert database.scalar(
        "SELECT count(*) FROM audio_records WHERE acquisition_id IS NOT NULL "
        "OR attempts <> 0") == 0
