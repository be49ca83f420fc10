"""A word longer than PostgreSQL takes as a lexeme (issue 39, row 3): cut the same way
on both engines, and never failing anyone else's command of the writer's batch."""

from __future__ import annotations

import asyncio
from typing import Any

import asyncpg
import pytest

from tests.helpers.database import TestDatabase
from tests.helpers.factories import make_record, make_user
from tests.helpers.search import search_row_problems
from transcriber.core.ids import new_id
from transcriber.core.observability import SEARCH_REFRESH_FAILURES
from transcriber.db import reads
from transcriber.db.commands.edits import EditRecord
from transcriber.db.commands.files import StoredFile
from transcriber.db.commands.records import AcceptRecord
from transcriber.db.commands.users import User
from transcriber.db.postgres import search as pg_search
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.search import WORD_MAX, parse

# 1 100 Cyrillic letters, no space: 2 200 bytes of UTF-8, over PostgreSQL's 2 046.
LONG_WORD = ("абвгдежзийклмнопрстуфхцчшщыэюя" * 37)[:1100]


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def _accept(owner: User, filename: str) -> AcceptRecord:
    file_id = new_id()
    return AcceptRecord(
        record_id=new_id(), owner_id=owner.id,
        original=StoredFile(id=file_id, file_name=f"{file_id}.wav", size_bytes=100,
                            format="wav", duration_ms=1000),
        original_filename=filename, duration_ms=1000, source="http")


async def _found(readers: ReaderPool, owner: User, typed: str) -> list[str]:
    hits = await reads.lists.search_page(readers, owner_id=owner.id, query=parse(typed),
                                         limit=50)
    return sorted(hit.item.id for hit in hits)


async def _batch(writer: Writer, commands: list[Any]) -> list[Any]:
    """Queued before the writer takes any: one batch, one transaction."""
    futures = [writer.submit(command) for command in commands]
    return list(await asyncio.gather(*futures, return_exceptions=True))


async def test_a_1100_letter_word_is_cut_alike_and_fails_no_one_in_its_batch(
    writer: Writer, readers: ReaderPool, database: TestDatabase,
) -> None:
    alice, bob, carol = [await make_user(writer, login) for login in ("alice", "bob", "carol")]
    alice_record = await make_record(writer, alice)
    bob_record = await make_record(writer, bob)
    answers = await _batch(writer, [
        _accept(carol, "planning.wav"),
        EditRecord(record_id=alice_record, owner_id=alice.id, brief=f"{LONG_WORD} отчёт"),
        EditRecord(record_id=bob_record, owner_id=bob.id, title="Бюджет на квартал"),
        _accept(bob, "minutes.wav"),
        EditRecord(record_id=alice_record, owner_id=alice.id, title=LONG_WORD + "ы"),
    ])
    assert not [answer for answer in answers if isinstance(answer, BaseException)], answers
    carol_record = answers[0].record_id

    # The whole word, any longer word with the same first WORD_MAX letters, the cut
    # word itself and a prefix of it: one term, on both engines.
    assert await _found(readers, alice, LONG_WORD) == [alice_record]
    assert await _found(readers, alice, LONG_WORD[:WORD_MAX] + "xyz") == [alice_record]
    assert await _found(readers, alice, LONG_WORD[:WORD_MAX]) == [alice_record]
    assert await _found(readers, alice, LONG_WORD[:12] + "*") == [alice_record]
    assert await _found(readers, alice, "отчет") == [alice_record]
    assert await _found(readers, bob, "бюджет") == [bob_record]
    assert await _found(readers, carol, "planning") == [carol_record]
    assert await _found(readers, bob, LONG_WORD) == []
    if database.engine == "postgresql":
        assert search_row_problems(database) == []


async def test_a_refused_search_refresh_fails_only_its_own_command(
    writer: Writer, readers: ReaderPool, database: TestDatabase,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """PostgreSQL refuses one command's terms (here: the pre-cut behaviour, a lexeme of
    2 200 bytes, forced): that command fails alone, the others of its batch commit."""
    if database.engine != "postgresql":
        pytest.skip("SQLite's index has no lexeme limit; its writer has no refresh")
    real = pg_search.terms_literal

    def refused_for_poison(owner_id: str, **text: Any) -> str:
        literal = real(owner_id, **text)
        return literal + " " + pg_search._quote(LONG_WORD) if text["title"] == "poison" \
            else literal

    monkeypatch.setattr(pg_search, "terms_literal", refused_for_poison)
    alice, bob = [await make_user(writer, login) for login in ("alice", "bob")]
    alice_record = await make_record(writer, alice)
    bob_record = await make_record(writer, bob)
    failures = SEARCH_REFRESH_FAILURES._value.get()
    answers = await _batch(writer, [
        EditRecord(record_id=bob_record, owner_id=bob.id, title="Бюджет"),
        EditRecord(record_id=alice_record, owner_id=alice.id, title="poison"),
        _accept(bob, "minutes.wav"),
    ])
    assert answers[0] is None
    assert isinstance(answers[1], asyncpg.ProgramLimitExceededError)
    assert not isinstance(answers[2], BaseException)
    assert SEARCH_REFRESH_FAILURES._value.get() == failures + 1
    assert await _found(readers, bob, "бюджет") == [bob_record]
    assert await _found(readers, bob, "minutes") == [answers[2].record_id]
    assert await _found(readers, alice, "poison") == []
    assert database.scalar("SELECT title FROM audio_records WHERE id = :id",
                           {"id": alice_record}) != "poison"
    monkeypatch.undo()
    assert search_row_problems(database) == []
