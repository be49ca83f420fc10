"""P4 + P16 with a real process: a holder killed with SIGKILL mid-step.

`transcriber serve` runs the pipeline with fake steps (through the test entry
point `tests/serve_with_fakes.py`) and a short lease. The first process is
killed while its step runs; after a restart the record is claimed again only
once the dead holder's lease has expired, the killed attempt was spent, and
the record reaches `done`. Real (short) times: this is a real process.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
import urllib.request
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from tests.helpers.factories import make_record, make_user
from tests.helpers.processes import free_port, start_server, wait_ready
from transcriber.core.clock import SystemClock, format_time
from transcriber.db.connection import database_path
from transcriber.db.migrate import migrate
from transcriber.db.writer import Writer

LEASE_SECONDS = 4


def _row(db: Path, record_id: str) -> sqlite3.Row:
    with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
        conn.row_factory = sqlite3.Row
        row: sqlite3.Row | None = conn.execute(
            "SELECT state, attempts, acquisition_id, acquire_expires_at, halted_at "
            "FROM audio_records WHERE id = ?", (record_id,)).fetchone()
    assert row is not None
    return row


def _wait_for(
    probe: Callable[[], sqlite3.Row | None], what: str, timeout: float = 15.0
) -> sqlite3.Row:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        row = probe()
        if row is not None:
            return row
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _when(db: Path, record_id: str, test: Callable[[sqlite3.Row], bool]) -> sqlite3.Row | None:
    row = _row(db, record_id)
    return row if test(row) else None


async def _accept_one_record(data_dir: Path) -> str:
    migrate(data_dir)
    writer = Writer(database_path(data_dir), clock=SystemClock())
    await writer.start()
    try:
        return await make_record(writer, await make_user(writer))
    finally:
        await writer.stop()


def test_p16_a_holder_killed_mid_step_returns_its_record_after_the_lease(
    data_dir: Path,
) -> None:
    record_id = asyncio.run(_accept_one_record(data_dir))
    db = database_path(data_dir)
    common = {
        "TRANSCRIBER_PIPELINE_WORKERS": "1",
        "TRANSCRIBER_PIPELINE_LEASE_SECONDS": str(LEASE_SECONDS),
        "TRANSCRIBER_PIPELINE_IDLE_SLEEP_SECONDS": "0.05",
    }

    port = free_port()
    first = start_server(data_dir, port, fake_steps="normalize=60",
                         **common)
    try:
        wait_ready(port, first)
        held = _wait_for(
            lambda: _when(db, record_id, lambda r: r["acquisition_id"] is not None),
            "the first claim")
        assert (held["state"], held["attempts"]) == ("uploaded", 1)
        time.sleep(LEASE_SECONDS / 3 + 0.5)  # let one heartbeat land
        first.kill()  # SIGKILL: no shutdown path runs
        first.communicate(timeout=10)
    finally:
        if first.poll() is None:
            first.kill()
            first.communicate()
    dead = _row(db, record_id)
    assert dead["acquisition_id"] == held["acquisition_id"]
    assert dead["acquire_expires_at"] >= held["acquire_expires_at"]  # renewed, not released

    port = free_port()
    second = start_server(data_dir, port, fake_steps="normalize=1",
                          **common)
    try:
        observed_before_expiry = 0

        def reclaimed() -> sqlite3.Row | None:
            nonlocal observed_before_expiry
            now = format_time(datetime.now(UTC))
            row = _row(db, record_id)
            if row["acquisition_id"] == dead["acquisition_id"]:
                if now < dead["acquire_expires_at"]:
                    observed_before_expiry += 1
                return None
            # Claimed again: never while the dead holder's lease was running.
            assert now >= dead["acquire_expires_at"]
            return row

        again = _wait_for(reclaimed, "the claim after the lease expired")
        assert again["state"] == "uploaded"
        assert again["attempts"] == 2  # the killed attempt was spent
        assert observed_before_expiry > 0  # the record really stayed hidden for a while
        done = _wait_for(lambda: _when(db, record_id, lambda r: r["state"] == "done"), "done")
        assert (done["attempts"], done["halted_at"], done["acquisition_id"]) == (0, None, None)
        with contextlib.closing(sqlite3.connect(f"{db.as_uri()}?mode=ro", uri=True)) as conn:
            steps = [s for (s,) in conn.execute(
                "SELECT step FROM record_events WHERE record_id = ? ORDER BY created_at, id",
                (record_id,))]
        assert steps == ["normalize", "submit", "poll", "finish"]
        metrics = _metrics(port)
        assert "transcriber_lease_expiries_total 1.0" in metrics
    finally:
        if second.poll() is None:
            second.terminate()
        second.communicate(timeout=20)


def _metrics(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        return str(response.read().decode())
