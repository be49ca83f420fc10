"""Every named query runs on PostgreSQL, and none scans a table that grows with the
archive at 200 000 records (the counterpart of test_query_plans.py on SQLite).

Each named statement of `transcriber.db.queries` (walked, not listed) is
translated as the service translates it and prepared on a migrated database:
a statement that does not translate fails here, not in use. Then each is
planned as a generic plan (what a prepared statement runs for any values) on
an archive of 200 000 records, analyzed: a sequential scan of a growing table
fails, unless the SQLite test names it as an exception too. Queue tables that
are empty here are also planned with sequential scans priced out, so a
statement with no index to serve it shows its scan whatever the statistics say.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import asyncpg
import pytest

from tests.helpers.postgres import PostgresServer
from tests.helpers.query_plans import EXCEPTIONS, GROWING, named_statements
from transcriber.db import queries as q
from transcriber.db.postgres.connection import connect
from transcriber.db.postgres.dialect import translate
from transcriber.db.postgres.migrate import migrate_postgres
from transcriber.db.postgres.queries import SQLITE_ONLY

RECORDS = 200_000
OWNERS = 200  # a team's archive: each person's share is small, as the service assumes

# The archive, written in SQL for speed: what the SQLite test writes through the
# named queries, 200 000 times over. The search index's row triggers (one statement per
# record and per text) are off while it is written (`session_replication_role`, this
# session only) and its rows are written in one statement instead, as the triggers and
# the refresh would leave them (one row per record, fresh, with its terms): the same
# tables, rows and indexes, in a third of the time (docs/development.md).
_POPULATE = """
SET session_replication_role = replica;
INSERT INTO users (id, provider_login, created_at, updated_at)
SELECT 'u' || n, 'l' || n, '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
FROM generate_series(0, OWNERS - 1) AS n;
INSERT INTO files (id, owner_id, record_id, file_name, size_bytes, format, duration_ms, created_at)
SELECT 'f' || n, 'u' || (n % OWNERS), 'r' || lpad(n::text, 6, '0'), 'a.wav', 1, 'wav', 1,
       '2026-01-01T00:00:00Z'
FROM generate_series(0, RECORDS_LAST) AS n;
INSERT INTO audio_records (id, owner_id, title, original_filename, duration_ms, size_bytes,
                           source, state, state_entered_at, original_file_id,
                           created_at, updated_at)
SELECT 'r' || lpad(n::text, 6, '0'), 'u' || (n % OWNERS), 'call ' || n, 'a.wav', 1, 1, 'http',
       (ARRAY['uploaded', 'normalized', 'submitted', 'transcribed', 'done', 'done', 'done'])
           [n % 7 + 1],
       '2026-01-01T00:00:00Z', 'f' || n,
       to_char(timestamp '2026-01-01' + n * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS"Z"'),
       '2026-01-01T00:00:00Z'
FROM generate_series(0, RECORDS_LAST) AS n;
INSERT INTO texts (id, record_id, kind, contents, created_at, updated_at)
SELECT 't' || n, 'r' || lpad(n::text, 6, '0'), 'transcript', 'words of call ' || n,
       '2026-01-01T00:00:00Z', '2026-01-01T00:00:00Z'
FROM generate_series(0, RECORDS_LAST) AS n;
INSERT INTO structures (id, record_id, version, contents, created_at, updated_at)
SELECT 's' || n, 'r' || lpad(n::text, 6, '0'), 1, '[]', '2026-01-01T00:00:00Z',
       '2026-01-01T00:00:00Z'
FROM generate_series(0, RECORDS_LAST) AS n;
INSERT INTO recognitions (id, record_id, provider, created_at, updated_at)
SELECT 'g' || n, 'r' || lpad(n::text, 6, '0'), 'p', '2026-01-01T00:00:00Z',
       '2026-01-01T00:00:00Z'
FROM generate_series(0, RECORDS_LAST) AS n;
INSERT INTO record_events (id, record_id, origin, step, outcome, created_at)
SELECT 'e' || n, 'r' || lpad(n::text, 6, '0'), 'pipeline', 'normalize', 'done',
       '2026-01-01T00:00:00Z'
FROM generate_series(0, RECORDS_LAST) AS n;
INSERT INTO record_search (record_id, stale, terms)
SELECT 'r' || lpad(n::text, 6, '0'), 0,
       to_tsvector('simple', 'k' || lpad(n::text, 6, '0') || ' kcall kword')
FROM generate_series(0, RECORDS_LAST) AS n;
SET session_replication_role = DEFAULT;
"""

_POPULATE = _POPULATE.replace("RECORDS_LAST", str(RECORDS - 1)).replace(
    "OWNERS", str(OWNERS))
_SEQ_SCAN = "Seq Scan"


def _scans(plan: Any, found: list[str] | None = None) -> list[str]:
    """The growing tables a plan (EXPLAIN's JSON) reads with a sequential scan."""
    found = [] if found is None else found
    if plan.get("Node Type") == _SEQ_SCAN and plan.get("Relation Name") in GROWING:
        found.append(f"{_SEQ_SCAN} on {plan['Relation Name']}")
    for child in plan.get("Plans", []):
        _scans(child, found)
    return found


def postgres_statements() -> Iterator[tuple[str, str]]:
    for name, sql in named_statements():
        if sql not in SQLITE_ONLY:
            yield name, sql


# Values by parameter name (what the service passes), else one of the parameter's type.
_VALUES: dict[str, object] = {
    "match": "'k000100'", "owner_id": "u1", "limit": 30, "now": "2026-01-01T00:00:00Z",
    "id": "r000100", "record_id": "r000100", "after_id": "r000100",
    "after_created_at": "2026-01-01T00:30:00Z", "after_score": -0.1, "terms": '["kcall"]',
}
_BY_TYPE: dict[str, object] = {"text": "x", "int8": 1, "int4": 1, "float8": 1.0,
                               "bytea": b"", "jsonb": "[]", "json": "[]", "bool": True}


async def _plan(conn: asyncpg.Connection, sql: str) -> Any:
    """The plan the service gets: planned for the statement's values (the connections
    run with plan_cache_mode = force_custom_plan)."""
    translated = translate(sql)
    statement = await conn.prepare(translated.text)
    values = [_VALUES.get(name, _BY_TYPE.get(kind.name, "x"))
              for name, kind in zip(translated.names, statement.get_parameters(), strict=True)]
    explained = await conn.fetchval(f"EXPLAIN (FORMAT JSON) {translated.text}", *values)
    return json.loads(explained)[0]["Plan"]
@pytest.fixture(scope="module")
def archive(postgres_server: PostgresServer) -> Iterator[str]:
    url = postgres_server.create_database("plans")

    async def build() -> None:
        await migrate_postgres(url)
        conn = await asyncpg.connect(url)
        try:
            await conn.execute(_POPULATE)
            await conn.execute("VACUUM ANALYZE")  # as autovacuum keeps a real archive
        finally:
            await conn.close()

    asyncio.run(build())
    yield url
    postgres_server.drop_database(url)


@pytest.fixture
async def conn(archive: str) -> AsyncIterator[asyncpg.Connection]:
    connection = await connect(archive)
    yield connection
    await connection.close()


async def test_every_named_query_prepares_on_postgresql(conn: asyncpg.Connection) -> None:
    statements = list(postgres_statements())
    assert len(statements) > 150  # the walk found them
    failures = {}
    for name, sql in statements:
        try:
            await conn.prepare(translate(sql).text)
        except asyncpg.PostgresError as exc:
            failures[name] = f"{type(exc).__name__}: {exc}"
    assert failures == {}


async def test_only_the_sqlite_upkeep_is_left_out() -> None:
    """What never runs on PostgreSQL is the FTS5 upkeep of SQLite's own index."""
    left_out = {name for name, sql in named_statements() if sql in SQLITE_ONLY}
    assert left_out == {"search.PENDING_TERMS", "search.INDEX_ROWS", "search.MARK_INDEXED",
                        "maintenance.RECORDS_WITHOUT_SEARCH_KEY",
                        "maintenance.SEARCH_KEYS_WITHOUT_RECORD",
                        "maintenance.FILL_EXPECTED_INDEX", "maintenance.SEARCH_DIFFERENCES"}


@pytest.mark.parametrize("seqscan", ["priced", "priced out"])
async def test_no_named_statement_scans_a_growing_table(
    conn: asyncpg.Connection, seqscan: str
) -> None:
    """Priced: at 200 000 records the planner reads no populated growing table whole.
    Priced out: nor any empty one (the queues) when an index could serve it at all."""
    populated = {row["relname"] for row in await conn.fetch(
        "SELECT relname FROM pg_class WHERE relkind = 'r' AND reltuples >= :rows".replace(
            ":rows", "$1"), float(RECORDS // 2))}
    if seqscan == "priced out":
        await conn.execute("SET enable_seqscan = off")
    failures, excepted = {}, set()
    for name, sql in postgres_statements():
        scans = _scans(await _plan(conn, sql))
        if seqscan == "priced":
            scans = [scan for scan in scans if scan.rsplit(" ", 1)[-1] in populated]
        if scans and name in EXCEPTIONS:
            excepted.add(name)
        elif scans:
            failures[name] = scans
    assert failures == {}
    assert excepted <= set(EXCEPTIONS)


async def test_the_check_sees_a_sequential_scan(conn: asyncpg.Connection) -> None:
    plan = await _plan(conn, "SELECT id FROM audio_records WHERE title = :title")
    assert _scans(plan) == ["Seq Scan on audio_records"]


async def test_the_claim_walks_the_claimable_index(conn: asyncpg.Connection) -> None:
    plan = json.dumps(await _plan(conn, q.pipeline.CLAIM))
    assert "idx_audio_records_claimable" in plan, plan
    assert "LockRows" in plan  # FOR UPDATE SKIP LOCKED


@pytest.mark.parametrize("query", ["SEARCH_FIRST", "SEARCH_AFTER"])
async def test_search_starts_from_the_gin_index(conn: asyncpg.Connection, query: str) -> None:
    plan = await _plan(conn, getattr(q.archive, query))
    assert "idx_record_search_terms" in json.dumps(plan)
    assert not {"Seq Scan on record_search", "Seq Scan on audio_records"} & set(_scans(plan))
