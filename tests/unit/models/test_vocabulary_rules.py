"""The vocabulary's pure rules: terms cleaned, voices' names joined, the prompt, and the
near-miss correction a CTC model's words get."""

from __future__ import annotations

import pytest

from transcriber.domain.vocabulary import (
    MAX_PROMPT_CHARS,
    MAX_TERMS,
    VocabularyRefused,
    clean_terms,
    corrected,
    edit_distance,
    prompt_of,
    recognizer_terms,
    term_words,
)


def test_terms_are_trimmed_deduplicated_and_kept_in_order() -> None:
    assert clean_terms(["  Тимофей ", "GitLab", "gitlab", "", "Open  AI"]) == (
        "Тимофей", "GitLab", "Open AI")


@pytest.mark.parametrize("value", ["Anna", [1], ["x" * 65], ["a\x00b"],
                                   ["t"] * (MAX_TERMS + 1)])
def test_anything_but_a_list_of_short_strings_is_refused(value: object) -> None:
    with pytest.raises(VocabularyRefused):
        clean_terms(value)


def test_voice_names_join_after_the_terms() -> None:
    assert recognizer_terms(("Тимофей", "Anna"), ["anna", "Борис  Ельцин", ""]) == (
        "Тимофей", "Anna", "Борис Ельцин")


def test_a_spaces_terms_come_between_the_owners_and_the_voices_names_capped() -> None:
    assert recognizer_terms(("Тимофей",), ("GitLab", "тимофей"), ("Анна", "gitlab")) == (
        "Тимофей", "GitLab", "Анна")
    own = tuple(f"own{i}" for i in range(MAX_TERMS - 1))
    assert recognizer_terms(own, ("Space", "Other"), ("Анна",)) == (*own, "Space")


def test_the_prompt_is_cut_at_a_whole_term() -> None:
    assert prompt_of(()) is None
    assert prompt_of(("Тимофей", "GitLab")) == "Тимофей, GitLab"
    long = prompt_of(tuple(f"term{i:03d}" for i in range(MAX_TERMS)))
    assert long is not None
    assert len(long) <= MAX_PROMPT_CHARS
    assert long.endswith(long.split(", ")[-1])
    assert all(len(term) == 7 for term in long.split(", "))


def test_edit_distance_stops_at_its_limit() -> None:
    assert edit_distance("тимафей", "тимофей", limit=2) == 1
    assert edit_distance("kitten", "sitting", limit=5) == 3
    assert edit_distance("a", "abcdef", limit=2) == 3


def test_a_near_miss_becomes_the_term_and_nothing_else_does() -> None:
    words = term_words(("Тимофей Кравченко", "GitLab", "Яна"))
    assert corrected("тимафей", words) == "Тимофей"
    assert corrected("кравченка,", words) == "Кравченко,"  # punctuation kept
    assert corrected("гитлаб", words) == "гитлаб"  # another alphabet: too far
    assert corrected("gitlub", words) == "GitLab"
    assert corrected("кошка", words) == "кошка"  # too far from every term
    assert corrected("яма", words) == "яма"  # short words are never pulled
    assert corrected("ТИМОФЕЙ", words) == "Тимофей"  # the term's own spelling


def test_two_equally_near_terms_leave_the_word() -> None:
    words = term_words(("Марина", "Карина"))
    assert corrected("барина", words) == "барина"
    assert corrected("марина", words) == "Марина"
