"""Word forms: the one normalization search applies to what it indexes, what it is asked
and what it marks.

A word is a run of letters and digits (as FTS5's `unicode61` tokenizer splits
text). Its *form* is its case fold with ё written е: Whisper, and people, write
ё inconsistently, so «отчёт» and «отчет» are one word (й stays й: it is another
letter, not a diacritic). Its *stem* is the Snowball stemmer's for its script:
Russian for a word with a Cyrillic letter, English for one with a Latin letter,
the form itself for anything else (numbers, other scripts). «недели», «неделя»
and «недель» share the stem «недел»; "reports" and "reported" share "report".

A word longer than `WORD_MAX` letters is cut to its first `WORD_MAX` (its form and
so its stem): the index, the query and the marks all cut it here, so both engines
store and match the same term. PostgreSQL refuses a lexeme over 2 046 bytes (the
whole transaction fails); 255 code points are at most 1 020 bytes of UTF-8, with
room for the owner key. A word that long is no word a person types: a blob, a
key, a hostile brief. Its form is not remembered by `stem` (the cache would then
hold kilobytes per entry).

Snowball's stemmers come from PyStemmer, the C library of the Snowball project
behind a small binding (about 8 million words a second here). A stemmer object
keeps state between calls, so each thread has its own: the SQL functions that
index run on the writer's and the readers' threads.
"""

from __future__ import annotations

import functools
import re
import threading
import unicodedata
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    import Stemmer

_WORD_RE = re.compile(r"[^\W_]+")
_CYRILLIC_RE = re.compile(r"[\u0400-\u04ff]")
_LATIN_RE = re.compile(r"[a-z]")
_LANGUAGES = ("russian", "english")
WORD_MAX = 255
"""Code points of a word's form at most (the rest of a longer word is dropped)."""
_CACHED_MAX = 40  # longer forms are stemmed without remembering them
# Letters with marks the index's tokenizer (unicode61, remove_diacritics 2) folds: any
# outside ASCII and Cyrillic (Cyrillic's й and ё are letters of their own here).
_MARKED_RE = re.compile(r"[^\x00-\x7f\u0400-\u04ff]")


class Word(NamedTuple):
    """One word of a text: where it stands (code points, end exclusive) and its forms.

    A named tuple, not a dataclass: a transcript of hours has tens of thousands of
    words, and a frozen dataclass costs three times as much to build."""

    start: int
    end: int
    form: str
    stem: str


class _Stemmers(threading.local):
    def __init__(self) -> None:
        import Stemmer  # noqa: PLC0415

        self.by_language = {language: Stemmer.Stemmer(language) for language in _LANGUAGES}


# Made at the first word stemmed, not at import: PyStemmer loads when used, so
# `transcriber status` (which imports the readers) stays light
# (docs/architecture.md, "Heavy libraries load when used").
_stemmers: _Stemmers | None = None


def _stemmer(language: str) -> Stemmer.Stemmer:
    global _stemmers  # noqa: PLW0603
    if _stemmers is None:
        _stemmers = _Stemmers()
    return _stemmers.by_language[language]


def fold(word: str) -> str:
    """The word's form: its case fold, ё as е, Latin letters without their marks
    ("café" as "cafe", as the index's tokenizer folds them)."""
    folded = word.casefold().replace("ё", "е")
    if _MARKED_RE.search(folded):
        folded = "".join(char if "\u0400" <= char <= "\u04ff" else _bare(char)
                         for char in folded)
    return folded


@functools.lru_cache(maxsize=4096)
def _bare(char: str) -> str:
    return "".join(part for part in unicodedata.normalize("NFD", char)
                   if not unicodedata.combining(part))


def form_of(word: str) -> str:
    """The indexed form of a word as written: folded, cut to `WORD_MAX` code points.
    (Folding never makes a letter vanish, so the first `WORD_MAX` letters written
    fold to at least `WORD_MAX`: a long word is never folded whole.)"""
    return fold(word[:WORD_MAX])[:WORD_MAX]


def stem(form: str) -> str:
    """The Snowball stem of a folded word, by its script (remembered: a language has
    far fewer words than a transcript has words, and a dict look-up is cheaper than
    a call into the stemmer)."""
    if len(form) > _CACHED_MAX:
        return _stem(form)
    return _cached_stem(form)


@functools.lru_cache(maxsize=1 << 16)
def _cached_stem(form: str) -> str:
    return _stem(form)


def _stem(form: str) -> str:
    if _CYRILLIC_RE.search(form):
        return str(_stemmer("russian").stemWord(form))
    if _LATIN_RE.search(form):
        return str(_stemmer("english").stemWord(form))
    return form


def words(text: str) -> list[Word]:
    """Every word of `text` in order, with its place, form and stem."""
    found = []
    for match in _WORD_RE.finditer(text):
        form = form_of(match.group())
        found.append(Word(match.start(), match.end(), form, stem(form)))
    return found


def forms_and_stems(text: str) -> list[tuple[str, str]]:
    """`(form, stem)` of every word of `text`, in order (what the index stores)."""
    pairs = []
    for raw in _WORD_RE.findall(text):
        form = form_of(raw)
        pairs.append((form, stem(form)))
    return pairs
