"""The load test on PostgreSQL (`transcriber loadtest --database-url URL`).

Each run works in throwaway databases made beside the one the URL names
(`CREATE DATABASE`, so the role needs CREATEDB) and dropped afterwards
unless kept: the configured archive is never touched. The baseline,
`raw_asyncpg`, runs the pipeline's own statements (the named queries, as
the service translates them) on one plain asyncpg connection, `batch`
records or cycles per transaction: what PostgreSQL and the driver allow,
with nothing of the service's actor between them.
"""

from __future__ import annotations

import time
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from transcriber.core.clock import SystemClock, stamp
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.postgres.connection import connect
from transcriber.db.postgres.dialect import translate
from transcriber.db.postgres.migrate import migrate_postgres
from transcriber.loadtest.measures import (
    OWNER,
    claim_params,
    cycle_rate,
    intake_statements,
    result_params,
)

SCRATCH_PREFIX = "transcriber_loadtest_"


def _with_database(url: str, name: str) -> str:
    parts = urlsplit(url)
    return urlunsplit(parts._replace(path="/" + name))


async def create_scratch(url: str) -> str:
    """A new, migrated database beside `url`'s; its URL."""
    name = SCRATCH_PREFIX + new_id()
    admin = await connect(url)
    try:
        await admin.execute(f'CREATE DATABASE "{name}"')
    finally:
        await admin.close()
    scratch = _with_database(url, name)
    await migrate_postgres(scratch)
    return scratch


async def drop_scratch(url: str, scratch: str) -> None:
    name = urlsplit(scratch).path.lstrip("/")
    if not name.startswith(SCRATCH_PREFIX):  # never anything but a scratch database
        raise ValueError("not a load test database")
    admin = await connect(url)
    try:
        await admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
    finally:
        await admin.close()


async def _run(conn: asyncpg.Connection, sql: str,
               params: dict[str, object]) -> list[asyncpg.Record]:
    translated = translate(sql)
    return list(await conn.fetch(translated.text, *translated.arguments(params)))


async def raw_asyncpg(url: str, records: int, cycles: int, *, batch: int) -> float:
    """Cycles per second of the plain loop on `url` (a migrated scratch database),
    `records` accepted first, inside the timed window as the real run's intake."""
    conn = await connect(url)
    clock = SystemClock()
    done = 0
    try:
        await _run(conn, q.users.INSERT, {"id": OWNER, "login": OWNER, "name": "",
                                          "email": "", "now": stamp(clock)})
        started = time.perf_counter()
        for first in range(0, records, batch):
            async with conn.transaction():
                for _ in range(min(batch, records - first)):
                    for sql, params in intake_statements(stamp(clock)):
                        await _run(conn, sql, params)
        more = True
        while more and done < cycles:
            async with conn.transaction():
                for _ in range(min(batch, cycles - done)):
                    now, params = claim_params(clock)
                    claimed = await _run(conn, q.pipeline.CLAIM, params)
                    if not claimed:
                        more = False
                        break
                    row = claimed[0]
                    state = (await _run(conn, q.pipeline.SELECT_CLAIMED, {
                        "id": row["id"], "token": row["acquisition_id"]}))[0]
                    advance, event = result_params(row["id"], row["acquisition_id"],
                                                   state["state"], now)
                    await _run(conn, q.pipeline.ADVANCE, advance)
                    await _run(conn, q.pipeline.INSERT_EVENT, event)
                    done += 1
        seconds = time.perf_counter() - started
    finally:
        await conn.close()
    return cycle_rate(done, seconds)
