"""The load test's report: what one run measured, and its text rendering."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True, kw_only=True)
class LoadReport:
    records: int
    workers: int
    done: int
    halted: int
    retries: int
    deferrals: int
    records_per_second: float
    claim_p50_ms: float
    claim_p95_ms: float
    claim_p99_ms: float
    writer_command_p95_ms: float
    max_mailbox_depth: int
    total_seconds: float
    timed_out: bool
    violations: tuple[str, ...]
    data_dir: str | None  # only when kept
    lost_records: int  # accepted but neither done nor halted
    stale_writes_applied: int
    # claim + result cycles per second: the real writer path and the baselines
    # (loadtest_baselines) on the same schema and durability, in this run.
    cycles_per_second: float
    raw_sqlite3_cycles_per_second: float | None = None
    naive_aiosqlite_cycles_per_second: float | None = None
    raw_asyncpg_cycles_per_second: float | None = None  # on PostgreSQL

    @property
    def ratio_vs_raw_sqlite3(self) -> float | None:
        return _ratio(self.cycles_per_second, self.raw_sqlite3_cycles_per_second)

    @property
    def ratio_vs_naive_aiosqlite(self) -> float | None:
        return _ratio(self.cycles_per_second, self.naive_aiosqlite_cycles_per_second)

    @property
    def ratio_vs_raw_asyncpg(self) -> float | None:
        return _ratio(self.cycles_per_second, self.raw_asyncpg_cycles_per_second)

    @property
    def ok(self) -> bool:
        return not self.violations

    def as_dict(self) -> dict[str, Any]:
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        fields["violations"] = list(self.violations)
        return {**fields, "ratio_vs_raw_sqlite3": self.ratio_vs_raw_sqlite3,
                "ratio_vs_naive_aiosqlite": self.ratio_vs_naive_aiosqlite,
                "ratio_vs_raw_asyncpg": self.ratio_vs_raw_asyncpg, "ok": self.ok}


def _ratio(mine: float, base: float | None) -> float | None:
    return round(mine / base, 3) if base else None


def render(report: LoadReport) -> str:
    lines = [
        f"load test: {report.records} records, {report.workers} step actors",
        f"  done / halted          {report.done} / {report.halted}",
        f"  retries / deferrals    {report.retries} / {report.deferrals}",
        f"  throughput             {report.records_per_second:.1f} records/s",
        f"  claim latency          p50 {report.claim_p50_ms:.2f} ms, "
        f"p95 {report.claim_p95_ms:.2f} ms, p99 {report.claim_p99_ms:.2f} ms",
        f"  writer command p95     {report.writer_command_p95_ms:.2f} ms",
        f"  max writer mailbox     {report.max_mailbox_depth}",
        f"  total time             {report.total_seconds:.2f} s",
        f"  claim+result cycles    {report.cycles_per_second:.0f}/s",
        f"  lost / stale applied   {report.lost_records} / {report.stale_writes_applied}",
    ]
    if report.raw_sqlite3_cycles_per_second is not None:
        lines.append(f"  raw_sqlite3            {report.raw_sqlite3_cycles_per_second:.0f}"
                     f" cycles/s (ratio {report.ratio_vs_raw_sqlite3})")
    if report.naive_aiosqlite_cycles_per_second is not None:
        lines.append(f"  naive_aiosqlite        {report.naive_aiosqlite_cycles_per_second:.0f}"
                     f" cycles/s (ratio {report.ratio_vs_naive_aiosqlite})")
    if report.raw_asyncpg_cycles_per_second is not None:
        lines.append(f"  raw_asyncpg            {report.raw_asyncpg_cycles_per_second:.0f}"
                     f" cycles/s (ratio {report.ratio_vs_raw_asyncpg})")
    if report.data_dir:
        lines.append(f"  data folder kept       {report.data_dir}")
    if report.ok:
        lines.append("invariants: all hold")
    else:
        lines.append("INVARIANTS BROKEN:")
        lines.extend(f"  - {violation}" for violation in report.violations)
    return "\n".join(lines)
