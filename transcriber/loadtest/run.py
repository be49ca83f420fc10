"""`transcriber loadtest`: the real pipeline under load, on a throwaway archive.

The real writer actor, reader pool and pipeline engine (K step actors) run on
a fresh temporary data folder (never the configured archive; removed
afterwards unless kept). The steps are simulated (`loadtest.simulated.SimulatedStep`):
a short random duration, then a transient failure, a deferral or an advance,
so retries and deferrals happen on every run. N records enter through the
real `AcceptRecord` command (a fictitious original file; no audio is read)
from a few concurrent "doors" while the actors already work.

When every record is done (or halted, or the time is up) the invariants are
read back from the database: every record done exactly once, exactly one
journal row per stage change, no record held by two claimers at once (the
simulated steps count concurrent holders), attempts back at 0, no lease left.
"""

from __future__ import annotations

import asyncio
import dataclasses
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO, TypeVar

import orjson

from transcriber.core.clock import SystemClock
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.commands.users import EnsureUser
from transcriber.db.connection import database_path
from transcriber.db.engine import database_url, migrate_storage, new_readers
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage, step_names
from transcriber.followups.after import NullNotifier
from transcriber.loadtest.measures import (
    Measured,
    MeasuredPgWriter,
    MeasuredWriter,
    naive_aiosqlite,
    percentile,
    prepare,
    raw_sqlite3,
)
from transcriber.loadtest.postgres import create_scratch, drop_scratch, raw_asyncpg
from transcriber.loadtest.report import LoadReport, render
from transcriber.loadtest.simulated import Holders, SimulatedStep, simulated_steps
from transcriber.pipeline.engine import Engine
from transcriber.providers.local_files import LocalRecordFiles
from transcriber.settings import PipelineSettings, Secret, Settings

R = TypeVar("R")

LOGIN = "loadtest"
# Simultaneous intake callers, like that many uploads arriving at once.
DOORS = 4
PROGRESS_SECONDS = 0.05
# The baselines' cycles: enough for a steady rate, few enough that the slow
# one (a commit per command) stays a few seconds.
RAW_MAX_CYCLES = 20_000
NAIVE_MAX_CYCLES = 2_000


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadOptions:
    records: int = 1000
    workers: int = 8
    step_seconds: tuple[float, float] = (0.0, 0.004)
    failure_share: float = 0.05
    defer_share: float = 0.05
    defer_seconds: float = 0.05
    seed: int | None = None
    timeout_seconds: float = 300.0
    keep: bool = False
    parent_dir: Path | None = None  # where the temporary data folder is made
    baselines: bool = True  # also measure raw_sqlite3 and naive_aiosqlite (raw_asyncpg)
    # PostgreSQL: the run and its baseline work in throwaway databases made beside this one.
    database_url: str | None = None

    def check(self) -> None:
        """Raise `ValueError` for options that could never finish."""
        if self.records < 1 or self.workers < 1:
            raise ValueError("a load test needs at least one record and one worker")
        if not 0 <= self.failure_share + self.defer_share < 1:
            raise ValueError("the failure and deferral shares must leave room for success")


def load_pipeline_settings(workers: int) -> PipelineSettings:
    """Short backoff, poll and idle times so a run takes seconds; a lease far
    above any simulated step, so a takeover would mean a real fault."""
    return PipelineSettings(
        workers=workers, lease_seconds=30, backoff_base_seconds=0.02,
        backoff_cap_seconds=0.5, idle_sleep_seconds=0.02,
        poll_first_delay_seconds=0.05, poll_delay_seconds=0.05,
    )


@dataclass(slots=True, kw_only=True)
class LoadRun:
    """The parts of a running load test, for hooks that need them."""

    settings: Settings
    writer: Measured
    readers: ReaderPool
    steps: dict[str, SimulatedStep]
    holders: Holders
    record_ids: list[str] = field(default_factory=list)


RunHook = Callable[[LoadRun], Coroutine[Any, Any, None]]


async def run_loadtest(
    options: LoadOptions,
    base: Settings | None = None,
    *,
    during_run: RunHook | None = None,
    before_check: RunHook | None = None,
) -> LoadReport:
    """Run the load and check the invariants. `base` lends its storage tuning
    (connections, busy timeout, batch size), never its data folder. The hooks
    exist for tests that must show a broken invariant is caught."""
    options.check()
    base = base or Settings()
    folder = Path(tempfile.mkdtemp(prefix="transcriber-loadtest-", dir=options.parent_dir))
    scratch = (await create_scratch(options.database_url)
               if options.database_url is not None else None)
    try:
        settings = dataclasses.replace(
            base,
            storage=dataclasses.replace(
                base.storage, data_dir=folder,
                database_url=Secret(scratch) if scratch is not None else None),
            pipeline=load_pipeline_settings(options.workers),
        )
        report = await _run(settings, options, during_run, before_check)
        if options.baselines and options.database_url is not None:
            report = await _with_raw_asyncpg(report, settings, options, options.database_url)
        elif options.baselines:
            report = await _with_baselines(report, settings, options, folder)
    finally:
        if not options.keep:
            await asyncio.to_thread(shutil.rmtree, folder, ignore_errors=True)
            if scratch is not None and options.database_url is not None:
                await drop_scratch(options.database_url, scratch)
    kept = (scratch or str(folder)) if options.keep else None
    return dataclasses.replace(report, data_dir=kept)


async def _run(
    settings: Settings, options: LoadOptions,
    during_run: RunHook | None, before_check: RunHook | None,
) -> LoadReport:
    storage = settings.storage
    clock = SystemClock()
    await migrate_storage(storage, clock=clock)
    url = database_url(storage)
    died: asyncio.Future[BaseException] = asyncio.get_running_loop().create_future()

    def on_death(error: BaseException) -> None:
        if not died.done():
            died.set_result(error)

    writer: Measured = (
        MeasuredPgWriter(url, clock=clock, batch_max=storage.writer_batch_max,
                         on_death=on_death) if url is not None else
        MeasuredWriter(database_path(storage.data_dir), clock=clock,
                       busy_timeout_ms=storage.busy_timeout_ms,
                       batch_max=storage.writer_batch_max, on_death=on_death))
    readers = new_readers(storage)
    steps, holders = simulated_steps(
        seconds=options.step_seconds, failure_share=options.failure_share,
        defer_share=options.defer_share, defer_seconds=options.defer_seconds, seed=options.seed)
    await writer.start()
    try:
        await readers.open()
        run = LoadRun(settings=settings, writer=writer, readers=readers, steps=steps,
                      holders=holders)
        engine = Engine(settings=settings, clock=clock, writer=writer, readers=readers,
                        files=LocalRecordFiles(storage.data_dir), steps=steps,
                        notifier=NullNotifier)
        started = time.perf_counter()
        engine.start(on_death=on_death)
        meddler = (asyncio.create_task(during_run(run), name="loadtest-during-run")
                   if during_run else None)
        try:
            await _accept(run, options.records)
            timed_out = not await _wait_settled(readers, options.records, died,
                                                options.timeout_seconds)
            total = time.perf_counter() - started
        finally:
            if meddler is not None:
                meddler.cancel()
                await asyncio.wait({meddler})
            await engine.stop()
        if died.done():
            raise RuntimeError(f"the pipeline died: {type(died.result()).__name__}")
        if before_check is not None:
            await before_check(run)
        return await _report(run, options, total=total, timed_out=timed_out)
    finally:
        await readers.close()
        await writer.stop()


async def _with_baselines(report: LoadReport, settings: Settings, options: LoadOptions,
                          folder: Path) -> LoadReport:
    """The baselines on fresh archives of the same size beside the real run's."""
    busy = settings.storage.busy_timeout_ms
    raw_cycles = min(4 * options.records, RAW_MAX_CYCLES)
    naive_cycles = min(4 * options.records, NAIVE_MAX_CYCLES)
    raw_path = await asyncio.to_thread(prepare, folder / "raw_sqlite3", busy_timeout_ms=busy)
    raw = await asyncio.to_thread(raw_sqlite3, raw_path, -(-raw_cycles // 4), raw_cycles,
                                  batch=settings.storage.writer_batch_max, busy_timeout_ms=busy)
    naive_path = await asyncio.to_thread(prepare, folder / "naive_aiosqlite",
                                         busy_timeout_ms=busy)
    naive = await naive_aiosqlite(naive_path, -(-naive_cycles // 4), naive_cycles,
                                  workers=options.workers, busy_timeout_ms=busy)
    return dataclasses.replace(report, raw_sqlite3_cycles_per_second=raw,
                               naive_aiosqlite_cycles_per_second=naive)


async def _with_raw_asyncpg(report: LoadReport, settings: Settings, options: LoadOptions,
                            url: str) -> LoadReport:
    """PostgreSQL's baseline on a fresh scratch database of the same size."""
    cycles = min(4 * options.records, RAW_MAX_CYCLES)
    scratch = await create_scratch(url)
    try:
        raw = await raw_asyncpg(scratch, -(-cycles // 4), cycles,
                                batch=settings.storage.writer_batch_max)
    finally:
        await drop_scratch(url, scratch)
    return dataclasses.replace(report, raw_asyncpg_cycles_per_second=raw)


async def _accept(run: LoadRun, records: int) -> None:
    """N records through the real intake command, from a few doors at once."""
    owner = await run.writer.ask(EnsureUser(login=LOGIN, display_name=LOGIN))
    queue = iter(range(records))

    async def door() -> None:
        for _ in queue:
            record_id, file_id = new_id(), new_id()
            accepted = await run.writer.ask(AcceptRecord(
                record_id=record_id, owner_id=owner.id,
                original=StoredFile(id=file_id, file_name=f"{file_id}.wav", size_bytes=1,
                                    format="wav", duration_ms=1000),
                original_filename="load.wav", duration_ms=1000,
            ))
            run.record_ids.append(accepted.record_id)

    await asyncio.gather(*(door() for _ in range(DOORS)))


async def _wait_settled(
    readers: ReaderPool, records: int, died: asyncio.Future[BaseException], limit: float
) -> bool:
    """Until every record is done or halted; False when the time ran out."""
    deadline = time.perf_counter() + limit
    while time.perf_counter() < deadline and not died.done():
        row = await readers.fetch_one(q.loadtest.RECORD_TOTALS, {"done": Stage.DONE.value})
        assert row is not None
        if row["done"] + row["halted"] >= records:
            return True
        await asyncio.sleep(PROGRESS_SECONDS)
    return False


async def _report(run: LoadRun, options: LoadOptions, *, total: float,
                  timed_out: bool) -> LoadReport:
    totals = await run.readers.fetch_one(q.loadtest.RECORD_TOTALS, {"done": Stage.DONE.value})
    assert totals is not None
    violations = await _violations(run, options.records, totals)
    if run.writer.stale_writes_applied:
        violations.append(f"stale writes: {run.writer.stale_writes_applied} holder write(s) "
                          "landed for a token no longer current")
    if timed_out:
        violations.insert(0, f"timed out after {options.timeout_seconds:g} s")
    writer = run.writer
    return LoadReport(
        records=options.records, workers=options.workers, done=totals["done"],
        halted=totals["halted"],
        retries=sum(step.failures for step in run.steps.values()),
        deferrals=sum(step.deferrals for step in run.steps.values()),
        records_per_second=round(totals["done"] / total, 1) if total > 0 else 0.0,
        claim_p50_ms=_ms(percentile(writer.claim_seconds, 0.50)),
        claim_p95_ms=_ms(percentile(writer.claim_seconds, 0.95)),
        claim_p99_ms=_ms(percentile(writer.claim_seconds, 0.99)),
        writer_command_p95_ms=_ms(percentile(writer.command_seconds, 0.95)),
        max_mailbox_depth=writer.max_depth, total_seconds=round(total, 3),
        timed_out=timed_out, violations=tuple(violations), data_dir=None,
        lost_records=len(run.record_ids) - totals["done"] - totals["halted"],
        stale_writes_applied=writer.stale_writes_applied,
        cycles_per_second=round(len(writer.claim_seconds) / total, 1) if total > 0 else 0.0,
    )


def _ms(seconds: float) -> float:
    return round(seconds * 1000, 3)


async def _violations(run: LoadRun, records: int, totals: Any) -> list[str]:
    """Every broken invariant, in words (empty: all hold)."""
    found: list[str] = []
    if totals["records"] != records:
        found.append(f"records: {totals['records']} stored, {records} accepted")
    if totals["done"] != records:
        found.append(f"done: {records - totals['done']} record(s) not done "
                     f"({totals['halted']} halted)")
    if totals["attempts_left"]:
        found.append(f"attempts: {totals['attempts_left']} record(s) with attempts not back at 0")
    if totals["leases_left"]:
        found.append(f"leases: {totals['leases_left']} record(s) still hold a claim or lease")
    found.extend(await _journal_violations(run))
    holders = run.holders
    if holders.overlaps or holders.max_per_record > 1:
        found.append(f"exclusive claims: {holders.overlaps} step run(s) started while another "
                     f"holder ran the same record (max {holders.max_per_record} at once)")
    twice = sum(1 for step in run.steps.values() for n in step.advanced.values() if n > 1)
    if twice:
        found.append(f"exclusive claims: {twice} step(s) advanced the same record more than once")
    return found


async def _journal_violations(run: LoadRun) -> list[str]:
    """Exactly one journal row per stage change: each step once, in stage order."""
    expected = [("pipeline", step, "done") for step in step_names()]
    journal: dict[str, list[tuple[str, str, str]]] = {}
    for row in await run.readers.fetch_all(q.loadtest.JOURNAL):
        journal.setdefault(row["record_id"], []).append(
            (row["origin"], row["step"], row["outcome"]))
    stored = {row["id"] for row in await run.readers.fetch_all(q.loadtest.RECORD_IDS)}
    wrong = sum(1 for record_id in stored if journal.get(record_id) != expected)
    if wrong:
        return [f"journal: {wrong} record(s) without exactly one row per stage change"]
    return []


# -- the command -----------------------------------------------------------------


async def loadtest_command(
    options: LoadOptions,
    base: Settings | None = None,
    *,
    as_json: bool = False,
    out: TextIO | None = None,
    during_run: RunHook | None = None,
    before_check: RunHook | None = None,
) -> int:
    """Run, print the report (text or one JSON object); exit 1 when an invariant broke."""
    out = out or sys.stdout
    try:
        options.check()
    except ValueError as exc:
        print(f"transcriber loadtest: {exc}", file=sys.stderr)
        return 2
    report = await run_loadtest(options, base, during_run=during_run, before_check=before_check)
    if as_json:
        out.write(orjson.dumps(report.as_dict()).decode() + "\n")
    else:
        out.write(render(report) + "\n")
    return 0 if report.ok else 1
