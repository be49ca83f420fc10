"""What a person may see, at scale (issue 41 item 8, docs/sharing.md): a page and a
search of everything visible to a member of three spaces with twenty records shared
with them, in an archive of 500 people and 50 spaces, against the same page and
search of a one-person archive of the same size, on SQLite and on PostgreSQL.

Both archives are loaded by `tests.helpers.bench_archive` (records with three-word
titles and no transcript; the search index as the service fills it). The shared
archive: 500 people, each in one of 50 spaces of 10 members, 40 % of each person's
records in their space; the measured person is also in two more spaces and has 20
records shared with them. Measured (median, warm cache) through the service's own
reads, as the list route calls them (one reader connection): the first page of
everything visible (`reads.access.visible_page`) against the one person's first
page (`reads.lists.owner_page`), and the first page of the visible search for a
common word (`reads.access.search_page`) against the one person's
(`reads.lists.search_page`). Goal: each within 1.5x.

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s tests/bench/test_sharing_scale.py`;
`TRANSCRIBER_BENCH_SHARING_RECORDS` sets the size (default 200000); `-k sqlite` or
`-k postgresql` one engine.
"""

from __future__ import annotations

import asyncio
import os
import random
import statistics
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest

from tests.helpers.bench_archive import (
    BenchRecord,
    Built,
    Layout,
    build_postgres,
    build_sqlite,
    created_at,
)
from tests.helpers.postgres import PostgresServer
from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.lists import PageAfter
from transcriber.domain.search import parse

RECORDS = int(os.environ.get("TRANSCRIBER_BENCH_SHARING_RECORDS", "200000"))
PEOPLE, SPACES, LIMIT = 500, 50, 31
PERSON = "p000"
WORDS = ["budget", "meeting", "plan", "review", "garden", "school", "trip", "doctor",
         "call", "report", "launch", "design", "office", "travel", "family", "dinner"]
COMMAND = "PYTHONPATH=$PWD python -m pytest -m bench -s tests/bench/test_sharing_scale.py"


def layout(records: int, *, shared: bool) -> Layout:
    people = tuple(f"p{n:03d}" for n in range(PEOPLE if shared else 1))
    spaces = tuple(f"s{s:02d}" for s in range(SPACES)) if shared else ()
    members = tuple((f"s{n % SPACES:02d}", person, "editor")
                    for n, person in enumerate(people)) if shared else ()
    # The measured person is in three spaces: their own and two more.
    members += tuple((f"s{extra:02d}", PERSON, "viewer") for extra in (1, 2)) if shared else ()
    shares = tuple((f"r{n:07d}", PERSON) for n in range(3, records, max(records // 20, 1))
                   if shared and people[n % len(people)] != PERSON)

    def made() -> Iterator[BenchRecord]:
        rng = random.Random(7)
        for n in range(records):
            owner = people[n % len(people)]
            in_space = shared and rng.random() < 0.4
            yield BenchRecord(id=f"r{n:07d}", owner=owner,
                              created_at=created_at(n, step_seconds=60),
                              title=" ".join(rng.choices(WORDS, k=3)),
                              space=f"s{int(owner[1:]) % SPACES:02d}" if in_space else None)

    return Layout(people=people, records=made, spaces=spaces, members=members, shares=shares)


async def _paired_ms(first: Callable[[], Awaitable[object]],
                     second: Callable[[], Awaitable[object]], repeat: int) -> tuple[float, float]:
    """The medians of two calls taken in turns, so that a shared machine's load
    falls on both alike."""
    await first()  # warm the cache and the prepared statements
    await second()
    a: list[float] = []
    b: list[float] = []
    for _ in range(repeat):
        for run, samples in ((first, a), (second, b)):
            started = time.perf_counter()
            await run()
            samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(a), statistics.median(b)


def _readers(engine: str, built: Built) -> ReaderPool:
    if engine == "postgresql":
        from transcriber.db.postgres.readers import PgReaderPool  # noqa: PLC0415

        return PgReaderPool(built.where, size=1)
    return ReaderPool(Path(built.where), size=1)


async def measure(engine: str, one: Built, many: Built, *, repeat: int = 200) -> dict[str, float]:
    query = parse("budget")
    one_readers, many_readers = _readers(engine, one), _readers(engine, many)
    await one_readers.open()
    await many_readers.open()
    try:
        page = await reads.access.visible_page(many_readers, user_id=PERSON, limit=LIMIT)
        assert len(page) == LIMIT
        assert len({item.id for item in page}) == LIMIT
        assert await reads.access.search_page(many_readers, user_id=PERSON, query=query,
                                              limit=LIMIT)
        pages = await _paired_ms(
            lambda: reads.lists.owner_page(one_readers, owner_id=PERSON, limit=LIMIT),
            lambda: reads.access.visible_page(many_readers, user_id=PERSON, limit=LIMIT),
            repeat)
        searches = await _paired_ms(
            lambda: reads.lists.search_page(one_readers, owner_id=PERSON, query=query,
                                            limit=LIMIT),
            lambda: reads.access.search_page(many_readers, user_id=PERSON, query=query,
                                             limit=LIMIT),
            max(repeat // 20, 3))
        return {"one_page_ms": pages[0], "visible_page_ms": pages[1],
                "one_search_ms": searches[0], "visible_search_ms": searches[1]}
    finally:
        await one_readers.close()
        await many_readers.close()


def _build(engine: str, tmp_path: Path, server: PostgresServer | None,
           records: int) -> tuple[Built, Built]:
    if engine == "postgresql":
        assert server is not None
        return (build_postgres(server.create_database("one"), layout(records, shared=False)),
                build_postgres(server.create_database("many"), layout(records, shared=True)))
    return (build_sqlite(tmp_path / "one", layout(records, shared=False)),
            build_sqlite(tmp_path / "many", layout(records, shared=True)))


@pytest.fixture(params=["sqlite", "postgresql"])
def engine_server(request: pytest.FixtureRequest) -> tuple[str, PostgresServer | None]:
    if request.param == "postgresql":
        return request.param, request.getfixturevalue("postgres_server")
    return request.param, None


@pytest.mark.bench
@pytest.mark.timeout(3600)
def test_what_a_person_may_see_stays_near_a_one_person_archive(
        tmp_path: Path, engine_server: tuple[str, PostgresServer | None]) -> None:
    engine, server = engine_server
    one, many = _build(engine, tmp_path, server, RECORDS)
    results = asyncio.run(measure(engine, one, many))
    print(f"\n{COMMAND}\n{engine}: records {RECORDS}, people {PEOPLE}, spaces {SPACES}, "
          f"built in {one.seconds:.0f} s and {many.seconds:.0f} s")
    for name, value in results.items():
        print(f"{name:>20}: {value:8.2f} ms")
    page_ratio = results["visible_page_ms"] / results["one_page_ms"]
    search_ratio = results["visible_search_ms"] / results["one_search_ms"]
    print(f"{'page ratio':>20}: {page_ratio:8.2f}\n{'search ratio':>20}: {search_ratio:8.2f}")
    # The goal: within 1.5x of the one-person archive of the same size.
    assert page_ratio <= 1.5
    assert search_ratio <= 1.5


def test_the_bench_sees_what_the_person_may_see(tmp_path: Path) -> None:
    """The bench's own code at a size the default run affords, on SQLite: the page is
    the person's visible records, newest first, each once."""
    shape = layout(2000, shared=True)
    one, many = _build("sqlite", tmp_path, None, 2000)
    results = asyncio.run(measure("sqlite", one, many, repeat=3))
    assert set(results) == {"one_page_ms", "visible_page_ms", "one_search_ms",
                            "visible_search_ms"}
    mine = {space for space, person, _role in shape.members if person == PERSON}
    shared = {record_id for record_id, _person in shape.shares}
    expected = sorted(((r.created_at, r.id) for r in shape.records()
                       if r.owner == PERSON or r.space in mine or r.id in shared), reverse=True)
    assert len(expected) > 2 * LIMIT
    assert asyncio.run(_walk(Path(many.where))) == [record_id for _at, record_id in expected]


async def _walk(path: Path) -> list[str]:
    """Every page of the person's visible list, each from the last one's cursor."""
    readers = ReaderPool(path, size=1)
    await readers.open()
    seen: list[str] = []
    after = None
    try:
        while page := await reads.access.visible_page(readers, user_id=PERSON, limit=LIMIT,
                                                      after=after):
            seen += [item.id for item in page]
            after = PageAfter(created_at=page[-1].created_at, id=page[-1].id)
    finally:
        await readers.close()
    return seen
