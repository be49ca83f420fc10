"""Ask's retrieval at 5 000 and 200 000 records, side by side in one run.

Archives like `test_archive_scale`'s, built here (200 owners, 300-word transcripts of a
Zipf vocabulary, through the named queries with every trigger firing; the measured
owner holds the same 40 records in both, another owner 20 000 in the large one).
Measured (median, warm cache): a question's candidate read, as `ask.retrieval`
runs it: the question read (`domain.ask.read_question`: any of its words, words
typed in part included) and the search's own statement (`archive.SEARCH_FIRST`,
`retrieval.CANDIDATES` rows), then each candidate's transcript looked up by key
(`archive.CORRECTED_STRUCTURE`, `archive.STRUCTURE`). Goal: the large archive
within 2x of the small one (issue 44).

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s tests/bench/test_ask_scale.py`;
`TRANSCRIBER_BENCH_ARCHIVE_LARGE` sets the large size (default 200000).
"""

from __future__ import annotations

import itertools
import os
import random
import sqlite3
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import pytest

from transcriber.ask.retrieval import CANDIDATES
from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import migrate
from transcriber.db.search import owner_match
from transcriber.domain.ask import read_question

SMALL, LARGE = 5_000, int(os.environ.get("TRANSCRIBER_BENCH_ARCHIVE_LARGE", "200000"))
OWNERS = 200
OWNER_RECORDS = 40
BIG_OWNER_RECORDS = 20_000
WORDS = 300
_HEAD = ["budget", "the", "meeting", "and", "project", "plan", "review", "team", "call",
         "client", "report", "schedule", "quarter", "launch", "design", "office", "travel",
         "decide", "when"]


@dataclass(frozen=True, slots=True)
class Archive:
    path: Path
    owner: str
    big_owner: str | None


def _vocabulary(rng: random.Random, size: int = 5000) -> list[str]:
    syllables = ["ka", "lo", "mi", "ren", "sto", "vi", "dan", "per", "ul", "gra", "to", "ne"]
    words = list(_HEAD)
    while len(words) < size:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(2, 4)))
        if word not in words:
            words.append(word)
    return words


def build_archive(folder: Path, records: int, *, seed: int = 7) -> Archive:
    rng = random.Random(seed)
    vocab = _vocabulary(rng)
    weights = list(itertools.accumulate(1.0 / rank for rank in range(1, len(vocab) + 1)))
    owners = [f"owner{n:03d}" for n in range(OWNERS)]
    big = records >= 2 * BIG_OWNER_RECORDS
    plan = [owners[0]] * OWNER_RECORDS + ([owners[1]] * BIG_OWNER_RECORDS if big else [])
    rest = owners[2:] if big else owners[1:]
    plan += [rest[n % len(rest)] for n in range(records - len(plan))]
    rng.shuffle(plan)
    folder.mkdir()
    migrate(folder)
    conn = open_sync(database_path(folder), busy_timeout_ms=5000)
    conn.execute("PRAGMA cache_size = -262144")  # the loader's only: one big transaction
    conn.execute(q.control.BEGIN_IMMEDIATE)
    for owner in owners:
        conn.execute(q.users.INSERT, {"id": owner, "login": owner, "name": "", "email": "",
                                      "now": "2020-01-01T00:00:00Z"})
    for n, owner in enumerate(plan):
        record_id = f"r{n:07d}"
        created = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(1_577_836_800 + n * 600))
        conn.execute(q.files.INSERT, {
            "id": f"f{n:07d}", "owner_id": owner, "record_id": record_id,
            "file_name": "original.ogg", "size_bytes": 1000, "format": "ogg",
            "duration_ms": 60_000, "now": created})
        conn.execute(q.records.INSERT_RECORD, {
            "id": record_id, "owner_id": owner,
            "title": " ".join(rng.choices(vocab, cum_weights=weights, k=3)),
            "original_filename": f"call-{n}.ogg", "duration_ms": 60_000, "size_bytes": 1000,
            "source": "http", "tg_chat_id": None, "tg_message_id": None, "state": "done",
            "original_file_id": f"f{n:07d}", "now": created})
        conn.execute(q.results.UPSERT_TEXT, {
            "id": f"t{n:07d}", "record_id": record_id, "kind": "transcript",
            "contents": " ".join(rng.choices(vocab, cum_weights=weights, k=WORDS)),
            "now": created}).fetchall()
    conn.execute(q.control.COMMIT)
    conn.close()
    return Archive(path=database_path(folder), owner=owners[0],
                   big_owner=owners[1] if big else None)


def _median_ms(run: Callable[[], object], repeat: int) -> float:
    run()  # warm the cache
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        run()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)

QUESTIONS = ("What did the team decide about the budget review?",
             "When is the launch of the design schedu",  # a word typed in part
             "client travel report last week")
COMMAND = "PYTHONPATH=$PWD python -m pytest -m bench -s tests/bench/test_ask_scale.py"


def _retrieval(conn: sqlite3.Connection, owner: str, question: str) -> int:
    read = read_question(question, today=date(2020, 3, 1))
    match = owner_match(owner, read.query)
    assert match is not None
    rows = conn.execute(q.archive.SEARCH_FIRST, {"owner_id": owner, "match": match,
                                                 "limit": CANDIDATES}).fetchall()
    for row in rows:
        for statement, params in ((q.archive.CORRECTED_STRUCTURE, {"record_id": row["id"]}),
                                  (q.archive.STRUCTURE, {"record_id": row["id"],
                                                         "version": 1})):
            conn.execute(statement, params).fetchall()
    return len(rows)


def measure(archive: Archive) -> dict[str, float]:
    conn = open_sync(archive.path, busy_timeout_ms=5000)
    found = {}
    for question in QUESTIONS:
        def one(asked: str = question) -> int:
            return _retrieval(conn, archive.owner, asked)
        found[question] = _median_ms(one, 50)
        assert one() > 0
    if archive.big_owner is not None:
        found["big"] = _median_ms(lambda: _retrieval(conn, str(archive.big_owner),
                                                     QUESTIONS[0]), 10)
    conn.close()
    return found


@pytest.mark.bench
@pytest.mark.timeout(3600)
def test_ask_retrieval_5k_vs_200k(tmp_path: Path) -> None:
    small = build_archive(tmp_path / "small", SMALL)
    large = build_archive(tmp_path / "large", LARGE)
    a, b = measure(small), measure(large)
    print(f"\nask retrieval: {SMALL} vs {LARGE} records; reproduce: {COMMAND}")
    for question in QUESTIONS:
        print(f"  {question:<52} {a[question]:>7.2f}ms {b[question]:>7.2f}ms "
              f"{b[question] / a[question]:>5.2f}x (goal 2.0x)")
    if "big" in b:
        print(f"  {'a 20 000-record owner, first question':<52} {'':>9} {b['big']:>7.2f}ms")
    for question in QUESTIONS:
        assert b[question] <= 2.0 * a[question], question


def test_a_small_archive_answers_the_bench_questions(tmp_path: Path) -> None:
    """The benchmark's own code, at a size the default run affords."""
    archive = build_archive(tmp_path / "a", 600)
    results = measure(archive)
    assert set(results) == set(QUESTIONS)
