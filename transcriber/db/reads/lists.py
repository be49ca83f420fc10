"""Pages of the archive: an owner's records, a topic's, a search's; the owner's topics.

Keyset pages: plain and topic pages newest first on `(created_at, id)`,
search pages best first on `(score, id)` (equal scores newest first), topics
by name. Each read asks for `limit` rows after the key given (from the start
without one); the caller asks one more than it shows to learn whether a next
page exists.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from transcriber.db import queries as q
from transcriber.db.postgres.search import owner_tsquery
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.records import ListItem
from transcriber.db.reads.rows import columns
from transcriber.db.search import owner_match
from transcriber.domain.search import Query


@dataclass(frozen=True, slots=True, kw_only=True)
class PageAfter:
    """The sort key of the last record of a plain or topic page."""

    created_at: str
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchAfter:
    """The sort key of the last record of a search page."""

    score: float
    id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchHit:
    item: ListItem
    score: float
    """bm25: lower is a better match."""

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SearchHit:
        return cls(item=ListItem.from_row(row), score=row["score"])


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicCount:
    name: str
    records: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TopicCount:
        return cls(**columns(cls, row))


def _after_page(after: PageAfter | None) -> dict[str, Any]:
    return {} if after is None else {"after_created_at": after.created_at, "after_id": after.id}


async def owner_page(readers: ReaderPool, *, owner_id: str, limit: int,
                     after: PageAfter | None = None) -> list[ListItem]:
    query = q.archive.PAGE_FIRST if after is None else q.archive.PAGE_AFTER
    params = {"owner_id": owner_id, "limit": limit, **_after_page(after)}
    return [ListItem.from_row(row) for row in await readers.fetch_all(query, params)]


async def topic_page(readers: ReaderPool, *, owner_id: str, topic: str, limit: int,
                     after: PageAfter | None = None) -> list[ListItem]:
    query = q.archive.TOPIC_PAGE_FIRST if after is None else q.archive.TOPIC_PAGE_AFTER
    params = {"owner_id": owner_id, "topic": topic, "limit": limit, **_after_page(after)}
    return [ListItem.from_row(row) for row in await readers.fetch_all(query, params)]


async def search_page(readers: ReaderPool, *, owner_id: str, query: Query, limit: int,
                      after: SearchAfter | None = None) -> list[SearchHit]:
    """The owner's records that match a parsed query, best first: FTS5 on SQLite
    (`transcriber.db.search.owner_match`), a tsquery on PostgreSQL
    (`transcriber.db.postgres.search.owner_tsquery`), the same terms either way.
    Nothing required (an exclusion alone): no records."""
    owner_expression = owner_tsquery if readers.dialect == "postgresql" else owner_match
    match = owner_expression(owner_id, query)
    if match is None:
        return []
    params: dict[str, Any] = {"owner_id": owner_id, "match": match, "limit": limit}
    statement = q.archive.SEARCH_FIRST
    if after is not None:
        statement = q.archive.SEARCH_AFTER
        params.update(after_score=after.score, after_id=after.id)
    return [SearchHit.from_row(row) for row in await readers.fetch_all(statement, params)]


async def owner_topics(readers: ReaderPool, *, owner_id: str, limit: int,
                       after_name: str | None = None) -> list[TopicCount]:
    params: dict[str, Any] = {"owner_id": owner_id, "limit": limit}
    if after_name is None:
        query = q.edits.OWNER_TOPICS_FIRST
    else:
        query = q.edits.OWNER_TOPICS_AFTER
        params["after_name"] = after_name
    return [TopicCount.from_row(row) for row in await readers.fetch_all(query, params)]
