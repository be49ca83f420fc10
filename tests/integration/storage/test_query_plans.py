"""The two hot queries use their indexes: no full scan of audio_records, even when big."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from transcriber.db import queries as q
from transcriber.db.connection import open_sync


def _plan(conn: sqlite3.Connection, sql: str, params: dict[str, object]) -> list[str]:
    return [row["detail"] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]


@pytest.fixture
def conn(migrated: Path) -> sqlite3.Connection:
    conn = open_sync(migrated, busy_timeout_ms=1000)
    conn.execute("BEGIN")
    conn.execute("INSERT INTO users (id, provider_login, created_at, updated_at)"
                 " VALUES ('u1', 'a', 't', 't'), ('u2', 'b', 't', 't')")
    rows = [(f"r{n:06d}", "u1" if n % 50 else "u2", ("done", "uploaded")[n % 2],
             f"2026-01-01T00:{n // 60 % 60:02d}:{n % 60:02d}Z") for n in range(5000)]
    conn.executemany(
        "INSERT INTO audio_records (id, owner_id, duration_ms, size_bytes, source, state,"
        " state_entered_at, created_at, updated_at) VALUES (?, ?, 1, 1, 'http', ?, ?, ?, ?)",
        [(rid, owner, state, ts, ts, ts) for rid, owner, state, ts in rows])
    conn.execute("COMMIT")
    conn.execute("ANALYZE")
    return conn


def _assert_no_full_scan(plan: list[str]) -> None:
    for detail in plan:
        if "audio_records" in detail or " r " in f" {detail} ":
            assert not (detail.startswith("SCAN") and "USING" not in detail), plan


def test_claim_query_uses_the_acquire_index(conn: sqlite3.Connection) -> None:
    params: dict[str, object] = {"token": "t", "now": "2026-01-01T00:00:00Z"}
    for stage in q.pipeline.CLAIMABLE_STAGES:
        params[q.pipeline.lease_param(stage)] = "2026-01-01T00:01:00Z"
    plan = _plan(conn, q.pipeline.CLAIM, params)
    _assert_no_full_scan(plan)
    assert any("idx_audio_records_acquire" in detail for detail in plan), plan


@pytest.mark.parametrize("query", ["PAGE_FIRST", "PAGE_AFTER"])
def test_owner_page_uses_the_owner_index(conn: sqlite3.Connection, query: str) -> None:
    params = {"owner_id": "u2", "limit": 30, "after_created_at": "2026-01-01T00:30:00Z",
              "after_id": "r001000"}
    plan = _plan(conn, getattr(q.archive, query), params)
    _assert_no_full_scan(plan)
    assert any("idx_audio_records_owner_page" in detail for detail in plan), plan
    assert not any("TEMP B-TREE" in detail for detail in plan), plan
