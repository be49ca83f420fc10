"""A person's vocabulary: names and terms the recognizer is told (pure).

The terms a person keeps (`PUT /app/vocabulary`) come first, then those of the space
the record is in (`PUT /app/spaces/{id}/vocabulary`), then the names they gave
their known voices (joined automatically: a name typed once is a name the recognizer
should know), at most `MAX_TERMS` in all. A recognizer that takes a prompt gets them
as one (Whisper's `hotwords`, `prompt_of`); one that does not (GigaAM's CTC) has its
near-miss words put right afterwards (`corrected`): a word within a small edit
distance of one word of a term, and not itself a word of the vocabulary, becomes it.
The distances are kept small (a quarter of the word, at most 2 edits, words of 4
letters or more) so that common words are not pulled to a name
(docs/recognition.md, "Vocabulary", measures the recall it buys).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence

from transcriber.core.errors import TranscriberError

MAX_TERMS = 200
MAX_TERM_CHARS = 64
# Whisper's prompt holds at most half its 448-token window; a term is a few tokens.
MAX_PROMPT_CHARS = 600
MIN_CORRECTED_CHARS = 4
MAX_EDITS = 2


class VocabularyRefused(TranscriberError):
    """A vocabulary that is not a list of short strings (the message says which rule)."""


def clean_terms(value: object) -> tuple[str, ...]:
    """The terms as kept: strings, trimmed, inner spaces collapsed, duplicates (by
    case) dropped, in the order given; `VocabularyRefused` otherwise."""
    if not isinstance(value, list):
        raise VocabularyRefused("terms must be a list of strings")
    if len(value) > MAX_TERMS:
        raise VocabularyRefused(f"at most {MAX_TERMS} terms")
    kept: list[str] = []
    seen: set[str] = set()
    for item in value:
        if not isinstance(item, str):
            raise VocabularyRefused("terms must be a list of strings")
        term = " ".join(unicodedata.normalize("NFC", item).split())
        if not term:
            continue
        if len(term) > MAX_TERM_CHARS or not term.isprintable():
            raise VocabularyRefused(f"a term is at most {MAX_TERM_CHARS} printable characters")
        if term.casefold() not in seen:
            seen.add(term.casefold())
            kept.append(term)
    return tuple(kept)


def recognizer_terms(*lists: Iterable[str]) -> tuple[str, ...]:
    """The lists joined in their order (the record owner's terms, the space's, the
    names of the owner's known voices), each term once (by case), at most `MAX_TERMS`."""
    joined: list[str] = []
    seen: set[str] = set()
    for terms in lists:
        for given in terms:
            term = " ".join(given.split())
            if term and term.casefold() not in seen and len(joined) < MAX_TERMS:
                seen.add(term.casefold())
                joined.append(term)
    return tuple(joined)


def prompt_of(terms: Sequence[str]) -> str | None:
    """The terms as one prompt (comma-separated), cut at a whole term; None: none."""
    prompt = ""
    for term in terms:
        longer = f"{prompt}, {term}" if prompt else term
        if len(longer) > MAX_PROMPT_CHARS:
            break
        prompt = longer
    return prompt or None


def edit_distance(a: str, b: str, *, limit: int) -> int:
    """Levenshtein distance, stopping early once it exceeds `limit` (then limit + 1)."""
    if abs(len(a) - len(b)) > limit:
        return limit + 1
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            current.append(min(previous[j] + 1, current[j - 1] + 1,
                               previous[j - 1] + (char != other)))
        if min(current) > limit:
            return limit + 1
        previous = current
    return previous[-1]


def _strip(word: str) -> tuple[str, str, str]:
    """A word's leading punctuation, its letters, its trailing punctuation."""
    start, end = 0, len(word)
    while start < end and not word[start].isalnum():
        start += 1
    while end > start and not word[end - 1].isalnum():
        end -= 1
    return word[:start], word[start:end], word[end:]


def term_words(terms: Sequence[str]) -> dict[str, str]:
    """Each word of the terms, by its case-folded form, as the term spells it."""
    words: dict[str, str] = {}
    for term in terms:
        for word in term.split():
            _, core, _ = _strip(word)
            if core:
                words.setdefault(core.casefold(), core)
    return words


def corrected(word: str, words: dict[str, str]) -> str:
    """`word` (with its punctuation) replaced by the closest vocabulary word within
    `MAX_EDITS` edits and a quarter of its length; as it is when none is that close,
    when it is short, or when two are equally close."""
    before, core, after = _strip(word)
    folded = core.casefold()
    if len(core) < MIN_CORRECTED_CHARS or folded in words:
        return word if folded not in words else before + words[folded] + after
    limit = min(MAX_EDITS, len(core) // 4)
    best: list[str] = []
    best_distance = limit + 1
    for key, spelled in words.items():
        if len(key) < MIN_CORRECTED_CHARS:
            continue
        distance = edit_distance(folded, key, limit=limit)
        if distance < best_distance:
            best, best_distance = [spelled], distance
        elif distance == best_distance and distance <= limit:
            best.append(spelled)
    if best_distance > limit or len(best) != 1:
        return word
    return before + best[0] + after
