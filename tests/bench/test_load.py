"""The load test at 5000 records with 1, 4 and 16 step actors, side by side.

Each run is the real pipeline (writer actor, reader pool, engine) with the
default simulated steps (0–4 ms of work, 5 % transient failures, 5 %
deferrals) and must keep every invariant. The throughput ratios show how far
the step actors scale on one writer. Run: `pytest -m bench -s tests/bench/test_load.py`;
`TRANSCRIBER_BENCH_LOAD_RECORDS` sets the number of records (default 5000).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import structlog

from transcriber.core.observability import configure_logging
from transcriber.loadtest.report import LoadReport
from transcriber.loadtest.run import LoadOptions, run_loadtest

RECORDS = int(os.environ.get("TRANSCRIBER_BENCH_LOAD_RECORDS", "5000"))
WORKERS = (1, 4, 16)


@pytest.fixture
def quiet_logging() -> Iterator[None]:
    """Errors only (as `transcriber loadtest` logs): the console must not be the bottleneck."""
    saved = structlog.get_config()
    configure_logging("ERROR")
    yield
    structlog.configure(**saved)


@pytest.mark.bench
@pytest.mark.usefixtures("quiet_logging")
async def test_load_with_1_4_16_step_actors(tmp_path: Path) -> None:
    reports: dict[int, LoadReport] = {}
    for workers in WORKERS:
        reports[workers] = await run_loadtest(
            LoadOptions(records=RECORDS, workers=workers, seed=workers, parent_dir=tmp_path,
                        timeout_seconds=900))

    print()
    print(f"load test, {RECORDS} records (simulated steps 0-4 ms, 5 % failures, 5 % deferrals)")
    print(f"  {'actors':>6} {'records/s':>10} {'claim p50/p95/p99 ms':>24} "
          f"{'writer p95 ms':>14} {'max mailbox':>12} {'total s':>8}")
    for workers, report in reports.items():
        claims = f"{report.claim_p50_ms:.2f}/{report.claim_p95_ms:.2f}/{report.claim_p99_ms:.2f}"
        print(f"  {workers:>6} {report.records_per_second:>10.1f} {claims:>24} "
              f"{report.writer_command_p95_ms:>14.2f} {report.max_mailbox_depth:>12} "
              f"{report.total_seconds:>8.2f}")
    base = reports[1].records_per_second
    for workers in WORKERS[1:]:
        print(f"  throughput {workers:>2} / 1 actor = "
              f"{reports[workers].records_per_second / base:.2f}")
    for workers, report in reports.items():
        assert report.ok, (workers, report.violations)
        assert report.done == RECORDS
