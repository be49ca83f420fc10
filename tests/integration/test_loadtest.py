"""`transcriber loadtest`: a small real run, and proof that its checks can fail.

The broken cases corrupt the database (or the leases, mid-run) through the
real writer, the way a faulty pipeline would leave it; each must be reported
by its own invariant, and only by it.
"""

from __future__ import annotations

import asyncio
import dataclasses
import io
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import asyncpg
import orjson
import pytest
import structlog

from transcriber.cli import main
from transcriber.db import queries as q
from transcriber.db.connection import open_sync
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.stages import Stage
from transcriber.loadtest.measures import naive_aiosqlite, prepare, raw_sqlite3
from transcriber.loadtest.run import LoadOptions, LoadRun, loadtest_command, run_loadtest

SMALL = LoadOptions(records=40, workers=2, seed=7)


@dataclass(frozen=True, slots=True, kw_only=True)
class Corrupt(Command[int]):
    """One raw statement, as a faulty writer command would run it."""

    name: ClassVar[str] = "corrupt"
    sql: str
    params: dict[str, object]

    async def execute(self, ctx: WriteContext) -> int:
        cursor = await ctx.conn.execute(self.sql, self.params)
        return int(cursor.rowcount)


@pytest.fixture
def restore_logging() -> Iterator[None]:
    """`main` points structlog at the captured stderr; put the old set-up back."""
    saved = structlog.get_config()
    yield
    structlog.configure(**saved)


@pytest.fixture
def temp_parent(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where the load test makes its temporary data folder, so a test can look."""
    parent = tmp_path / "tmp"
    parent.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(parent))
    return parent


@pytest.mark.usefixtures("restore_logging")
def test_loadtest_json_reports_a_clean_run_and_leaves_no_folder(
    temp_parent: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["loadtest", "--records", "200", "--workers", "4", "--json", "--seed", "1"])
    printed = capsys.readouterr().out.strip().splitlines()
    assert len(printed) == 1  # one JSON object, nothing else on stdout
    report = orjson.loads(printed[0])
    assert code == 0, report["violations"]
    assert report["ok"] is True
    assert report["violations"] == []
    assert (report["records"], report["workers"], report["done"], report["halted"]) == (
        200, 4, 200, 0)
    # The defaults exercise retries and deferrals (5 % each of at least 800 step runs).
    assert report["retries"] > 0
    assert report["deferrals"] > 0
    assert report["records_per_second"] > 0
    assert 0 < report["claim_p50_ms"] <= report["claim_p95_ms"] <= report["claim_p99_ms"]
    assert report["writer_command_p95_ms"] > 0
    # Step actors and intake doors are the writer's only callers.
    assert 1 <= report["max_mailbox_depth"] <= 4 + 4
    assert report["total_seconds"] > 0
    assert report["timed_out"] is False
    assert (report["lost_records"], report["stale_writes_applied"]) == (0, 0)
    # The baselines ran in this run, on their own archives, beside the real path.
    assert report["cycles_per_second"] > 0
    for baseline in ("raw_sqlite3", "naive_aiosqlite"):
        rate = report[f"{baseline}_cycles_per_second"]
        assert rate > 0
        assert report[f"ratio_vs_{baseline}"] == pytest.approx(
            report["cycles_per_second"] / rate, rel=0.01, abs=0.001)
    assert list(temp_parent.iterdir()) == []  # the throwaway archive is gone


def test_loadtest_keep_leaves_the_archive_and_prints_text(temp_parent: Path) -> None:
    out = io.StringIO()
    code = asyncio.run(loadtest_command(
        LoadOptions(records=20, workers=2, keep=True, parent_dir=temp_parent), out=out))
    assert code == 0, out.getvalue()
    kept = list(temp_parent.iterdir())
    assert len(kept) == 1
    assert (kept[0] / "transcriber.sqlite3").is_file()
    text = out.getvalue()
    assert "invariants: all hold" in text
    assert str(kept[0]) in text


def _first_record(sql: str) -> Callable[[LoadRun], Corrupt]:
    return lambda run: Corrupt(sql=sql, params={"id": sorted(run.record_ids)[0]})


CORRUPTIONS = {
    "journal": _first_record(
        "INSERT INTO record_events (id, record_id, origin, step, outcome, created_at) "
        "SELECT id || 'x', record_id, origin, step, outcome, created_at FROM record_events "
        "WHERE record_id = :id LIMIT 1"),
    "done": _first_record("UPDATE audio_records SET state = 'transcribed' WHERE id = :id"),
    "attempts": _first_record("UPDATE audio_records SET attempts = 2 WHERE id = :id"),
    "leases": _first_record(
        "UPDATE audio_records SET acquisition_id = 'stolen', "
        "acquire_expires_at = '2999-01-01T00:00:00Z' WHERE id = :id"),
}


@pytest.mark.parametrize("invariant", sorted(CORRUPTIONS))
async def test_loadtest_catches_a_corrupted_row(invariant: str, temp_parent: Path) -> None:
    async def corrupt(run: LoadRun) -> None:
        assert await run.writer.ask(CORRUPTIONS[invariant](run)) == 1

    report = await run_loadtest(SMALL, before_check=corrupt)
    assert not report.ok
    assert [v.split(":")[0] for v in report.violations] == [invariant], report.violations
    assert "1 record(s)" in report.violations[0]
    assert report.lost_records == (1 if invariant == "done" else 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class ForgedWrite(Command[None]):
    """A holder write whose token condition is broken: it lands (raises no ClaimLost)."""

    name: ClassVar[str] = "forged_write"
    record_id: str
    token: str

    async def execute(self, ctx: WriteContext) -> None:
        return None


async def test_loadtest_counts_a_stale_write_that_landed(temp_parent: Path) -> None:
    async def write_with_an_old_token(run: LoadRun) -> None:
        for _ in range(5000):  # until the first claim is answered
            if run.writer.current_token:
                break
            await asyncio.sleep(0.001)
        record_id = next(iter(run.writer.current_token))
        await run.writer.ask(ForgedWrite(record_id=record_id, token="old"))

    report = await run_loadtest(dataclasses.replace(SMALL, baselines=False),
                                during_run=write_with_an_old_token)
    assert report.stale_writes_applied == 1
    assert [v.split(":")[0] for v in report.violations] == ["stale writes"], report.violations
    assert report.raw_sqlite3_cycles_per_second is None


async def test_loadtest_catches_two_holders_of_one_record(temp_parent: Path) -> None:
    """Leases that do not protect (here: expired under running steps, as a claim
    ignoring them would) let a second actor take a record mid-step."""

    async def expire_leases(run: LoadRun) -> None:
        # Mid-step, until a second holder was seen (whether the next claim
        # lands on an expired record depends on which step ends first), and a
        # few times only: each takeover spends an attempt, and the records
        # must still finish (no halt) so only this invariant breaks.
        for _ in range(40):
            if run.holders.overlaps:
                return
            await asyncio.sleep(0.03)
            await run.writer.ask(Corrupt(
                sql="UPDATE audio_records SET acquire_expires_at = '2000-01-01T00:00:00Z' "
                    "WHERE acquisition_id IS NOT NULL", params={}))

    out = io.StringIO()
    options = LoadOptions(records=30, workers=4, step_seconds=(0.02, 0.04), failure_share=0.0,
                          defer_share=0.0, seed=3)
    code = await loadtest_command(options, as_json=True, out=out, during_run=expire_leases)
    report = orjson.loads(out.getvalue())
    assert code == 1
    assert report["ok"] is False
    assert report["violations"]
    assert all(v.startswith("exclusive claims:") for v in report["violations"])
    # Only the holder's token writes (P3): the journal and the records stay right.
    assert report["done"] == 30



@pytest.mark.parametrize("baseline", ["raw_sqlite3", "naive_aiosqlite"])
async def test_baselines_accept_their_records_then_run_every_cycle(
    baseline: str, tmp_path: Path
) -> None:
    """Both baselines do the real run's work: the intake (inside their timed
    window) and then every claim and result of every record, to `done`."""
    path = prepare(tmp_path / baseline, busy_timeout_ms=1000)
    if baseline == "raw_sqlite3":
        rate = await asyncio.to_thread(raw_sqlite3, path, 7, 28, batch=3, busy_timeout_ms=1000)
    else:
        rate = await naive_aiosqlite(path, 7, 28, workers=3, busy_timeout_ms=1000)
    assert rate > 0
    conn = open_sync(path, busy_timeout_ms=1000)
    try:
        totals = conn.execute(q.loadtest.RECORD_TOTALS, {"done": Stage.DONE.value}).fetchone()
        events = conn.execute("SELECT count(*) FROM record_events").fetchone()[0]
        files = conn.execute("SELECT count(*) FROM files").fetchone()[0]
    finally:
        conn.close()
    assert (totals["records"], totals["done"], totals["leases_left"]) == (7, 7, 0)
    assert (events, files) == (28, 7)


async def test_the_load_test_on_postgresql_holds_every_invariant(postgres_url: str) -> None:
    """`transcriber loadtest --database-url`: the same run and invariants on PostgreSQL,
    in throwaway databases beside the one named (dropped afterwards), with the
    raw_asyncpg baseline measured in the same run."""
    out = io.StringIO()
    code = await loadtest_command(
        LoadOptions(records=150, workers=4, seed=7, database_url=postgres_url),
        as_json=True, out=out)
    report = orjson.loads(out.getvalue())
    assert code == 0, report["violations"]
    assert report["done"] == 150
    assert (report["lost_records"], report["stale_writes_applied"]) == (0, 0)
    assert report["retries"] > 0  # the transient failures happened and were retried
    assert report["raw_asyncpg_cycles_per_second"] > 0
    assert report["ratio_vs_raw_asyncpg"] is not None
    assert report["raw_sqlite3_cycles_per_second"] is None
    conn = await asyncpg.connect(postgres_url)
    try:
        left = await conn.fetchval(
            "SELECT count(*) FROM pg_database WHERE datname LIKE 'transcriber_loadtest_%'")
    finally:
        await conn.close()
    assert left == 0
