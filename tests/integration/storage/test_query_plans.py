"""No statement of the service scans a table that grows with the archive.

`EXPLAIN QUERY PLAN` runs over every named statement under
`transcriber.db.queries` (found by walking the package, so a new one is
covered without being listed), the statements generated from the stage
descriptor, and every statement and WHEN clause of every trigger (a trigger's
work is not shown in the plan of the statement that fires it: the old search
triggers scanned the whole index that way). The database is populated through
the named queries, planned both without statistics (as a real archive is)
and after ANALYZE. A `SCAN` of a growing table fails, unless it is one of the
named exceptions below, each with its reason.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.query_plans import EXCEPTIONS, GROWING, named_statements
from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import migrate

_PARAM_RE = re.compile(r":(\w+)")
_RAISE_RE = re.compile(r"RAISE\s*\([^)]*\)")
_OLD_NEW_RE = re.compile(r"\b(NEW|OLD)\.(\w+)")
# A virtual table row: SCAN <table> VIRTUAL TABLE INDEX <n>:<idxStr>. FTS5's
# idxStr has M for a MATCH and = for a rowid lookup; without either it reads
# every row. fts5vocab (record_search_terms) has no idxStr: its index number's
# bit 1 is a lookup by term, without which it reads every term of the index.
_VTAB_RE = re.compile(r"^SCAN (\w+) VIRTUAL TABLE INDEX (\d+):(\S*)")
_VOCABULARIES = ("record_search_terms",)
_SCAN_RE = re.compile(r"^SCAN (\w+)")
def trigger_statements(conn: sqlite3.Connection) -> Iterator[tuple[str, str]]:
    for row in conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger'"):
        sql = _OLD_NEW_RE.sub(lambda m: f":{m.group(1).lower()}_{m.group(2)}", row["sql"])
        sql = _RAISE_RE.sub("NULL", sql)  # RAISE() plans only inside a trigger; it reads nothing
        head, _, body = sql.partition("\nBEGIN")
        when = re.search(r"\bWHEN\b(.*)$", head, re.S)
        if when:
            yield f"trigger {row['name']} (WHEN)", f"SELECT {when.group(1)}"
        buffer = ""
        for piece in body.rsplit("END", 1)[0].split(";"):
            buffer += piece + ";"
            if sqlite3.complete_statement(buffer):
                if buffer.strip(" \n;"):
                    yield f"trigger {row['name']}", buffer
                buffer = ""


def _params(sql: str) -> dict[str, object]:
    return dict.fromkeys(_PARAM_RE.findall(sql), "x")


def _plan(conn: sqlite3.Connection, sql: str, params: dict[str, object]) -> list[str]:
    return [row["detail"] for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", params)]


_ALIAS_RE = re.compile(r"\b(?:FROM|JOIN)\s+(\w+)\s+(?:AS\s+)?(\w+)", re.I)
_NOT_ALIAS = {"where", "on", "join", "left", "inner", "cross", "group", "order", "limit",
              "using", "natural", "set", "values", "union", "except"}


def aliases(sql: str) -> dict[str, str]:
    """`FROM audio_records AS r` -> {"r": "audio_records"}: a plan names the alias."""
    return {alias: table for table, alias in _ALIAS_RE.findall(sql)
            if alias.lower() not in _NOT_ALIAS}


def growing_scans(plan: list[str], names: dict[str, str] | None = None) -> list[str]:
    """The plan lines that read a whole growing table (or its whole index)."""
    scans = []
    names = names or {}
    for detail in plan:
        vtab = _VTAB_RE.match(detail)
        if vtab:
            table = names.get(vtab.group(1), vtab.group(1))
            number, index = int(vtab.group(2)), vtab.group(3)
            if table in _VOCABULARIES:
                if not number & 1:
                    scans.append(detail)
            elif table in GROWING and not set(index) & {"M", "="}:
                scans.append(detail)
            continue
        scan = _SCAN_RE.match(detail)
        if scan and names.get(scan.group(1), scan.group(1)) in GROWING:
            scans.append(detail)
    return scans


def _populate(conn: sqlite3.Connection, records: int) -> None:
    now = "2026-01-01T00:00:00Z"
    conn.execute(q.control.BEGIN_IMMEDIATE)
    for n in range(4):
        conn.execute(q.users.INSERT, {"id": f"u{n}", "login": f"l{n}", "name": "", "email": "",
                                      "now": now})
    states = ("uploaded", "normalized", "submitted", "transcribed", "done", "done", "done")
    for n in range(records):
        rid = f"r{n:06d}"
        created = f"2026-01-01T{n // 3600 % 24:02d}:{n // 60 % 60:02d}:{n % 60:02d}Z"
        owner = f"u{n % 4}"
        conn.execute(q.files.INSERT, {"id": f"f{n}", "owner_id": owner, "record_id": rid,
                                             "file_name": "a.wav", "size_bytes": 1,
                                             "format": "wav", "duration_ms": 1, "now": created})
        conn.execute(q.records.INSERT_RECORD, {
            "id": rid, "owner_id": owner, "title": f"call {n}", "original_filename": "a.wav",
            "duration_ms": 1, "size_bytes": 1, "source": "http", "tg_chat_id": None,
            "tg_message_id": None, "state": states[n % len(states)], "original_file_id": f"f{n}",
            "now": created})
        conn.execute(q.results.UPSERT_TEXT, {"id": f"t{n}", "record_id": rid, "kind": "transcript",
                                             "contents": f"words of call {n}", "now": now}
                     ).fetchall()
        conn.execute(q.results.UPSERT_STRUCTURE, {"id": f"s{n}", "record_id": rid, "version": 1,
                                                  "contents": "[]", "now": now}).fetchall()
        conn.execute(q.recognition.INSERT_RECOGNITION, {
            "id": f"g{n}", "record_id": rid, "part_index": 0, "offset_ms": 0, "channel": None,
            "provider": "p", "model": "", "source_uri": None, "now": now})
        conn.execute(q.pipeline.INSERT_EVENT, {
            "id": f"e{n}", "record_id": rid, "origin": "pipeline", "step": "normalize",
            "outcome": "done", "outcome_text": None, "duration_ms": 1, "now": now,
            "actor_id": None})
    conn.execute(q.control.COMMIT)


@pytest.fixture(scope="module")
def populated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    data_dir = tmp_path_factory.mktemp("plans")
    migrate(data_dir)
    conn = open_sync(database_path(data_dir), busy_timeout_ms=1000)
    _populate(conn, 3000)
    conn.close()
    return database_path(data_dir)


@pytest.fixture(params=["no statistics", "analyzed"])
def conn(populated: Path, request: pytest.FixtureRequest) -> Iterator[sqlite3.Connection]:
    conn = open_sync(populated, busy_timeout_ms=1000)
    conn.execute("BEGIN")  # ANALYZE is rolled back: each case plans as it says
    # verify's temporary index and vocabularies, which its statements read.
    for statement in (q.maintenance.CREATE_EXPECTED_INDEX, *q.maintenance.CREATE_VOCABULARIES):
        conn.execute(statement)
    if request.param == "analyzed":
        conn.execute("ANALYZE")
    yield conn
    conn.execute("ROLLBACK")
    conn.close()


def test_no_named_statement_or_trigger_scans_a_growing_table(conn: sqlite3.Connection) -> None:
    statements = [*named_statements(), *trigger_statements(conn)]
    assert len(statements) > 50  # the walk found them
    assert sum(name.startswith("trigger") for name, _ in statements) >= 8
    failures, excepted = {}, set()
    for name, sql in statements:
        scans = growing_scans(_plan(conn, sql, _params(sql)), aliases(sql))
        if scans and name in EXCEPTIONS:
            excepted.add(name)
        elif scans:
            failures[name] = scans
    assert failures == {}
    # An exception that no longer scans is stale: drop it.
    assert excepted == set(EXCEPTIONS)


def test_the_check_catches_the_previous_search_triggers() -> None:
    # The old schema's transcript trigger, as EXPLAIN QUERY PLAN shows its body.
    assert growing_scans(["SCAN record_search VIRTUAL TABLE INDEX 0:"]) != []
    assert growing_scans(["SCAN audio_records USING COVERING INDEX idx_x"]) != []
    assert growing_scans(["SCAN audio_records"]) != []
    assert growing_scans(["SCAN r USING COVERING INDEX x"],
                         aliases("SELECT 1 FROM audio_records AS r")) != []
    assert growing_scans(["SCAN record_search VIRTUAL TABLE INDEX 0:M3",
                          "SCAN record_search VIRTUAL TABLE INDEX 0:=",
                          "SEARCH audio_records USING INDEX x (id=?)",
                          "SCAN schema_migrations", "SCAN CONSTANT ROW"]) == []
    # The describer's archive counts: by term, never every term of the index.
    assert growing_scans(["SCAN record_search_terms VIRTUAL TABLE INDEX 0:"]) != []
    assert growing_scans(["SCAN record_search_terms VIRTUAL TABLE INDEX 1:"]) == []


def test_the_archive_counts_look_terms_up_by_key(conn: sqlite3.Connection) -> None:
    plan = _plan(conn, q.describe.TERM_RECORDS, {"terms": '["ab", "cd"]'})
    assert "SCAN v VIRTUAL TABLE INDEX 1:" in plan, plan
    assert growing_scans(plan, aliases(q.describe.TERM_RECORDS)) == []
    assert growing_scans(["SCAN v VIRTUAL TABLE INDEX 0:"],
                         aliases(q.describe.TERM_RECORDS)) != []


def test_claim_query_uses_the_acquire_index(conn: sqlite3.Connection) -> None:
    params: dict[str, object] = {"token": "t", "now": "2026-01-01T00:00:00Z"}
    for stage in q.pipeline.CLAIMABLE_STAGES:
        params[q.pipeline.lease_param(stage)] = "2026-01-01T00:01:00Z"
    plan = _plan(conn, q.pipeline.CLAIM, params)
    assert growing_scans(plan) == []
    assert any("idx_audio_records_acquire" in detail for detail in plan), plan


@pytest.mark.parametrize("query", ["PAGE_FIRST", "PAGE_AFTER"])
def test_owner_page_uses_the_owner_index(conn: sqlite3.Connection, query: str) -> None:
    params = {"owner_id": "u2", "limit": 30, "after_created_at": "2026-01-01T00:30:00Z",
              "after_id": "r001000"}
    plan = _plan(conn, getattr(q.archive, query), params)
    assert growing_scans(plan) == []
    assert any("idx_audio_records_owner_page" in detail for detail in plan), plan
    assert not any("TEMP B-TREE" in detail for detail in plan), plan


@pytest.mark.parametrize("query", ["SEARCH_FIRST", "SEARCH_AFTER"])
def test_search_starts_from_the_match(conn: sqlite3.Connection, query: str) -> None:
    plan = _plan(conn, getattr(q.archive, query), _params(getattr(q.archive, query)))
    assert plan[0].startswith("SCAN record_search VIRTUAL TABLE INDEX 0:M"), plan
    assert growing_scans(plan) == []
