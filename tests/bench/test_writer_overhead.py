"""What the writer path costs besides the SQL: two numbers behind docs/operations.md.

1. A command that does nothing, sent through `Writer.ask` by 64 callers: the
   process CPU per command (mailbox, envelope, future, batch, answer, metrics,
   plus one COMMIT per batch).
2. The intake statements (`files.INSERT`, `records.INSERT_RECORD` with its search
   triggers) in transactions of four records, bare or each in a savepoint, with
   the statement journal in a temporary file (`temp_store` DEFAULT) or in memory
   (MEMORY, what every write connection now sets): µs per record, best of five.

Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_writer_overhead.py`.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest

from transcriber.core.clock import SystemClock, stamp
from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import migrate
from transcriber.db.writer import Command, WriteContext, Writer
from transcriber.loadtest.measures import intake_statements, prepare

CALLERS = 64
COMMANDS = 40_000
RECORDS = 1000
ROUNDS = 5


@dataclass(frozen=True, slots=True, kw_only=True)
class Nothing(Command[int]):
    name: ClassVar[str] = "bench_nothing"
    savepoint: ClassVar[bool] = False
    n: int

    async def execute(self, ctx: WriteContext) -> int:
        return self.n


@pytest.mark.bench
async def test_cpu_per_command_through_the_writer(tmp_path: Path) -> None:
    migrate(tmp_path)
    writer = Writer(database_path(tmp_path), clock=SystemClock())
    await writer.start()

    async def caller() -> None:
        for n in range(COMMANDS // CALLERS):
            assert await writer.ask(Nothing(n=n)) == n

    started, cpu = time.perf_counter(), time.process_time()
    try:
        await asyncio.gather(*(caller() for _ in range(CALLERS)))
    finally:
        await writer.stop()
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    print(f"\n{COMMANDS} empty commands from {CALLERS} callers: "
          f"{cpu / COMMANDS * 1e6:.1f} µs CPU, {wall / COMMANDS * 1e6:.1f} µs wall per command")


def _intake_us(folder: Path, *, savepoint: bool, temp_store: str) -> float:
    conn = open_sync(prepare(folder, busy_timeout_ms=5000), busy_timeout_ms=5000)
    conn.execute(f"PRAGMA temp_store = {temp_store}")
    clock, spent = SystemClock(), 0.0
    try:
        for _ in range(0, RECORDS, 4):
            conn.execute(q.control.BEGIN_IMMEDIATE)
            started = time.perf_counter()
            for _ in range(4):
                if savepoint:
                    conn.execute(q.control.SAVEPOINT)
                for sql, params in intake_statements(stamp(clock)):
                    conn.execute(sql, params)
                if savepoint:
                    conn.execute(q.control.RELEASE_SAVEPOINT)
            spent += time.perf_counter() - started
            conn.execute(q.control.COMMIT)
    finally:
        conn.close()
    return spent / RECORDS * 1e6


@pytest.mark.bench
def test_intake_in_a_savepoint_with_the_statement_journal_on_disk_or_in_memory(
    tmp_path: Path,
) -> None:
    modes = [(savepoint, store) for store in ("DEFAULT", "MEMORY") for savepoint in (False, True)]
    best = dict.fromkeys(modes, float("inf"))
    for round_ in range(ROUNDS):
        for savepoint, store in modes:  # alternating, so a busy moment hits every mode
            folder = tmp_path / f"{round_}-{store}-{savepoint}"
            best[savepoint, store] = min(best[savepoint, store],
                                         _intake_us(folder, savepoint=savepoint, temp_store=store))
    print(f"\nintake of {RECORDS} records, 4 per transaction, µs per record (best of {ROUNDS}):")
    for (savepoint, store), us in best.items():
        print(f"  temp_store {store:<8} {'in a savepoint' if savepoint else 'bare':<15} {us:7.1f}")
    # Printed, not asserted: on a shared machine the difference (temporary-file
    # writes that stay in the page cache) is within the noise of single runs;
    # the syscalls behind it are counted in docs/operations.md.
    assert all(us > 0 for us in best.values())
