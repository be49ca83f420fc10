"""Personal access tokens: a person's list, and the token a request presents."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.rows import columns
from transcriber.db.reads.users import User


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenInfo:
    """What a list shows of a token: never the token, nor its hash."""

    id: str
    name: str
    scope: str
    created_at: str
    expires_at: str | None
    last_used_at: str | None
    login: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TokenInfo:
        return cls(**columns(cls, row, login=row["provider_login"]))


@dataclass(frozen=True, slots=True, kw_only=True)
class Bearer:
    """A stored token found by the hash a request presented, with its owner."""

    token_id: str
    token_hash: str
    scope: str
    expires_at: str | None
    last_used_at: str | None
    user: User

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> Bearer:
        return cls(**columns(cls, row, user=User.from_row(row)))


async def bearer(readers: ReaderPool, *, token_hash: str) -> Bearer | None:
    row = await readers.fetch_one(q.tokens.BEARER_BY_HASH, {"token_hash": token_hash})
    return None if row is None else Bearer.from_row(row)


async def of_user(readers: ReaderPool, *, user_id: str) -> list[TokenInfo]:
    return [TokenInfo.from_row(row)
            for row in await readers.fetch_all(q.tokens.OF_USER, {"user_id": user_id})]


async def every(readers: ReaderPool) -> list[TokenInfo]:
    return [TokenInfo.from_row(row) for row in await readers.fetch_all(q.tokens.ALL)]
