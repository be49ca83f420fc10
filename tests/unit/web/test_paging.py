"""Cursors, limits and search terms."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcriber.db.postgres.search import owner_tsquery
from transcriber.db.search import owner_key, owner_match
from transcriber.ids import new_id
from transcriber.search_query import Query
from transcriber.web.errors import ApiError
from transcriber.web.paging import (
    PageAfter,
    SearchAfter,
    decode_cursor,
    encode_cursor,
    parse_limit,
    parse_query,
)


def test_cursors_round_trip() -> None:
    page = PageAfter(created_at="2026-01-01T00:00:00Z", id=new_id())
    search = SearchAfter(score=-1.2345678901234567, id=new_id())
    assert decode_cursor(encode_cursor(page), search=False) == page
    assert decode_cursor(encode_cursor(search), search=True) == search


def test_cursor_of_the_other_kind_is_refused() -> None:
    page = encode_cursor(PageAfter(created_at="2026-01-01T00:00:00Z", id=new_id()))
    with pytest.raises(ApiError) as caught:
        decode_cursor(page, search=True)
    assert caught.value.status == 400


@given(st.text(max_size=300))
def test_any_cursor_text_is_a_key_or_a_400(raw: str) -> None:
    for search in (False, True):
        try:
            decode_cursor(raw, search=search)
        except ApiError as exc:
            status = exc.status
        else:
            status = 200
        assert status in (200, 400)


@pytest.mark.parametrize("raw", ["0", "101", "-1", "1.5", "abc", "½", "٣"])
def test_bad_limits(raw: str) -> None:
    with pytest.raises(ApiError):
        parse_limit(raw, default=30, maximum=100)


def test_limits() -> None:
    assert parse_limit(None, default=30, maximum=100) == 30
    assert parse_limit("", default=30, maximum=100) == 30
    assert parse_limit("100", default=30, maximum=100) == 100


def _match(query: Query, owner_id: str) -> str | None:
    return owner_match(owner_id, query)


def test_every_term_becomes_a_quoted_stem_of_the_owner() -> None:
    k = owner_key("u1")
    stems = "{title brief original_filename transcript speakers topics}"
    assert _match(parse_query('Budgets "meeting'), "u1") == (
        f'{stems} : "{k}budget" AND {stems} : "{k}meet"')
    assert _match(parse_query("NEAR(a b) OR c*"), "u1") == (
        f'{stems} : "{k}near {k}a" AND {stems} : "{k}b" AND '
        f'{stems} : "{k}or" AND ({stems} : "{k}c"* OR {{forms}} : "{k}c"*)')
    assert _match(parse_query("!!! ---"), "u1") is None
    assert _match(parse_query("___"), "u1") is None
    assert _match(parse_query("Звонками"), "u1") == f'{stems} : "{k}звонк"'
    # One typed word that holds several stays one phrase, each word the owner's.
    assert _match(parse_query("e_mail"), "u1") == f'{stems} : "{k}e {k}mail"'
    assert _match(parse_query("отчёт -черновик"), "u1") == (
        f'({stems} : "{k}отчет") NOT ({stems} : "{k}черновик")')
    # An exclusion alone finds nothing (it would read all of the owner's records).
    assert _match(parse_query("-черновик"), "u1") is None
    assert owner_key("u2") != k


def test_overlong_query_is_refused() -> None:
    with pytest.raises(ApiError):
        parse_query("a" * 201)


def test_the_postgresql_query_holds_the_same_keyed_terms() -> None:
    """The tsquery of PostgreSQL: the same owner-keyed stems (phrases in order with
    `<->`, a prefix on the stem or the folded form, exclusions), quoted as literals."""
    k = owner_key("u1")
    assert owner_tsquery("u1", parse_query('Budgets "meeting')) == f"'{k}budget' & '{k}meet'"
    assert owner_tsquery("u1", parse_query("e_mail c*")) == (
        f"('{k}e' <-> '{k}mail') & ('{k}c':* | '{k}=c':*)")
    assert owner_tsquery("u1", parse_query("отчёт -черновик")) == (
        f"('{k}отчет') & !('{k}черновик')")
    assert owner_tsquery("u1", parse_query("-only")) is None
