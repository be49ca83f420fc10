"""What a person may see, at scale (issue 41 item 8, docs/sharing.md): a page and a
search of everything visible to a member of three spaces with twenty records shared
with them, in an archive of 500 people and 50 spaces, against the same page and
search of a one-person archive of the same size.

Both archives are built through the schema (migrations) and the named queries
(records with three-word titles; the search index filled by the triggers). The
shared archive: 500 people, each in one of 50 spaces of 10 members, 40 % of
each person's records in their space; the measured person is also in two more
spaces and has 20 records shared with them. Measured (median, warm cache): the
first visible page as `transcriber.db.reads.access.visible_page` builds it (the
person's spaces, their own page, their shares' page, each space's page, merged)
and the first page of the visible search for a common word
(`spaces.SEARCH_VISIBLE_FIRST`, every visible owner's keyed terms); for the
one-person archive `archive.PAGE_FIRST` and `archive.SEARCH_FIRST`.

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s tests/bench/test_sharing_scale.py`;
`TRANSCRIBER_BENCH_SHARING_RECORDS` sets the size (default 200000).
"""

from __future__ import annotations

import heapq
import os
import random
import sqlite3
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import migrate
from transcriber.db.search import owner_match
from transcriber.domain.search import parse

RECORDS = int(os.environ.get("TRANSCRIBER_BENCH_SHARING_RECORDS", "200000"))
PEOPLE, SPACES, LIMIT = 500, 50, 31
WORDS = ["budget", "meeting", "plan", "review", "garden", "school", "trip", "doctor",
         "call", "report", "launch", "design", "office", "travel", "family", "dinner"]
NOW = "2020-01-01T00:00:00Z"
COMMAND = "PYTHONPATH=$PWD python -m pytest -m bench -s tests/bench/test_sharing_scale.py"


def _record(conn: sqlite3.Connection, n: int, owner: str, rng: random.Random) -> str:
    record_id = f"r{n:07d}"
    created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_577_836_800 + n * 60))
    conn.execute(q.files.INSERT, {
        "id": f"f{n:07d}", "owner_id": owner, "record_id": record_id,
        "file_name": "original.ogg", "size_bytes": 1, "format": "ogg", "duration_ms": 1,
        "now": created})
    conn.execute(q.records.INSERT_RECORD, {
        "id": record_id, "owner_id": owner, "title": " ".join(rng.choices(WORDS, k=3)),
        "original_filename": "a.ogg", "duration_ms": 1, "size_bytes": 1, "source": "http",
        "tg_chat_id": None, "tg_message_id": None, "state": "done",
        "original_file_id": f"f{n:07d}", "now": created})
    return record_id


def build(folder: Path, *, shared: bool) -> Path:
    rng = random.Random(7)
    folder.mkdir()
    migrate(folder)
    path = database_path(folder)
    conn = open_sync(path, busy_timeout_ms=5000)
    conn.execute("PRAGMA cache_size = -262144")
    conn.execute(q.control.BEGIN_IMMEDIATE)
    people = [f"p{n:03d}" for n in range(PEOPLE if shared else 1)]
    for person in people:
        conn.execute(q.users.INSERT, {"id": person, "login": person, "name": "", "email": "",
                                      "now": NOW})
    if shared:
        for s in range(SPACES):
            conn.execute(q.spaces.INSERT_SPACE, {"id": f"s{s:02d}", "name": f"space {s}",
                                                 "now": NOW})
        for n, person in enumerate(people):
            conn.execute(q.spaces.UPSERT_MEMBER, {"space_id": f"s{n % SPACES:02d}",
                                                  "user_id": person, "role": "editor",
                                                  "now": NOW})
        for extra in (1, 2):  # the measured person p000 is in three spaces
            conn.execute(q.spaces.UPSERT_MEMBER, {"space_id": f"s{extra:02d}",
                                                  "user_id": people[0], "role": "viewer",
                                                  "now": NOW})
    for n in range(RECORDS):
        owner = people[n % len(people)]
        record_id = _record(conn, n, owner, rng)
        if shared and rng.random() < 0.4:
            conn.execute(q.spaces.MOVE_RECORD, {"id": record_id, "now": NOW,
                                                "space_id": f"s{int(owner[1:]) % SPACES:02d}"})
        if shared and n % 10_000 == 3 and owner != people[0]:
            conn.execute(q.spaces.UPSERT_SHARE, {"record_id": record_id, "user_id": people[0],
                                                 "role": "viewer", "now": NOW})
    conn.execute(q.control.COMMIT)
    conn.close()
    return path


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    run()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def _visible_page(conn: sqlite3.Connection, person: str) -> list[str]:
    """`reads.access.visible_page`'s statements, in the same order, on one connection."""
    spaces = conn.execute(q.spaces.SPACES_OF_USER, {"user_id": person}).fetchall()
    branches = [conn.execute(q.archive.PAGE_FIRST, {"owner_id": person, "limit": LIMIT})
                .fetchall(),
                conn.execute(q.spaces.SHARED_PAGE_FIRST, {"user_id": person, "limit": LIMIT})
                .fetchall()]
    branches += [conn.execute(q.spaces.SPACE_PAGE_FIRST, {"space_id": s["id"], "limit": LIMIT})
                 .fetchall() for s in spaces]
    seen: list[str] = []
    for row in heapq.merge(*branches, key=lambda r: (r["created_at"], r["id"]), reverse=True):
        if row["id"] not in seen:
            seen.append(row["id"])
        if len(seen) == LIMIT:
            break
    return seen


def _visible_search(conn: sqlite3.Connection, person: str) -> list[sqlite3.Row]:
    owners = [r["owner_id"] for r in conn.execute(q.spaces.VISIBLE_OWNERS, {"user_id": person})]
    match = " OR ".join(f"({owner_match(o, parse('budget'))})" for o in sorted(set(owners)))
    return conn.execute(q.spaces.SEARCH_VISIBLE_FIRST, {"user_id": person, "match": match,
                                                        "limit": LIMIT}).fetchall()


@pytest.mark.bench
def test_what_a_person_may_see_stays_near_a_one_person_archive(tmp_path: Path) -> None:
    started = time.perf_counter()
    one = open_sync(build(tmp_path / "one", shared=False), busy_timeout_ms=5000)
    many = open_sync(build(tmp_path / "many", shared=True), busy_timeout_ms=5000)
    built = time.perf_counter() - started
    results = {
        "one_page_ms": _median_ms(lambda: one.execute(
            q.archive.PAGE_FIRST, {"owner_id": "p000", "limit": LIMIT}).fetchall(), 200),
        "one_search_ms": _median_ms(lambda: one.execute(q.archive.SEARCH_FIRST, {
            "owner_id": "p000", "limit": LIMIT,
            "match": owner_match("p000", parse("budget"))}).fetchall(), 10),
        "visible_page_ms": _median_ms(lambda: _visible_page(many, "p000"), 200),
        "visible_search_ms": _median_ms(lambda: _visible_search(many, "p000"), 10),
    }
    assert len(_visible_page(many, "p000")) == LIMIT
    assert _visible_search(many, "p000")
    print(f"\n{COMMAND}\nrecords {RECORDS}, people {PEOPLE}, spaces {SPACES}, "
          f"built in {built:.0f} s")
    for name, value in results.items():
        print(f"{name:>20}: {value:8.2f} ms")
    print(f"{'page ratio':>20}: {results['visible_page_ms'] / results['one_page_ms']:8.2f}")
    print(f"{'search ratio':>20}: "
          f"{results['visible_search_ms'] / results['one_search_ms']:8.2f}")
    # The goal: within 1.5x of the one-person archive of the same size.
    assert results["visible_search_ms"] <= 1.5 * results["one_search_ms"]
    one.close()
    many.close()
