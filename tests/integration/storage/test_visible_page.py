"""The page of everything a person may see (`reads.access.visible_page`, one statement
on each engine) holds exactly their records, newest first, each once, page after
page: their own, their spaces' and those shared with them, with records that are
in two branches at once (an own record in their space, a space's record also
shared with them) and many records of the same second (the cursor's tie on id,
and a space's branch cut inside a run of equal times on SQLite)."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.helpers.bench_archive import BenchRecord, Layout, build_postgres, build_sqlite
from tests.helpers.postgres import PostgresServer
from transcriber.db import reads
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.lists import PageAfter

PERSON = "p00"
PEOPLE = tuple(f"p{n:02d}" for n in range(12))
SPACES = ("s0", "s1", "s2", "s3")
LIMIT = 7


def _layout() -> Layout:
    # s0 is a big family (most of what the person sees: its branch fills whole pages
    # and is cut at its LIMIT-th record), s1 and s2 small teams of theirs, s3 not theirs.
    home = {person: "s0" if n < 8 else SPACES[n % 3 + 1] for n, person in enumerate(PEOPLE)}
    members = tuple((space, person, "editor") for person, space in home.items())
    members += (("s1", PERSON, "viewer"), ("s2", PERSON, "viewer"))

    def made() -> Iterator[BenchRecord]:
        rng = random.Random(3)
        for n in range(400):
            owner = rng.choice(PEOPLE)
            space = rng.choice((None, home[owner], home[owner]))
            # Runs of records of the same second: every page boundary meets some.
            second = n // 5
            yield BenchRecord(id=f"r{n:04d}", owner=owner,
                              created_at=f"2026-01-01T00:{second // 60:02d}:{second % 60:02d}Z",
                              title="call", space=space)

    shares = tuple((f"r{n:04d}", PERSON) for n in range(0, 400, 9))
    return Layout(people=PEOPLE, records=made, spaces=SPACES, members=members, shares=shares)


def _expected(layout: Layout) -> list[str]:
    mine = {space for space, person, _role in layout.members if person == PERSON}
    shared = {record_id for record_id, person in layout.shares if person == PERSON}
    rows = [(r.created_at, r.id) for r in layout.records()
            if r.owner == PERSON or r.space in mine or r.id in shared]
    return [record_id for _at, record_id in sorted(rows, reverse=True)]


async def _walk(readers: ReaderPool) -> list[str]:
    seen: list[str] = []
    after = None
    while page := await reads.access.visible_page(readers, user_id=PERSON, limit=LIMIT,
                                                  after=after):
        assert len(page) <= LIMIT
        seen += [item.id for item in page]
        after = PageAfter(created_at=page[-1].created_at, id=page[-1].id)
    return seen


async def test_every_page_holds_what_the_person_may_see_on_sqlite(tmp_path: Path) -> None:
    layout = _layout()
    built = build_sqlite(tmp_path / "data", layout)
    readers = ReaderPool(Path(built.where), size=1)
    await readers.open()
    try:
        seen = await _walk(readers)
    finally:
        await readers.close()
    assert seen == _expected(layout)
    assert len(seen) > 10 * LIMIT


@pytest.mark.usefixtures("postgres_server")
async def test_every_page_holds_what_the_person_may_see_on_postgresql(
        postgres_server: PostgresServer) -> None:
    from transcriber.db.postgres.readers import PgReaderPool  # noqa: PLC0415

    layout = _layout()
    url = postgres_server.create_database("visible")
    try:
        # build_postgres runs its own event loop: off this test's.
        import asyncio  # noqa: PLC0415

        await asyncio.to_thread(build_postgres, url, layout)
        readers = PgReaderPool(url, size=1)
        await readers.open()
        try:
            seen = await _walk(readers)
        finally:
            await readers.close()
    finally:
        postgres_server.drop_database(url)
    assert seen == _expected(layout)
