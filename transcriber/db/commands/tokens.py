"""Personal access tokens: made, revoked, and marked used (docs/api.md, "Tokens").

The commands never see a token's text: the door or the command line hashes it
(`transcriber.domain.tokens.new_token`) and hands over the hash.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.errors import Conflict, NotFound
from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.reads.tokens import TokenInfo
from transcriber.db.writer import Command, WriteContext

# More would be a script minting tokens in a loop, not a person
# (the default of `server.tokens_per_user_max`).
TOKENS_PER_USER_MAX = 100


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateToken(Command[TokenInfo]):
    """Store a new token's hash for `user_id`; raises `Conflict` when the person
    holds `most` tokens already (`server.tokens_per_user_max`)."""

    name: ClassVar[str] = "create_token"
    user_id: str
    token_name: str
    scope: str
    token_hash: str
    expires_at: str | None
    most: int = TOKENS_PER_USER_MAX

    async def execute(self, ctx: WriteContext) -> TokenInfo:
        async with ctx.conn.execute(q.tokens.COUNT_OF_USER, {"user_id": self.user_id}) as cur:
            row = await cur.fetchone()
        if row is not None and int(row["n"]) >= self.most:
            raise Conflict(f"at most {self.most} tokens per person")
        token_id = new_id()
        await ctx.conn.execute(q.tokens.INSERT, {
            "id": token_id, "user_id": self.user_id, "name": self.token_name,
            "scope": self.scope, "token_hash": self.token_hash, "now": ctx.now(),
            "expires_at": self.expires_at,
        })
        async with ctx.conn.execute(q.tokens.BY_ID, {"id": token_id}) as cursor:
            created = await cursor.fetchone()
        assert created is not None
        return TokenInfo.from_row(created)


@dataclass(frozen=True, slots=True, kw_only=True)
class RevokeToken(Command[None]):
    """Delete the token: its next request is 401. `user_id` limits it to that
    person's tokens (the web app); None (the command line) to any. Raises `NotFound`."""

    name: ClassVar[str] = "revoke_token"
    savepoint: ClassVar[bool] = False  # one DELETE, nothing after it
    token_id: str
    user_id: str | None = None

    async def execute(self, ctx: WriteContext) -> None:
        if self.user_id is None:
            cursor = await ctx.conn.execute(q.tokens.DELETE, {"id": self.token_id})
        else:
            cursor = await ctx.conn.execute(q.tokens.DELETE_OWNED,
                                            {"id": self.token_id, "user_id": self.user_id})
        if cursor.rowcount != 1:
            raise NotFound(f"token {self.token_id} not found")


@dataclass(frozen=True, slots=True, kw_only=True)
class TouchToken(Command[None]):
    """`last_used_at` = now, unless it was set less than `every_seconds` ago (so at
    most one write a minute per token, whichever process asks)."""

    name: ClassVar[str] = "touch_token"
    savepoint: ClassVar[bool] = False  # one UPDATE, nothing after it
    token_id: str
    every_seconds: int

    async def execute(self, ctx: WriteContext) -> None:
        await ctx.conn.execute(q.tokens.TOUCH, {
            "id": self.token_id, "now": ctx.now(),
            "cutoff": ctx.now(plus_seconds=-self.every_seconds)})
