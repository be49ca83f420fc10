"""The scale benches' archive, on either engine: people, spaces, records with their
transcripts, shares, loaded in bulk (tests/bench/test_archive_scale.py,
test_ask_scale.py, test_sharing_scale.py).

A bench describes its archive as a `Layout` (who, and a stream of `BenchRecord`s,
made lazily: 200 000 transcripts of 300 words do not fit in memory at once) and
loads it with `build_sqlite` or `build_postgres`:

- SQLite: the migrations, then the named queries with `executemany` in batches,
  all in one transaction, every trigger firing (the search index is filled by
  them as in service); a loader's page cache so the transaction does not spill.
- PostgreSQL: the migrations, then COPY of each table with the triggers off for
  this session (`session_replication_role`), the search rows written as the
  writer's refresh leaves them (`transcriber.db.postgres.search.terms_literal`:
  fresh, the same owner-keyed terms) with the GIN index built once after them,
  then `VACUUM ANALYZE` as autovacuum keeps a real archive. Row by row (the
  triggers, the writer's refresh, the index updated per row) costs minutes more.

Both are given the same rows, so a bench measures the same archive on each.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import random
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import asyncpg

from transcriber.db import queries as q
from transcriber.db.connection import database_path, open_sync
from transcriber.db.migrate import migrate
from transcriber.db.postgres.migrate import migrate_postgres
from transcriber.db.postgres.search import terms_literal
from transcriber.domain.transcripts import STRUCTURE_ROW, Utterance, dump_structure

NOW = "2020-01-01T00:00:00Z"
BATCH = 2000
BULK_CACHE_PRAGMA = "PRAGMA cache_size = -262144"  # 256 MB, the loader's connection only
_START = 1_577_836_800  # 2020-01-01 in seconds

HEAD_WORDS = ("budget", "the", "meeting", "and", "project", "plan", "review", "team", "call",
              "client", "report", "schedule", "quarter", "launch", "design", "office",
              "travel", "decide", "when")


@dataclass(frozen=True, slots=True, kw_only=True)
class BenchRecord:
    id: str
    owner: str
    created_at: str
    title: str
    transcript: str | None = None
    space: str | None = None
    structure: bool = False
    """Also a recognizer's structure (one utterance of the transcript): what ask reads."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Layout:
    people: tuple[str, ...]
    records: Callable[[], Iterator[BenchRecord]]
    """Made afresh for each engine (a bench may build the same archive twice)."""
    spaces: tuple[str, ...] = ()
    members: tuple[tuple[str, str, str], ...] = ()
    """(space, person, role)."""
    shares: tuple[tuple[str, str], ...] = ()
    """(record id, person): viewer shares, written after the records."""


@dataclass(frozen=True, slots=True)
class Built:
    where: str
    """The SQLite file's path, or the PostgreSQL URL."""
    seconds: float


@dataclass(slots=True)
class Zipf:
    """A vocabulary whose first words are in nearly every text and whose tail is rare."""

    rng: random.Random
    size: int = 5000
    words: list[str] = field(default_factory=list)
    cumulative: list[float] = field(default_factory=list)

    def __post_init__(self) -> None:
        syllables = ["ka", "lo", "mi", "ren", "sto", "vi", "dan", "per", "ul", "gra", "to", "ne"]
        self.words = list(HEAD_WORDS)
        seen = set(self.words)
        while len(self.words) < self.size:
            word = "".join(self.rng.choice(syllables) for _ in range(self.rng.randint(2, 4)))
            if word not in seen:
                seen.add(word)
                self.words.append(word)
        self.cumulative = list(itertools.accumulate(1.0 / rank
                                                    for rank in range(1, self.size + 1)))

    def text(self, words: int) -> str:
        return " ".join(self.rng.choices(self.words, cum_weights=self.cumulative, k=words))


def created_at(n: int, *, step_seconds: int = 600) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(_START + n * step_seconds))


def structure_of(text: str) -> str:
    return dump_structure([Utterance(start_ms=0, end_ms=60_000, channel=0, text=text)])


def _batches(records: Iterable[BenchRecord]) -> Iterator[list[BenchRecord]]:
    iterator = iter(records)
    while batch := list(itertools.islice(iterator, BATCH)):
        yield batch


# -- SQLite ----------------------------------------------------------------------------


def build_sqlite(folder: Path, layout: Layout) -> Built:
    """The archive in a new data folder, through the named queries, one transaction."""
    folder.mkdir()
    migrate(folder)
    path = database_path(folder)
    started = time.perf_counter()
    with contextlib.closing(open_sync(path, busy_timeout_ms=5000)) as conn:
        conn.execute(BULK_CACHE_PRAGMA)
        conn.execute(q.control.BEGIN_IMMEDIATE)
        conn.executemany(q.users.INSERT, [{"id": p, "login": p, "name": "", "email": "",
                                           "now": NOW} for p in layout.people])
        conn.executemany(q.spaces.INSERT_SPACE, [{"id": s, "name": s, "now": NOW}
                                                 for s in layout.spaces])
        conn.executemany(q.spaces.UPSERT_MEMBER, [
            {"space_id": s, "user_id": p, "role": role, "now": NOW}
            for s, p, role in layout.members])
        for batch in _batches(layout.records()):
            conn.executemany(q.files.INSERT, [{
                "id": "f" + r.id, "owner_id": r.owner, "record_id": r.id,
                "file_name": "original.ogg", "size_bytes": 1000, "format": "ogg",
                "duration_ms": 60_000, "now": r.created_at} for r in batch])
            conn.executemany(q.records.INSERT_RECORD, [{
                "id": r.id, "owner_id": r.owner, "title": r.title,
                "original_filename": f"call-{r.id}.ogg", "duration_ms": 60_000,
                "size_bytes": 1000, "source": "http", "tg_chat_id": None,
                "tg_message_id": None, "state": "done", "original_file_id": "f" + r.id,
                "now": r.created_at} for r in batch])
            conn.executemany(q.spaces.MOVE_RECORD, [
                {"id": r.id, "space_id": r.space, "now": r.created_at}
                for r in batch if r.space is not None])
            conn.executemany(q.results.UPSERT_TEXT, [
                {"id": "t" + r.id, "record_id": r.id, "kind": "transcript",
                 "contents": r.transcript, "now": r.created_at}
                for r in batch if r.transcript is not None])
            conn.executemany(q.results.UPSERT_STRUCTURE, [
                {"id": "s" + r.id, "record_id": r.id, "version": STRUCTURE_ROW,
                 "contents": structure_of(r.transcript), "now": r.created_at}
                for r in batch if r.structure and r.transcript is not None])
        conn.executemany(q.spaces.UPSERT_SHARE, [
            {"record_id": rid, "user_id": p, "role": "viewer", "now": NOW}
            for rid, p in layout.shares])
        conn.execute(q.control.COMMIT)
    return Built(where=str(path), seconds=time.perf_counter() - started)


# -- PostgreSQL ------------------------------------------------------------------------

_SEARCH_INDEX = "idx_record_search_terms"
_RECORD_COLUMNS = ("id", "owner_id", "title", "original_filename", "duration_ms",
                   "size_bytes", "source", "state", "state_entered_at", "original_file_id",
                   "created_at", "updated_at", "space_id")


async def _copy(conn: asyncpg.Connection, table: str, columns: tuple[str, ...],
                rows: list[tuple[object, ...]]) -> None:
    if rows:
        await conn.copy_records_to_table(table, records=rows, columns=columns)


async def _load_postgres(url: str, layout: Layout) -> None:
    conn = await asyncpg.connect(url)
    try:
        async with conn.transaction():
            # The search triggers would mark each row stale for the writer's refresh;
            # the rows are written fresh below instead (this session only).
            await conn.execute("SET LOCAL session_replication_role = replica")
            await conn.execute("CREATE TEMP TABLE bench_terms (record_id text, terms text)"
                               " ON COMMIT DROP")
            await _copy(conn, "users", ("id", "provider_login", "created_at", "updated_at"),
                        [(p, p, NOW, NOW) for p in layout.people])
            await _copy(conn, "spaces", ("id", "name", "created_at"),
                        [(s, s, NOW) for s in layout.spaces])
            await _copy(conn, "space_members", ("space_id", "user_id", "role", "created_at"),
                        [(s, p, role, NOW) for s, p, role in layout.members])
            for batch in _batches(layout.records()):
                await _copy(conn, "files", ("id", "owner_id", "record_id", "file_name",
                                            "size_bytes", "format", "duration_ms",
                                            "created_at"),
                            [("f" + r.id, r.owner, r.id, "original.ogg", 1000, "ogg", 60_000,
                              r.created_at) for r in batch])
                await _copy(conn, "audio_records", _RECORD_COLUMNS, [
                    (r.id, r.owner, r.title, f"call-{r.id}.ogg", 60_000, 1000, "http", "done",
                     r.created_at, "f" + r.id, r.created_at, r.created_at, r.space)
                    for r in batch])
                await _copy(conn, "texts", ("id", "record_id", "kind", "contents",
                                            "created_at", "updated_at"),
                            [("t" + r.id, r.id, "transcript", r.transcript, r.created_at,
                              r.created_at) for r in batch if r.transcript is not None])
                await _copy(conn, "structures", ("id", "record_id", "version", "contents",
                                                 "created_at", "updated_at"),
                            [("s" + r.id, r.id, STRUCTURE_ROW, structure_of(r.transcript),
                              r.created_at, r.created_at)
                             for r in batch if r.structure and r.transcript is not None])
                await _copy(conn, "bench_terms", ("record_id", "terms"), [
                    (r.id, terms_literal(r.owner, title=r.title, brief="",
                                         original_filename=f"call-{r.id}.ogg",
                                         transcript=r.transcript or "", speaker_names="{}",
                                         topic_names="[]")) for r in batch])
            await _copy(conn, "record_shares", ("record_id", "user_id", "role", "created_at"),
                        [(rid, p, "viewer", NOW) for rid, p in layout.shares])
            # The GIN index built once over the loaded rows (as the migrations define
            # it), not updated row by row: minutes fewer at 200 000 transcripts.
            definition = await conn.fetchval(
                "SELECT indexdef FROM pg_indexes WHERE indexname = $1", _SEARCH_INDEX)
            await conn.execute(f"DROP INDEX {_SEARCH_INDEX}")
            await conn.execute("INSERT INTO record_search (record_id, stale, terms) "
                               "SELECT record_id, 0, terms::tsvector FROM bench_terms")
            await conn.execute("SET LOCAL maintenance_work_mem = '256MB'")
            await conn.execute(definition)
        await conn.execute("VACUUM ANALYZE")
    finally:
        await conn.close()


def build_postgres(url: str, layout: Layout) -> Built:
    """The archive in an empty PostgreSQL database (its URL), migrated here."""
    asyncio.run(migrate_postgres(url))
    started = time.perf_counter()
    asyncio.run(_load_postgres(url, layout))
    return Built(where=url, seconds=time.perf_counter() - started)


# -- a team's archive (the archive, ask and search benches) ----------------------------

TEAM_OWNERS = 200
OWNER_RECORDS = 40
BIG_OWNER_RECORDS = 20_000
TRANSCRIPT_WORDS = 300


@dataclass(frozen=True, slots=True, kw_only=True)
class Team:
    """200 owners; `owner` holds 40 records whatever the size, `big_owner` 20 000 where
    the archive has room for them (None below 40 000 records); the last `spare` records
    have no transcript (for a bench's own writes)."""

    layout: Layout
    owner: str
    big_owner: str | None
    spare: tuple[tuple[str, str], ...]
    """(record id, owner) of the records without a transcript."""


def team_archive(records: int, *, seed: int = 7, spare: int = 0,
                 structured: frozenset[str] = frozenset()) -> Team:
    """Transcripts of 300 words of a Zipf vocabulary, three-word titles, a record every
    ten minutes; the owners in `structured` also get each record's structure."""
    owners = [f"owner{n:03d}" for n in range(TEAM_OWNERS)]
    big = records >= 2 * BIG_OWNER_RECORDS
    plan = [owners[0]] * OWNER_RECORDS + ([owners[1]] * BIG_OWNER_RECORDS if big else [])
    rest = owners[2:] if big else owners[1:]
    plan += [rest[n % len(rest)] for n in range(records - len(plan))]
    spare_from = records - spare

    def made() -> Iterator[BenchRecord]:
        rng = random.Random(seed)
        words = Zipf(rng)
        order = list(plan)
        rng.shuffle(order)
        for n, owner in enumerate(order):
            title = words.text(3)
            text = None if n >= spare_from else words.text(TRANSCRIPT_WORDS)
            yield BenchRecord(id=f"r{n:07d}", owner=owner, created_at=created_at(n),
                              title=title, transcript=text, structure=owner in structured)

    shuffled = list(plan)
    shuffle_rng = random.Random(seed)
    Zipf(shuffle_rng)  # the same draws as `made` before its shuffle
    shuffle_rng.shuffle(shuffled)
    kept = tuple((f"r{n:07d}", owner) for n, owner in enumerate(shuffled) if n >= spare_from)
    return Team(layout=Layout(people=tuple(owners), records=made), owner=owners[0],
                big_owner=owners[1] if big else None, spare=kept)
