"""Claim+advance cycles per second, three ways, side by side in one run.

1. the writer actor, 64 concurrent callers (group commit);
2. raw `sqlite3` in one thread, 64 cycles per transaction (the ceiling);
3. naive aiosqlite, 64 concurrent callers, one await and one commit per statement.

Same schema (migrations), same statements (the named queries), same durability
(WAL, synchronous=FULL). Run: `sh .ci/dev bench` (or `pytest -m bench -s tests/bench`).
`TRANSCRIBER_BENCH_CYCLES` sets the number of cycles per mode (default 3000).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from pathlib import Path

import pytest

from transcriber.core.clock import SystemClock, stamp
from transcriber.core.errors import NoWork
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import Advance, Claim
from transcriber.db.connection import database_path, open_sync, open_writer
from transcriber.db.migrate import migrate
from transcriber.db.writer import Writer
from transcriber.domain.stages import Stage, claimable_stages, spec_of

CALLERS = 64
CYCLES = int(os.environ.get("TRANSCRIBER_BENCH_CYCLES", "3000"))
LEASES = dict.fromkeys(claimable_stages(), 60.0)


def _prepare(folder: Path, records: int) -> Path:
    folder.mkdir()
    migrate(folder)
    path = database_path(folder)
    conn = open_sync(path, busy_timeout_ms=5000)
    now = stamp(SystemClock())
    conn.execute("BEGIN")
    conn.execute(q.users.INSERT, {"id": "u", "login": "bench", "name": "", "email": "",
                                  "now": now})
    for _ in range(records):
        record_id, file_id = new_id(), new_id()
        conn.execute(q.files.INSERT, {
            "id": file_id, "owner_id": "u", "record_id": record_id, "file_name": "x.wav",
            "size_bytes": 1, "format": "wav", "duration_ms": 1, "now": now})
        conn.execute(q.records.INSERT_RECORD, {
            "id": record_id, "owner_id": "u", "title": "", "original_filename": "x.wav",
            "duration_ms": 1, "size_bytes": 1, "source": "http", "tg_chat_id": None,
            "tg_message_id": None, "state": "uploaded", "original_file_id": file_id,
            "now": now})
    conn.execute("COMMIT")
    conn.close()
    return path


def _claim_params(token: str) -> tuple[str, dict[str, object]]:
    clock = SystemClock()
    now = stamp(clock)
    params: dict[str, object] = {"token": token, "now": now}
    for stage in q.pipeline.CLAIMABLE_STAGES:
        params[q.pipeline.lease_param(stage)] = stamp(clock, plus_seconds=60)
    return now, params


def _advance_params(record_id: str, token: str, stage: str, now: str) -> dict[str, object]:
    spec = spec_of(Stage(stage))
    assert spec.next_stage is not None
    return {"id": record_id, "token": token, "stage": stage,
            "next_stage": spec.next_stage.value, "now": now}


def _event_params(record_id: str, step: str, now: str) -> dict[str, object]:
    return {"id": new_id(), "record_id": record_id, "origin": "pipeline", "step": step,
            "outcome": "done", "outcome_text": None, "duration_ms": 1, "now": now,
            "actor_id": None}


async def _writer_actor(path: Path) -> int:
    writer = Writer(path, clock=SystemClock(), batch_max=CALLERS)
    await writer.start()
    done = 0

    async def caller() -> None:
        nonlocal done
        while done < CYCLES:
            claimed = await writer.ask(Claim(leases=LEASES))
            if isinstance(claimed, NoWork):
                return
            step = spec_of(claimed.stage).step
            assert step is not None
            await writer.ask(Advance(record_id=claimed.record_id, token=claimed.token,
                                     step=step, duration_ms=1))
            done += 1

    try:
        await asyncio.gather(*(caller() for _ in range(CALLERS)))
    finally:
        await writer.stop()
    return done


def _raw_batched(path: Path) -> int:
    conn = open_sync(path, busy_timeout_ms=5000)
    done = 0
    while done < CYCLES:
        conn.execute("BEGIN IMMEDIATE")
        for _ in range(CALLERS):
            now, params = _claim_params(new_id())
            row = conn.execute(q.pipeline.CLAIM, params).fetchone()
            if row is None:
                break
            state = conn.execute(q.pipeline.SELECT_CLAIMED,
                                 {"id": row["id"], "token": row["acquisition_id"]}).fetchone()
            step = spec_of(Stage(state["state"])).step
            assert step is not None
            conn.execute(q.pipeline.ADVANCE,
                         _advance_params(row["id"], row["acquisition_id"], state["state"], now))
            conn.execute(q.pipeline.INSERT_EVENT, _event_params(row["id"], step, now))
            done += 1
        conn.execute("COMMIT")
    conn.close()
    return done


async def _naive_aiosqlite(path: Path) -> int:
    conn = await open_writer(path, busy_timeout_ms=5000)  # autocommit: a commit per statement
    done = 0

    async def caller() -> None:
        nonlocal done
        while done < CYCLES:
            now, params = _claim_params(new_id())
            async with conn.execute(q.pipeline.CLAIM, params) as cur:
                row = await cur.fetchone()
            if row is None:
                return
            async with conn.execute(q.pipeline.SELECT_CLAIMED,
                                    {"id": row["id"], "token": row["acquisition_id"]}) as cur:
                state = await cur.fetchone()
            assert state is not None
            step = spec_of(Stage(state["state"])).step
            assert step is not None
            await conn.execute(q.pipeline.ADVANCE, _advance_params(
                row["id"], row["acquisition_id"], state["state"], now))
            await conn.execute(q.pipeline.INSERT_EVENT, _event_params(row["id"], step, now))
            done += 1

    try:
        await asyncio.gather(*(caller() for _ in range(CALLERS)))
    finally:
        await conn.close()
    return done


def _rate(cycles: int, seconds: float) -> float:
    return cycles / seconds if seconds > 0 else float("inf")


@pytest.mark.bench
async def test_writer_actor_vs_raw_sqlite3_vs_naive_aiosqlite(tmp_path: Path) -> None:
    records = CYCLES  # every record is claimed at most 4 times; plenty of work
    paths = {name: _prepare(tmp_path / name, records) for name in ("actor", "raw", "naive")}

    start = time.perf_counter()
    actor_cycles = await _writer_actor(paths["actor"])
    actor_rate = _rate(actor_cycles, time.perf_counter() - start)

    start = time.perf_counter()
    raw_cycles = await asyncio.to_thread(_raw_batched, paths["raw"])
    raw_rate = _rate(raw_cycles, time.perf_counter() - start)

    start = time.perf_counter()
    naive_cycles = await _naive_aiosqlite(paths["naive"])
    naive_rate = _rate(naive_cycles, time.perf_counter() - start)

    print()
    print(f"claim+advance cycles ({CYCLES} per mode, {CALLERS} concurrent callers, "
          "WAL + synchronous=FULL)")
    print(f"  writer actor (group commit): {actor_rate:10.0f} cycles/s")
    print(f"  raw sqlite3, batched thread: {raw_rate:10.0f} cycles/s")
    print(f"  naive aiosqlite:             {naive_rate:10.0f} cycles/s")
    print(f"  actor / raw   = {actor_rate / raw_rate:.2f}")
    print(f"  actor / naive = {actor_rate / naive_rate:.2f}")
    assert actor_cycles >= CYCLES
    assert raw_cycles >= CYCLES
    assert naive_cycles >= CYCLES
    with sqlite3.connect(paths["actor"]) as check:
        events = check.execute("SELECT count(*) FROM record_events").fetchone()[0]
    assert events >= CYCLES
