"""Users: created by their first request (docs/api.md, identity)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from transcriber.core.ids import new_id
from transcriber.db import queries as q
from transcriber.db.reads.users import User
from transcriber.db.writer import Command, WriteContext
from transcriber.domain.text import LoginRefused, canonical_login

__all__ = ["EnsureUser", "User"]  # User: the row type the command answers


@dataclass(frozen=True, slots=True, kw_only=True)
class EnsureUser(Command[User]):
    """Find the user by login or create it; never rewrites an existing user.

    Raises `LoginRefused` for a login `text.canonical_login` would not keep as is."""

    name: ClassVar[str] = "ensure_user"
    login: str
    display_name: str = ""
    email: str = ""

    async def execute(self, ctx: WriteContext) -> User:
        # The doors hand over canonical logins; anything else would be a look-alike
        # of somebody's (`LoginRefused`, nothing written).
        if canonical_login(self.login) != self.login:
            raise LoginRefused("is not in its canonical (NFKC) form")
        found = await _by_login(ctx, self.login)
        if found is not None:
            return found
        params = {"id": new_id(), "login": self.login, "name": self.display_name,
                  "email": self.email, "now": ctx.now()}
        cursor = await ctx.conn.execute(q.users.INSERT_NEW, params)
        if cursor.rowcount == 0:
            # Either another process created this login first, or the e-mail
            # belongs to somebody else: kept without it.
            await ctx.conn.execute(q.users.INSERT_NEW, {**params, "email": ""})
        created = await _by_login(ctx, self.login)
        assert created is not None
        return created


async def _by_login(ctx: WriteContext, login: str) -> User | None:
    async with ctx.conn.execute(q.users.SELECT_BY_LOGIN, {"login": login}) as cursor:
        row = await cursor.fetchone()
    return None if row is None else User.from_row(row)
