"""Reading a question (`transcriber.domain.ask`): its words as any-of search terms, the
days it names, its language."""

from __future__ import annotations

from datetime import date

import pytest

from transcriber.domain.ask import AskScope, days_named, in_days, language_of, read_question

TODAY = date(2026, 2, 20)  # a Friday


@pytest.mark.parametrize(("text", "first", "after"), [
    ("what happened today", date(2026, 2, 20), date(2026, 2, 21)),
    ("what did we say yesterday", date(2026, 2, 19), date(2026, 2, 20)),
    ("что было вчера", date(2026, 2, 19), date(2026, 2, 20)),
    ("позавчера", date(2026, 2, 18), date(2026, 2, 19)),
    ("budget last week", date(2026, 2, 9), date(2026, 2, 16)),
    ("бюджет на прошлой неделе", date(2026, 2, 9), date(2026, 2, 16)),
    ("бюджет на этой неделе", date(2026, 2, 16), date(2026, 2, 23)),
    ("supplier last month", date(2026, 1, 1), date(2026, 2, 1)),
    ("поставщик в прошлом месяце", date(2026, 1, 1), date(2026, 2, 1)),
    ("в этом месяце", date(2026, 2, 1), date(2026, 3, 1)),
    ("last year", date(2025, 1, 1), date(2026, 1, 1)),
    ("в этом году", date(2026, 1, 1), date(2027, 1, 1)),
    ("продажи в январе", date(2026, 1, 1), date(2026, 2, 1)),
    ("sales in December", date(2025, 12, 1), date(2026, 1, 1)),  # the last December past
    ("в мае", date(2025, 5, 1), date(2025, 6, 1)),
])
def test_the_days_a_question_names(text: str, first: date, after: date) -> None:
    days, rest = days_named(text, today=TODAY)
    assert days == (first, after)
    assert len(rest) < len(text)


def test_a_month_crosses_the_year() -> None:
    days, _ = days_named("last month", today=date(2026, 1, 10))
    assert days == (date(2025, 12, 1), date(2026, 1, 1))
    assert days_named("no days here", today=TODAY) == (None, "no days here")


def test_question_words_are_dropped_and_the_rest_match_any_of_them() -> None:
    read = read_question("What did we decide about the supplier last month?", today=TODAY)
    assert read.query.any_term
    assert [term.stems for term in read.query.terms] == [("decid",), ("supplier",)]
    assert read.scope.date_from == date(2026, 1, 1)
    assert read.language == "en"
    russian = read_question("Что сказал Олег про бухгалтерию?", today=TODAY)
    assert russian.language == "ru"
    assert [term.form for term in russian.query.terms] == ["олег", "бухгалтерию"]
    assert "олег" in russian.names
    # Search syntax is not a question's: quotes and minus signs are plain.
    assert not any(t.excluded for t in read_question('"-budget"', today=TODAY).query.terms)
    assert read_question("what did we say?", today=TODAY).query.terms == ()


def test_a_given_scope_wins_over_the_days_named() -> None:
    scope = AskScope(date_from=date(2020, 1, 1))
    assert read_question("budget last week", today=TODAY, scope=scope).scope == scope
    assert in_days("2026-02-10T12:00:00Z", read_question("last week", today=TODAY).scope)
    assert not in_days("2026-02-16T00:00:00Z",
                       read_question("last week", today=TODAY).scope)
    assert language_of("hello") == "en"
