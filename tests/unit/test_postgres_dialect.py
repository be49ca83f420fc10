"""The PostgreSQL text of a named query: parameters numbered once each, literals and
casts left alone, SQLite's few spellings rewritten, overrides looked up by text."""

from __future__ import annotations

from transcriber.db import queries as q
from transcriber.db.postgres.dialect import translate
from transcriber.db.postgres.queries import OVERRIDES


def test_named_parameters_become_positions_numbered_once() -> None:
    done = translate("SELECT :b, :a FROM t WHERE x = :b AND y = ':c' AND z = :a::bigint")
    assert done.text == "SELECT $1, $2 FROM t WHERE x = $1 AND y = ':c' AND z = $2::bigint"
    assert done.names == ("b", "a")
    assert done.arguments({"a": 1, "b": "x", "unused": 3}) == ["x", 1]
    assert done.arguments(None) == []


def test_sqlite_spellings_are_rewritten() -> None:
    assert translate(
        "SELECT id FROM r INDEXED BY idx_r WHERE ifnull(a, 0) = 1").text == (
        "SELECT id FROM r WHERE coalesce(a, 0) = 1")
    assert translate("INSERT OR IGNORE INTO t (a) VALUES (:a)").text == (
        "INSERT INTO t (a) VALUES ($1)\nON CONFLICT DO NOTHING")
    assert translate("INSERT OR IGNORE INTO t (a) VALUES (:a) RETURNING a").text == (
        "INSERT INTO t (a) VALUES ($1) ON CONFLICT DO NOTHING\nRETURNING a")
    assert translate("SELECT 1 FROM json_each(w.events) AS e WHERE e.value = :v").text == (
        "SELECT 1 FROM jsonb_array_elements_text((w.events)::jsonb) AS e(value) "
        "WHERE e.value = $1")
    assert translate("SELECT json_group_array(name), group_concat(x, ' ') FROM t").text == (
        "SELECT json_agg(name), string_agg(x, ' ') FROM t")


def test_an_override_replaces_the_sqlite_text() -> None:
    claim = translate(q.pipeline.CLAIM)
    assert "FOR UPDATE SKIP LOCKED" in claim.text
    assert "INDEXED BY" not in claim.text
    assert set(claim.names) == {"token", "now", *(q.pipeline.lease_param(stage)
                                                  for stage in q.pipeline.CLAIMABLE_STAGES)}
    assert all(":" + name not in claim.text for name in claim.names)
    assert q.pipeline.CLAIM in OVERRIDES
