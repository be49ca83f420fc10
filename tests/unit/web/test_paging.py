"""Cursors, limits and search terms."""

from __future__ import annotations

import pytest
from aiohttp.test_utils import make_mocked_request
from hypothesis import given
from hypothesis import strategies as st

from transcriber.core.ids import new_id
from transcriber.db.postgres.search import owner_tsquery
from transcriber.db.search import owner_key, owner_match
from transcriber.domain.search import PREFIX_MIN, PREFIXES_MAX, TERMS_MAX, Query
from transcriber.web.errors import ApiError
from transcriber.web.paging import (
    PageAfter,
    SearchAfter,
    decode_cursor,
    encode_cursor,
    parse_limit,
    parse_query,
)
from transcriber.web.texts import MESSAGES, language_of


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
    # A bare word of five letters or more may be typed in part: its form is a prefix too.
    assert _match(parse_query('Budgets "meeting'), "u1") == (
        f'({stems} : "{k}budget" OR {{forms}} : "{k}budgets"*) AND {stems} : "{k}meet"')
    assert _match(parse_query("NEAR(a b) OR cd*"), "u1") == (
        f'{stems} : "{k}near {k}a" AND {stems} : "{k}b" AND '
        f'{stems} : "{k}or" AND ({stems} : "{k}cd"* OR {{forms}} : "{k}cd"*)')
    assert _match(parse_query("!!! ---"), "u1") is None
    assert _match(parse_query("___"), "u1") is None
    assert _match(parse_query("Звонками"), "u1") == (
        f'({stems} : "{k}звонк" OR {{forms}} : "{k}звонками"*)')
    assert _match(parse_query("звонок"), "u1") == (
        f'({stems} : "{k}звонок" OR {{forms}} : "{k}звонок"*)')
    assert _match(parse_query("звон"), "u1") == f'{stems} : "{k}звон"'
    # One typed word that holds several stays one phrase, each word the owner's.
    assert _match(parse_query("e_mail"), "u1") == f'{stems} : "{k}e {k}mail"'
    assert _match(parse_query("отчёт -черновик"), "u1") == (
        f'(({stems} : "{k}отчет" OR {{forms}} : "{k}отчет"*)) NOT ({stems} : "{k}черновик")')
    # An exclusion alone finds nothing (it would read all of the owner's records).
    assert _match(parse_query("-черновик"), "u1") is None
    assert owner_key("u2") != k


def test_overlong_query_is_refused() -> None:
    with pytest.raises(ApiError):
        parse_query("a" * 201)


@pytest.mark.parametrize(("typed", "reason"), [
    ("п*", "prefix_too_short"), ("отчёт a*", "prefix_too_short"), ("-x*", "prefix_too_short"),
    ("ab* cd* ef* gh* ij*", "too_many_prefixes"),
    (" ".join(f"{letter}*" for letter in "абвгдежзийклмноп"), "prefix_too_short"),
])
def test_a_query_past_the_prefix_caps_is_refused_in_english_and_russian(
        typed: str, reason: str) -> None:
    """Issue 39 row 4: 16 one-letter prefixes expanded to most of a transcript's words."""
    for language in ("en", "ru"):
        with pytest.raises(ApiError) as refused:
            parse_query(typed, language=language)
        assert (refused.value.status, refused.value.code) == (400, "query_too_broad")
        assert refused.value.message == MESSAGES[language][reason]
    assert MESSAGES["en"][reason] != MESSAGES["ru"][reason]
    assert parse_query("ab* cd* ef* gh* отчёт").terms  # four prefixes and a word: read


def test_the_postgresql_query_holds_the_same_keyed_terms() -> None:
    """The tsquery of PostgreSQL: the same owner-keyed stems (phrases in order with
    `<->`, a prefix on the stem or the folded form, exclusions), quoted as literals."""
    k = owner_key("u1")
    assert owner_tsquery("u1", parse_query('Budgets "meeting')) == (
        f"('{k}budget' | '{k}=budgets':*) & '{k}meet'")
    assert owner_tsquery("u1", parse_query("звон план")) == f"'{k}звон' & '{k}план'"
    assert owner_tsquery("u1", parse_query("e_mail cd*")) == (
        f"('{k}e' <-> '{k}mail') & ('{k}cd':* | '{k}=cd':*)")
    assert owner_tsquery("u1", parse_query("отчёт -черновик")) == (
        f"(('{k}отчет' | '{k}=отчет':*)) & !('{k}черновик')")
    assert owner_tsquery("u1", parse_query("-only")) is None


@pytest.mark.parametrize(("header", "language"), [
    ("", "en"), ("ru-RU,ru;q=0.9,en;q=0.8", "ru"), ("en-US,ru;q=0.5", "en"),
    ("de,ru;q=0.3", "ru"), ("ru;q=0,en;q=0.1", "en"), ("ru;q=bogus", "en"), ("*", "en"),
])
def test_the_language_of_an_error_follows_accept_language(header: str, language: str) -> None:
    request = make_mocked_request("GET", "/", headers={"Accept-Language": header})
    assert language_of(request) == language


@given(st.text(alphabet="аб cd*-\"", max_size=120))
def test_no_query_read_expands_past_the_caps(typed: str) -> None:
    """Whatever is typed, a query that is read holds at most PREFIXES_MAX prefixes of
    PREFIX_MIN letters or more, and its expressions expand no more than those."""
    try:
        query = parse_query(typed)
    except ApiError as refused:
        code = refused.code
        query = None
    if query is None:
        assert code == "query_too_broad"
        return
    prefixes = [term for term in query.terms if term.prefix]
    assert len(query.terms) <= TERMS_MAX
    assert len(prefixes) <= PREFIXES_MAX
    assert all(len(term.form) >= PREFIX_MIN for term in prefixes)
    expression = owner_tsquery("u1", query) or ""
    assert expression.count(":*") <= 2 * PREFIXES_MAX  # a prefix: its stem and its form
    assert (owner_match("u1", query) or "").count('"*') <= 2 * PREFIXES_MAX
