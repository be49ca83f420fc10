"""Who holds what: the grant `domain.access.may` decides on, spaces, members, shares,
and the pages of what one person may see (docs/sharing.md).

The grant is built here and nowhere else. A page of everything a person may
see is one statement that merges branches (their own records, each of their
spaces', those shared with them), each an index range scan with the page's
LIMIT, so a page costs (1 + spaces + 1) short scans whatever the archive's size,
and one record's columns per line of the page.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any

from transcriber.db import queries as q
from transcriber.db.postgres.search import owner_tsquery
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.lists import PageAfter, SearchAfter, SearchHit
from transcriber.db.reads.records import ListItem
from transcriber.db.reads.rows import columns
from transcriber.db.search import owner_match
from transcriber.domain.access import AccessRole, Grant, role_of
from transcriber.domain.search import Query


def grant_from_row(row: sqlite3.Row, *, user_id: str) -> Grant:
    return Grant(record_id=str(row["record_id"]), owner_id=str(row["owner_id"]),
                 space_id=row["space_id"], is_owner=row["owner_id"] == user_id,
                 space_role=role_of(row["space_role"]), share_role=role_of(row["share_role"]))


async def grant(readers: ReaderPool, *, record_id: str, user_id: str) -> Grant | None:
    """What `user_id` holds on the record; None when there is no such record."""
    row = await readers.fetch_one(q.spaces.GRANT, {"id": record_id, "user_id": user_id})
    return None if row is None else grant_from_row(row, user_id=user_id)


@dataclass(frozen=True, slots=True, kw_only=True)
class Space:
    id: str
    name: str
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Space:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class SpaceCount:
    """A space with how many members it has (the operator's list)."""

    id: str
    name: str
    created_at: str
    members: int

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SpaceCount:
        return cls(**columns(cls, row))


@dataclass(frozen=True, slots=True, kw_only=True)
class MySpace:
    """A space one person is a member of, with their role there."""

    id: str
    name: str
    created_at: str
    role: AccessRole

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> MySpace:
        return cls(**columns(cls, row, role=AccessRole(row["role"])))


@dataclass(frozen=True, slots=True, kw_only=True)
class Holder:
    """A space's member or a record's direct share: a login and its role."""

    login: str
    role: AccessRole
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Holder:
        return cls(**columns(cls, row, role=AccessRole(row["role"])))


async def space_by_name(readers: ReaderPool, *, name: str) -> Space | None:
    row = await readers.fetch_one(q.spaces.SPACE_BY_NAME, {"name": name})
    return None if row is None else Space.from_row(row)


async def space_by_id(readers: ReaderPool, *, space_id: str) -> Space | None:
    row = await readers.fetch_one(q.spaces.SPACE_BY_ID, {"id": space_id})
    return None if row is None else Space.from_row(row)


async def all_spaces(readers: ReaderPool) -> list[SpaceCount]:
    return [SpaceCount.from_row(row) for row in await readers.fetch_all(q.spaces.ALL_SPACES, {})]


async def spaces_of(readers: ReaderPool, *, user_id: str) -> list[MySpace]:
    rows = await readers.fetch_all(q.spaces.SPACES_OF_USER, {"user_id": user_id})
    return [MySpace.from_row(row) for row in rows]


async def role_in_space(readers: ReaderPool, *, space_id: str, user_id: str) -> AccessRole | None:
    row = await readers.fetch_one(q.spaces.ROLE_IN_SPACE,
                                  {"space_id": space_id, "user_id": user_id})
    return None if row is None else AccessRole(row["role"])


async def members(readers: ReaderPool, *, space_id: str) -> list[Holder]:
    rows = await readers.fetch_all(q.spaces.MEMBERS, {"space_id": space_id})
    return [Holder.from_row(row) for row in rows]


async def shares(readers: ReaderPool, *, record_id: str) -> list[Holder]:
    rows = await readers.fetch_all(q.spaces.SHARES_OF_RECORD, {"record_id": record_id})
    return [Holder.from_row(row) for row in rows]


async def default_space(readers: ReaderPool, *, user_id: str) -> str | None:
    row = await readers.fetch_one(q.spaces.DEFAULT_SPACE, {"user_id": user_id})
    return None if row is None or row["default_space_id"] is None else str(row["default_space_id"])


# -- pages -----------------------------------------------------------------------------------


def _after(after: PageAfter | None) -> dict[str, Any]:
    return {} if after is None else {"after_created_at": after.created_at, "after_id": after.id}


async def space_page(readers: ReaderPool, *, space_id: str, limit: int,
                     after: PageAfter | None = None) -> list[ListItem]:
    query = q.spaces.SPACE_PAGE_FIRST if after is None else q.spaces.SPACE_PAGE_AFTER
    rows = await readers.fetch_all(query, {"space_id": space_id, "limit": limit,
                                           **_after(after)})
    return [ListItem.from_row(row) for row in rows]


async def shared_page(readers: ReaderPool, *, user_id: str, limit: int,
                      after: PageAfter | None = None) -> list[ListItem]:
    query = q.spaces.SHARED_PAGE_FIRST if after is None else q.spaces.SHARED_PAGE_AFTER
    rows = await readers.fetch_all(query, {"user_id": user_id, "limit": limit,
                                           **_after(after)})
    return [ListItem.from_row(row) for row in rows]


async def visible_page(readers: ReaderPool, *, user_id: str, limit: int,
                       after: PageAfter | None = None) -> list[ListItem]:
    """Everything the person may see, newest first, each record once: one statement
    that merges the branches (`queries.spaces.VISIBLE_PAGE_*`)."""
    query = q.spaces.VISIBLE_PAGE_FIRST if after is None else q.spaces.VISIBLE_PAGE_AFTER
    rows = await readers.fetch_all(query, {"user_id": user_id, "limit": limit,
                                           **_after(after)})
    return [ListItem.from_row(row) for row in rows]


# -- search ---------------------------------------------------------------------------------


async def visible_owners(readers: ReaderPool, *, user_id: str) -> list[str]:
    rows = await readers.fetch_all(q.spaces.VISIBLE_OWNERS, {"user_id": user_id})
    return sorted({str(row["owner_id"]) for row in rows})


_SEARCHES = {
    "visible": (q.spaces.SEARCH_VISIBLE_FIRST, q.spaces.SEARCH_VISIBLE_AFTER),
    "shared": (q.spaces.SEARCH_SHARED_FIRST, q.spaces.SEARCH_SHARED_AFTER),
    "space": (q.spaces.SEARCH_SPACE_FIRST, q.spaces.SEARCH_SPACE_AFTER),
}


async def search_page(readers: ReaderPool, *, user_id: str, query: Query, limit: int,
                      kind: str = "visible", space_id: str | None = None,
                      after: SearchAfter | None = None) -> list[SearchHit]:
    """Records the person may see (`kind`: `visible`, `shared`, or `space` with
    `space_id`) that match the query, best first. The match holds every visible
    owner's keyed terms, one group per owner; the statement's filter decides."""
    expression = owner_tsquery if readers.dialect == "postgresql" else owner_match
    joiner = " | " if readers.dialect == "postgresql" else " OR "
    parts = [expression(owner, query) for owner in await visible_owners(readers, user_id=user_id)]
    groups = [f"({part})" for part in parts if part is not None]
    if not groups:
        return []
    params: dict[str, Any] = {"user_id": user_id, "match": joiner.join(groups), "limit": limit}
    if kind == "space":
        params["space_id"] = space_id
    first, later = _SEARCHES[kind]
    statement = first
    if after is not None:
        statement = later
        params.update(after_score=after.score, after_id=after.id)
    return [SearchHit.from_row(row) for row in await readers.fetch_all(statement, params)]
