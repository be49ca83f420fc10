"""Word forms and the query syntax: the pure half of search (`transcriber.domain.search`,
`transcriber.domain.search`), on the word-form table of `tests/helpers/word_forms.py`."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers.word_forms import FORMS, NEAR_MISSES, PARTIALS
from transcriber.core.errors import QueryTooBroad
from transcriber.db.search import owner_key
from transcriber.domain.search import (
    PARTIAL_MIN,
    PARTIALS_MAX,
    TERMS_MAX,
    WORD_MAX,
    Term,
    fold,
    form_of,
    forms_and_stems,
    marks,
    parse,
    stem,
    words,
)


def _marked(text: str, query: str) -> list[str]:
    return [text[start:end] for start, end in marks(text, parse(query)).spans]


def test_the_table_is_large_enough() -> None:
    assert len(FORMS) >= 60
    assert len({typed for typed, _, _ in FORMS}) >= 25


@pytest.mark.parametrize(("typed", "text", "form"), FORMS)
def test_every_form_of_the_table_is_found_and_marked(typed: str, text: str, form: str) -> None:
    assert form in _marked(text, typed)


@pytest.mark.parametrize(("typed", "text", "word"), NEAR_MISSES)
def test_a_word_sharing_a_beginning_is_not_found_unless_typed_as_a_prefix(
    typed: str, text: str, word: str,
) -> None:
    assert _marked(text, typed) == []
    assert word in _marked(text, typed + "*")


@pytest.mark.parametrize(("typed", "text", "form"), PARTIALS)
def test_a_long_word_typed_in_part_finds_the_whole_word(typed: str, text: str,
                                                         form: str) -> None:
    assert len(typed) >= PARTIAL_MIN
    assert form in _marked(text, typed)
    (term,) = parse(typed).terms
    assert term.partial
    assert not term.prefix


def test_a_short_or_quoted_word_is_never_read_as_typed_in_part() -> None:
    assert not parse("котл").terms[0].partial
    assert _marked("Котлета остыла.", "котл") == []
    assert not parse('"поставщ"').terms[0].partial
    assert _marked("Цены поставщиков.", '"поставщ"') == []
    assert not parse("поставщ*").terms[0].partial  # a prefix already


def test_partial_words_are_capped_and_the_rest_stay_whole() -> None:
    query = parse(" ".join(f"слово{n:02d}" for n in range(PARTIALS_MAX + 3)))
    assert [term.partial for term in query.terms] == (
        [True] * PARTIALS_MAX + [False] * 3)


def test_folding() -> None:
    assert fold("ОТЧЁТ") == "отчет"
    assert fold("Йогурт") == "йогурт"  # й is a letter of its own, never и
    assert fold("Café") == "cafe"
    assert stem(fold("Отчёты")) == stem("отчет") == "отчет"
    assert stem("12345") == "12345"
    found = words("Звонок в 9:30, «отчёт»!")
    assert [(w.start, w.end, w.form) for w in found] == [
        (0, 6, "звонок"), (7, 8, "в"), (9, 10, "9"), (11, 13, "30"), (16, 21, "отчет")]


def test_the_syntax() -> None:
    query = parse('отчёт* "конца недели" -черновик -"старый план" budget')
    assert query.terms == (
        Term(stems=("отчет",), prefix=True, form="отчет"),
        Term(stems=("конц", "недел"), form="недели"),
        Term(stems=("черновик",), form="черновик", excluded=True),
        Term(stems=("стар", "план"), form="план", excluded=True),
        Term(stems=("budget",), form="budget", partial=True),
    )
    assert parse('"unclosed quote').terms == (Term(stems=("unclos", "quot"), form="quote"),)
    assert parse("- * \" '' (((").terms == ()
    assert len(parse(" ".join(f"w{n}" for n in range(40))).terms) == TERMS_MAX


def test_a_phrase_matches_its_words_in_order_only() -> None:
    text = "Отправь до конца недели, а не недели конца."
    assert _marked(text, '"конца недели"') == ["конца недели"]
    assert _marked(text, '"недели до"') == []
    assert _marked("He reported budgets", '"report budget"') == ["reported budgets"]


def test_marks_merge_and_count_the_terms_a_text_holds() -> None:
    held = marks("Отчёт за неделю: отчёты и отчет.", parse("отчет неделя план"))
    assert held.terms == 2
    assert held.spans == ((0, 5), (9, 15), (17, 23), (26, 31))
    assert marks("ничего", parse("-ничего")).spans == ()  # exclusions mark nothing


@given(st.text(max_size=80))
def test_any_text_parses_and_marks_in_order_within_the_text(text: str) -> None:
    try:
        query = parse(text)
    except QueryTooBroad:  # the one refusal: the prefix caps
        return
    held = marks(text, query)
    previous_end = -1
    for start, end in held.spans:
        assert 0 <= start < end <= len(text)
        assert start > previous_end
        previous_end = end


@given(st.lists(st.sampled_from(["неделя", "недели", "отчёт", "отчеты", "report", "reported",
                                 "квартальный", "встречу", "zeta"]), min_size=1, max_size=6))
def test_a_text_is_found_by_each_of_its_own_words(chosen: list[str]) -> None:
    text = " ".join(chosen)
    for word in chosen:
        assert marks(text, parse(word)).terms == 1


def test_a_word_over_word_max_is_cut_alike_in_the_index_the_query_and_the_marks() -> None:
    """Issue 39 row 3: PostgreSQL refuses a lexeme over 2 046 bytes; every word is cut
    to WORD_MAX code points here, once, for both engines, the query and the marks."""
    long = "щ" * 1100
    text = f"начало {long}ы конец"
    found = words(text)
    assert [len(word.form) for word in found] == [6, WORD_MAX, 5]
    assert found[1].end - found[1].start == 1101  # the mark covers the whole word
    assert forms_and_stems(long)[0][0] == long[:WORD_MAX]
    term = parse(long).terms[0]
    assert term.stems == (stem(long[:WORD_MAX]),)
    assert _marked(text, long) == [long + "ы"]
    assert _marked(text, long[:5] + "*") == [long + "ы"]
    worst = "\U00020000" * 1000  # a CJK letter of 4 bytes of UTF-8
    lexeme = owner_key("owner") + "=" + forms_and_stems(worst)[0][0]
    assert len(lexeme.encode()) <= 2046
    # "ß" folds to "ss": the cut counts the folded form, never more than WORD_MAX.
    assert len(form_of("ß" * 300)) == WORD_MAX
