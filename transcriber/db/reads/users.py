"""People, found by their login (the proxy's `Remote-User`, or a Telegram login)."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns


@dataclass(frozen=True, slots=True, kw_only=True)
class User:
    id: str
    login: str
    name: str
    email: str
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> User:
        return cls(**columns(cls, row, login=row["provider_login"]))


async def by_login(readers: ReaderPool, *, login: str) -> User | None:
    row = await readers.fetch_one(q.users.SELECT_BY_LOGIN, {"login": login})
    return None if row is None else User.from_row(row)
