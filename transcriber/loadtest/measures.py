"""What `transcriber loadtest` measures: the real writer, and two baselines beside it.

`MeasuredWriter` is the real writer actor timing every command from its
caller's side and counting stale holder writes that landed.

The two baselines both run the pipeline's own claim, read and result statements (the named
queries `pipeline.CLAIM`, `SELECT_CLAIMED`, `ADVANCE`, `INSERT_EVENT`) on a
fresh archive built by the migrations, with the same durability (WAL,
`synchronous=FULL`). Like the real run, whose clock includes its intake
(`AcceptRecord` from four doors while the actors work), each baseline first
accepts its records through the intake statements (`files.INSERT`,
`records.INSERT_RECORD`) inside its timed window; without that, the
baselines were timed on less work than the real run:

On PostgreSQL (`--database-url`) the baseline is `raw_asyncpg`
(`transcriber.loadtest.postgres`): the same loop on one plain asyncpg connection.

- `raw_sqlite3`: one plain sqlite3 loop in a thread, `batch` records or
  cycles per transaction (what the hardware and SQLite allow: the ceiling);
- `naive_aiosqlite`: four intake callers, then `workers` concurrent callers,
  on one aiosqlite connection, every statement awaited one by one, one
  transaction per command (intake, claim+read, result+journal), as an actor
  without group commit and without the inline connection would do.

A cycle is one claim and its result write, like a step run of the pipeline.
"""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path
from typing import Any, TypeVar

from transcriber.core.clock import SystemClock, stamp
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import Claim, Claimed
from transcriber.db.connection import database_path, open_sync, open_writer
from transcriber.db.migrate import migrate
from transcriber.db.postgres.writer import PgWriter
from transcriber.db.writer import Command, Envelope, Writer
from transcriber.domain.stages import Stage, spec_of

R = TypeVar("R")

OWNER = "baseline"
# Concurrent intake callers of the naive baseline, as the real run's doors.
INTAKE_DOORS = 4


class Measured(Writer):
    """The real writer, timing every command from its enqueueing to its answer.

    It also counts holder writes that landed although a newer claim of the
    record had already been answered when they were sent (a stale token that
    the P3 condition should have refused): `stale_writes_applied`.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.command_seconds: list[float] = []
        self.claim_seconds: list[float] = []
        self.max_depth = 0
        self.current_token: dict[str, str] = {}
        self.stale_writes_applied = 0
        self._sent_under: dict[asyncio.Future[Any], str | None] = {}

    def submit(self, command: Command[R]) -> asyncio.Future[R]:
        # `Writer.submit` enqueues at once: the depth it leaves is this + 1.
        self.max_depth = max(self.max_depth, self.mailbox_depth + 1)
        reply = super().submit(command)
        token = getattr(command, "token", None)
        if token is not None:
            # The record's latest answered claim token when this holder write was sent.
            self._sent_under[reply] = self.current_token.get(getattr(command, "record_id", ""))
        return reply

    def _answer(self, envelope: Envelope[Any], ok: bool, value: Any) -> None:
        # Read here, as the writer answers (no callback per command on the loop).
        reply, command = envelope.reply, envelope.command
        held = self._sent_under.pop(reply, None)
        super()._answer(envelope, ok, value)
        if not ok or reply.cancelled():
            return  # a lost claim (ClaimLost) or a failure: nothing landed
        seconds = time.perf_counter() - envelope.enqueued_at
        self.command_seconds.append(seconds)
        if isinstance(command, Claim) and isinstance(value, Claimed):
            self.claim_seconds.append(seconds)
            self.current_token[value.record_id] = value.token
        elif held is not None and getattr(command, "token", None) != held:
            # A holder write that returned (a lost claim raises ClaimLost) landed.
            self.stale_writes_applied += 1


class MeasuredWriter(Measured):
    """The SQLite writer, measured."""


class MeasuredPgWriter(Measured, PgWriter):
    """The PostgreSQL writer, measured."""


def percentile(samples: list[float], share: float) -> float:
    """Nearest-rank percentile (0 when there are no samples)."""
    if not samples:
        return 0.0
    ordered = sorted(samples)
    rank = max(math.ceil(share * len(ordered)), 1)
    return ordered[rank - 1]


def prepare(folder: Path, *, busy_timeout_ms: int) -> Path:
    """A migrated archive with the baselines' owner and no record yet."""
    migrate(folder, busy_timeout_ms=busy_timeout_ms)
    path = database_path(folder)
    conn = open_sync(path, busy_timeout_ms=busy_timeout_ms)
    conn.execute(q.users.INSERT, {"id": OWNER, "login": OWNER, "name": "", "email": "",
                                  "now": stamp(SystemClock())})
    conn.close()
    return path


def intake_statements(now: str) -> list[tuple[str, dict[str, object]]]:
    """The statements of one `AcceptRecord`: the original's `files` row, then the record."""
    record_id, file_id = new_id(), new_id()
    return [
        (q.files.INSERT, {
            "id": file_id, "owner_id": OWNER, "record_id": record_id, "file_name": "x.wav",
            "size_bytes": 1, "format": "wav", "duration_ms": 1, "now": now}),
        (q.records.INSERT_RECORD, {
            "id": record_id, "owner_id": OWNER, "title": "", "original_filename": "x.wav",
            "duration_ms": 1, "size_bytes": 1, "source": "http", "tg_chat_id": None,
            "tg_message_id": None, "state": Stage.UPLOADED.value,
            "original_file_id": file_id, "now": now}),
    ]


def claim_params(clock: SystemClock) -> tuple[str, dict[str, object]]:
    now = stamp(clock)
    params: dict[str, object] = {"token": new_id(), "now": now}
    for stage in q.pipeline.CLAIMABLE_STAGES:
        params[q.pipeline.lease_param(stage)] = stamp(clock, plus_seconds=60)
    return now, params


def result_params(record_id: str, token: str, stage: str,
                   now: str) -> tuple[dict[str, object], dict[str, object]]:
    spec = spec_of(Stage(stage))
    assert spec.next_stage is not None
    assert spec.step is not None
    advance: dict[str, object] = {
        "id": record_id, "token": token, "stage": stage, "next_stage": spec.next_stage.value,
        "now": now}
    event: dict[str, object] = {
        "id": new_id(), "record_id": record_id, "origin": "pipeline", "step": spec.step,
        "outcome": "done", "outcome_text": None, "duration_ms": 0, "now": now,
        "actor_id": None}
    return advance, event


def raw_sqlite3(path: Path, records: int, cycles: int, *, batch: int,
                busy_timeout_ms: int) -> float:
    """Cycles per second of the plain loop, `records` accepted first (blocking:
    run it in a thread)."""
    conn = open_sync(path, busy_timeout_ms=busy_timeout_ms)
    clock = SystemClock()
    done = 0
    started = time.perf_counter()
    try:
        # The intake is timed, as the real run's is: `batch` records per transaction.
        for first in range(0, records, batch):
            conn.execute(q.control.BEGIN_IMMEDIATE)
            for _ in range(min(batch, records - first)):
                for sql, params in intake_statements(stamp(clock)):
                    conn.execute(sql, params)
            conn.execute(q.control.COMMIT)
        while done < cycles:
            conn.execute(q.control.BEGIN_IMMEDIATE)
            for _ in range(min(batch, cycles - done)):
                now, params = claim_params(clock)
                row = conn.execute(q.pipeline.CLAIM, params).fetchone()
                if row is None:
                    break
                state = conn.execute(q.pipeline.SELECT_CLAIMED, {
                    "id": row["id"], "token": row["acquisition_id"]}).fetchone()
                advance, event = result_params(row["id"], row["acquisition_id"],
                                                state["state"], now)
                conn.execute(q.pipeline.ADVANCE, advance)
                conn.execute(q.pipeline.INSERT_EVENT, event)
                done += 1
            else:
                conn.execute(q.control.COMMIT)
                continue
            conn.execute(q.control.COMMIT)
            break  # no work left
    finally:
        conn.close()
    return cycle_rate(done, time.perf_counter() - started)


async def naive_aiosqlite(path: Path, records: int, cycles: int, *, workers: int,
                          busy_timeout_ms: int) -> float:
    """Cycles per second of concurrent callers awaiting each statement, after
    `records` accepted one transaction each (timed, as the real run's intake)."""
    conn = await open_writer(path, busy_timeout_ms=busy_timeout_ms)
    clock = SystemClock()
    one_at_a_time = asyncio.Lock()  # one connection: its transactions cannot interleave
    done = 0

    async def command(statements: list[tuple[str, dict[str, object]]]) -> None:
        async with one_at_a_time:
            await conn.execute(q.control.BEGIN_IMMEDIATE)
            for sql, params in statements:
                await conn.execute(sql, params)
            await conn.execute(q.control.COMMIT)

    async def caller() -> None:
        nonlocal done
        while done < cycles:
            now, params = claim_params(clock)
            async with one_at_a_time:
                await conn.execute(q.control.BEGIN_IMMEDIATE)
                cursor = await conn.execute(q.pipeline.CLAIM, params)
                row = await cursor.fetchone()
                state = None
                if row is not None:
                    cursor = await conn.execute(q.pipeline.SELECT_CLAIMED, {
                        "id": row["id"], "token": row["acquisition_id"]})
                    state = await cursor.fetchone()
                await conn.execute(q.control.COMMIT)
            if row is None or state is None:
                return
            advance, event = result_params(row["id"], row["acquisition_id"], state["state"],
                                            now)
            await command([(q.pipeline.ADVANCE, advance), (q.pipeline.INSERT_EVENT, event)])
            done += 1

    async def door(count: int) -> None:
        for _ in range(count):
            await command(intake_statements(stamp(clock)))

    started = time.perf_counter()
    try:
        share, extra = divmod(records, INTAKE_DOORS)
        await asyncio.gather(*(door(share + (n < extra)) for n in range(INTAKE_DOORS)))
        await asyncio.gather(*(caller() for _ in range(workers)))
    finally:
        await conn.close()
    return cycle_rate(done, time.perf_counter() - started)


def cycle_rate(cycles: int, seconds: float) -> float:
    return round(cycles / seconds, 1) if seconds > 0 else 0.0
