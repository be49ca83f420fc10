"""The writer creates no user whose login is not canonical (the doors' last guard)."""

from __future__ import annotations

import pytest

from transcriber.db import queries as q
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.text import LoginRefused


@pytest.mark.parametrize("login", ["alice\u00a0", "ali\u3164ce", "\uff41lice", " alice", ""])
async def test_a_non_canonical_login_creates_no_user(
    writer: Writer, readers: ReaderPool, login: str
) -> None:
    with pytest.raises(LoginRefused):
        await writer.ask(EnsureUser(login=login))
    assert await readers.fetch_one(q.users.SELECT_BY_LOGIN, {"login": login}) is None
    assert (await writer.ask(EnsureUser(login="alice"))).login == "alice"
