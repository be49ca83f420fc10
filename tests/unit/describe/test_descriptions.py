"""The limits every description is fitted to, the origin rule, the reply's heading."""

from __future__ import annotations

import pytest

from transcriber.domain import describe as descriptions
from transcriber.domain.describe import (
    BRIEF_MAX,
    TITLE_MAX,
    TOPIC_NAME_MAX,
    TOPICS_MAX,
    fit_brief,
    fit_title,
    fit_topics,
    reply_heading,
    writable,
)


def test_a_title_is_one_clean_line_cut_at_a_word() -> None:
    assert fit_title("  so\nthe\u202e quarterly   budget.  ") == "So the quarterly budget"
    long = "word " * 40
    title = fit_title(long)
    assert len(title) <= TITLE_MAX
    assert title.endswith("word")
    assert fit_title("«Отчёт за квартал»!") == "Отчёт за квартал"
    assert fit_title("") == ""


def test_a_brief_keeps_whole_sentences_within_its_limit() -> None:
    sentences = [f"Sentence number {n} says something about the budget." for n in range(6)]
    brief = fit_brief(" ".join(sentences))
    assert brief == " ".join(sentences[:3])
    assert len(fit_brief(" ".join(["x" * 150 + "."] * 3))) <= BRIEF_MAX
    assert fit_brief(" ".join(["x" * 150 + "."] * 3)).count(".") == 2
    one_long = "word " * 200
    cut = fit_brief(one_long)
    assert len(cut) <= BRIEF_MAX
    assert cut.endswith("…")


def test_topics_prefer_the_owners_own_names_and_stop_at_five() -> None:
    owner = ("Бюджет", "Mobile App")
    found = fit_topics(["new one", "mobile app", "бюджет", "Бюджет", "", "x" * 65, "a", "b",
                        "c", "d"], owner)
    assert found == ("Mobile App", "Бюджет", "new one", "a", "b")
    assert len(found) == TOPICS_MAX
    assert all(len(name) <= TOPIC_NAME_MAX for name in found)
    assert fit_topics(["Отчёт"], ("отчет",)) == ("отчет",)  # ё and case fold alike


@pytest.mark.parametrize(("origin", "replace_auto", "expected"), [
    (None, False, True), (None, True, True),
    ("auto", False, False), ("auto", True, True),
    ("human", False, False), ("human", True, False),
])
def test_a_persons_field_is_never_written(origin: str | None, replace_auto: bool,
                                          expected: bool) -> None:
    assert writable(origin, replace_auto=replace_auto) is expected


def test_the_reply_carries_the_brief_only_past_a_minute_and_no_title_that_is_all() -> None:
    assert reply_heading(title="Budget", brief="About the budget.", duration_ms=30_000,
                         transcript="We talk about the budget today.") == ("Budget", "")
    assert reply_heading(title="Budget", brief="About the budget.", duration_ms=61_000,
                         transcript="We talk about the budget today.") == (
        "Budget", "About the budget.")
    assert reply_heading(title="Hello there", brief="Hello there.", duration_ms=3000,
                         transcript="hello there!") == ("", "")


def test_first_line_is_the_first_sentence() -> None:
    assert descriptions.first_line("One. Two? Three!") == "One."
    assert descriptions.first_line("") == ""
