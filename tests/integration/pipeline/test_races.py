"""Races: concurrent claimers, stale holders, heartbeats and time limits, and
cancellation at every awkward moment."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path

import asyncpg
import pytest

from tests.helpers.factories import make_record
from tests.helpers.pipeline import (
    MakeActor,
    claim,
    claim_ok,
    events_of,
    runs,
    state_of,
    until,
)
from transcriber.core.clock import format_time
from transcriber.core.errors import NoWork
from transcriber.db import queries as q
from transcriber.db.commands.pipeline import (
    Advance,
    Claimed,
    Defer,
    Fail,
    Halt,
    ReleaseOnShutdown,
    RenewLease,
)
from transcriber.db.commands.users import User
from transcriber.db.connection import open_sync
from transcriber.db.postgres.dialect import translate
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import HaltReason
from transcriber.pipeline.actor import StepActor
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.steps import Behaviour, FakeStep

TRIALS = 1000
CLAIMERS = 50


async def test_p02_fifty_concurrent_claimers_one_winner_a_thousand_times(
    writer: Writer, settings: Settings, user: User, readers: ReaderPool,
) -> None:
    """50 claims race for one eligible record, 1000 times: exactly one wins each
    time, 49 hear "no work", and no attempt is counted twice."""
    record_id = await make_record(writer, user)
    winners_per_trial: Counter[int] = Counter()
    for _ in range(TRIALS):
        answers = await asyncio.gather(*(claim(writer, settings) for _ in range(CLAIMERS)))
        winners = [a for a in answers if isinstance(a, Claimed)]
        winners_per_trial[len(winners)] += 1
        assert sum(isinstance(a, NoWork) for a in answers) == CLAIMERS - len(winners)
        for winner in winners:
            assert winner.attempts == 1
            await writer.ask(Defer(record_id=record_id, token=winner.token, delay_seconds=0))
    assert winners_per_trial == Counter({1: TRIALS})
    row = await state_of(readers, record_id)
    assert (row["attempts"], row["acquisition_id"]) == (0, None)


async def test_p03_stale_holder_changes_nothing_a_thousand_times(
    writer: Writer, settings: Settings, user: User, clock: FakeClock, readers: ReaderPool,
) -> None:
    """Claim A; A's lease expires; claim B. A's late result, heartbeat, deferral,
    failure, halt and shutdown release all change nothing; B's write lands.
    1000 trials."""
    record_id = await make_record(writer, user)
    lease = settings.pipeline.lease_seconds
    outcomes: Counter[str] = Counter()
    for trial in range(TRIALS):
        a = await claim_ok(writer, settings)
        clock.advance(lease)
        b = await claim_ok(writer, settings)
        assert b.lease_taken_over
        held_by_b = tuple(await state_of(readers, record_id))
        late = await asyncio.gather(  # each must raise ClaimLost
            writer.ask(RenewLease(record_id=record_id, token=a.token, lease_seconds=lease)),
            writer.ask(Advance(record_id=record_id, token=a.token, step="normalize")),
            writer.ask(Defer(record_id=record_id, token=a.token, delay_seconds=999)),
            writer.ask(Fail(record_id=record_id, token=a.token, delay_seconds=999,
                            error_text="late")),
            writer.ask(Halt(record_id=record_id, token=a.token, reason=HaltReason.STUCK,
                            error_text="late")),
            writer.ask(ReleaseOnShutdown(record_id=record_id, token=a.token)),
            return_exceptions=True,
        )
        outcomes.update(type(answer).__name__ for answer in late)
        row = await state_of(readers, record_id)
        assert tuple(row) == held_by_b, trial  # not one column changed
        assert (row["acquisition_id"], row["acquire_expires_at"], row["attempts"],
                row["state"], row["halted_at"]) == \
            (b.token, b.lease_expires_at, 2, "uploaded", None), trial
        await writer.ask(Defer(record_id=record_id, token=b.token, delay_seconds=0))
    assert outcomes == Counter({"ClaimLost": 6 * TRIALS})
    assert await events_of(readers, record_id) == []
    # And the holder's own write does land.
    final = await claim_ok(writer, settings)
    await writer.ask(Advance(record_id=record_id, token=final.token, step="normalize"))


# -- heartbeat and time limit (P4) -----------------------------------------------------


async def _beat(clock: FakeClock, seconds: float, run: asyncio.Task[object]) -> None:
    """Move the clock, then wait until the running step's supervisor has acted:
    it either armed its next timer (step + timer wait on the clock) or ended."""
    clock.advance(seconds)
    await until(lambda: run.done() or clock.sleepers == 2)


async def test_p04_a_running_step_renews_its_lease_every_third_of_it(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    readers: ReaderPool, steps: dict[str, FakeStep],
) -> None:
    record_id = await make_record(writer, user)
    lease = settings.pipeline.lease_seconds
    steps["normalize"].then(Behaviour(seconds=lease * 5))
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)
    for _ in range(14):  # beats at lease/3 up to lease·14/3 < lease·5
        await _beat(clock, lease / 3, run)
        row = await state_of(readers, record_id)
        assert row["acquire_expires_at"] == format_time(clock.now() + timedelta(seconds=lease))
        # Nobody else can take the record while its holder is alive.
        assert isinstance(await claim(writer, settings), NoWork)
    clock.advance(lease)
    report = await run
    assert report.outcome == "success"


async def test_p04_a_step_past_its_time_limit_is_cancelled_and_counts_as_a_failure(
    actor: StepActor, writer: Writer, settings: Settings, user: User, clock: FakeClock,
    readers: ReaderPool, steps: dict[str, FakeStep],
) -> None:
    record_id = await make_record(writer, user)
    steps["normalize"].time_limit = 90
    steps["normalize"].then(Behaviour(seconds=10_000))
    before = runs("uploaded", "failure")
    run = asyncio.create_task(actor.run_once())
    await until(lambda: clock.sleepers == 2)
    elapsed = 0
    while not run.done():
        await _beat(clock, 10, run)
        elapsed += 10
    report = await run
    assert (report.outcome, elapsed) == ("failure", 90)
    assert steps["normalize"].cancelled == 1
    assert runs("uploaded", "failure") == before + 1
    row = await state_of(readers, record_id)
    assert row["error_text"] == "StepTimedOut: step ran longer than 90 s"
    assert (row["attempts"], row["acquisition_id"], row["halted_at"]) == (1, None, None)
    assert row["delay_time"] is not None


async def test_p04_default_time_limit_is_the_setting(
    make_actor: MakeActor, writer: Writer, settings: Settings, user: User,
    clock: FakeClock, steps: dict[str, FakeStep],
) -> None:
    await make_record(writer, user)
    steps["normalize"].then(Behaviour(seconds=10**6))
    run = asyncio.create_task(make_actor().run_once())
    await until(lambda: clock.sleepers == 2)
    beat = settings.pipeline.lease_seconds / 3
    elapsed = 0.0
    while not run.done():
        await _beat(clock, beat, run)
        elapsed += beat
    report = await run
    assert report.outcome == "failure"
    assert elapsed == settings.pipeline.step_time_limit_minutes * 60


# -- cancellation ---------------------------------------------------------------------------


async def test_p16_a_claim_answered_while_stopping_is_released(
    make_actor: MakeActor, writer: Writer, settings: Settings, user: User,
    readers: ReaderPool,
) -> None:
    """The actor is cancelled while its claim is in the writer's mailbox: the
    claim still lands, and is released with its attempt given back."""
    record_id = await make_record(writer, user)
    actor = make_actor()
    run = asyncio.create_task(actor.run_once())
    await asyncio.sleep(0)  # the claim is enqueued, not yet answered
    run.cancel()
    try:
        await run
    except asyncio.CancelledError:
        pass
    else:
        raise AssertionError("the run was not cancelled")

    async def released() -> bool:
        row = await state_of(readers, record_id)
        return row["acquisition_id"] is None and row["attempts"] == 0

    await until(released)
    assert isinstance(await claim(writer, settings), Claimed)


async def test_p02_the_claim_statement_is_atomic_even_across_connections(
    writer: Writer, settings: Settings, user: User, engine: str,
    request: pytest.FixtureRequest,
) -> None:
    """The single writer serialises claims, but the statement does not rely on it:
    8 separate connections in 8 threads race the raw claim 200 times; exactly
    one wins each time."""
    record_id = await make_record(writer, user)
    claimers, trials = 8, 200
    params = {"now": "2026-01-01T00:00:00Z",
              **{q.pipeline.lease_param(s): "2026-01-01T00:01:00Z"
                 for s in q.pipeline.CLAIMABLE_STAGES}}

    def race() -> list[int]:
        connections = [open_sync(migrated, busy_timeout_ms=10_000) for _ in range(claimers)]
        barrier = threading.Barrier(claimers)
        winners: list[int] = []

        def one(conn: sqlite3.Connection, token: str) -> bool:
            barrier.wait()
            return conn.execute(q.pipeline.CLAIM, {**params, "token": token}).fetchone() \
                is not None

        try:
            with ThreadPoolExecutor(claimers) as pool:
                for trial in range(trials):
                    results = list(pool.map(one, connections,
                                            [f"t{trial}-{n}" for n in range(claimers)]))
                    winners.append(sum(results))
                    connections[0].execute(
                        "UPDATE audio_records SET acquisition_id = NULL, "
                        "acquire_expires_at = NULL WHERE id = :id", {"id": record_id})
        finally:
            for conn in connections:
                conn.close()
        return winners

    if engine == "postgresql":
        winners = await _race_postgres(request.getfixturevalue("pg_migrated"), record_id,
                                       params, claimers=claimers, trials=trials)
    else:
        migrated: Path = request.getfixturevalue("migrated")
        winners = await asyncio.to_thread(race)
    assert winners == [1] * trials


async def _race_postgres(url: str, record_id: str, params: dict[str, str], *,
                         claimers: int, trials: int) -> list[int]:
    """The PostgreSQL claim (FOR UPDATE SKIP LOCKED) from separate connections, each
    its own autocommitted statement, all sent at once."""
    claim_sql = translate(q.pipeline.CLAIM)
    connections = [await asyncpg.connect(url) for _ in range(claimers)]
    winners: list[int] = []
    try:
        for trial in range(trials):
            rows = await asyncio.gather(*(
                conn.fetchrow(claim_sql.text, *claim_sql.arguments(
                    {**params, "token": f"t{trial}-{n}"}))
                for n, conn in enumerate(connections)))
            winners.append(sum(row is not None for row in rows))
            await connections[0].execute(
                "UPDATE audio_records SET acquisition_id = NULL, acquire_expires_at = NULL "
                "WHERE id = $1", record_id)
    finally:
        for conn in connections:
            await conn.close()
    return winners
