"""What a person typed into search, read as terms, and where those terms stand in a text.

The syntax, all of it (anything else is plain words; nothing is an error):

- `word` matches every form of the word: «неделя» finds «недели», «недель»;
  "report" finds "reported";
- `word*` matches as a prefix of a word's stem or of its form (the search box
  adds it to the word being typed): «кот*» finds «котёл», «кот» does not;
- a bare word of at least `PARTIAL_MIN` letters also matches as the start of a
  longer word's form: a word typed in part, as people type it («поставщ» finds
  «поставщиков», «бухгалт» «бухгалтерии»). A shorter one stays whole: «кот»,
  «план», "plan" are words of their own more often than beginnings (at most
  `PARTIALS_MAX` a query: the rest match as whole words);
- `"several words"` matches those words in that order (each in any form);
- `-word` and `-"several words"` exclude records that have them.

Every term is required. Terms are normalized by `transcriber.domain.search`, the
same functions the index and the marks use, so what the index matched is
what the marks show.

What a query may cost is capped here, before any engine sees it: at most
`TERMS_MAX` terms are read (the rest dropped), and a word typed in part must
keep `PREFIX_MIN` letters (a one-letter prefix expands to a large share of a
language: «п*» is every word with п, on the index and in the marks), at most
`PREFIXES_MAX` of them a query. A query past those is refused
(`QueryTooBroad`), never silently widened or narrowed.

TextWord forms: the one normalization search applies to what it indexes, what it is asked
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
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, NamedTuple

from transcriber.core.errors import QueryTooBroad

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


class TextWord(NamedTuple):
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


def words(text: str) -> list[TextWord]:
    """Every word of `text` in order, with its place, form and stem."""
    found = []
    for match in _WORD_RE.finditer(text):
        form = form_of(match.group())
        found.append(TextWord(match.start(), match.end(), form, stem(form)))
    return found


def forms_and_stems(text: str) -> list[tuple[str, str]]:
    """`(form, stem)` of every word of `text`, in order (what the index stores)."""
    pairs = []
    for raw in _WORD_RE.findall(text):
        form = form_of(raw)
        pairs.append((form, stem(form)))
    return pairs

QUERY_MAX = 200
"""Characters of a query at most."""
TERMS_MAX = 16
"""Terms of a query read at most (the rest are dropped)."""
PREFIX_MIN = 2
"""Letters a word typed in part (`word*`) keeps at least."""
PREFIXES_MAX = 4
"""Words typed in part a query holds at most."""
PARTIAL_MIN = 5
"""Letters a bare word has at least to also match as the start of a longer word."""
PARTIALS_MAX = 8
"""Bare words a query reads as possibly typed in part, at most (the rest are whole)."""

# A quoted phrase (its closing quote optional), or a run of anything but spaces.
_TOKEN_RE = re.compile(r'(-?)"([^"]*)"?|(\S+)')


@dataclass(frozen=True, slots=True, kw_only=True)
class Term:
    stems: tuple[str, ...]
    """One stem for a word, several for a phrase (in order)."""
    prefix: bool = False
    """The last word matches as a prefix of a stem, or of a form (`form`)."""
    form: str = ""
    """The folded form of the last word (for a prefix)."""
    excluded: bool = False
    partial: bool = False
    """A bare word that also matches as the start of a longer word's form."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    terms: tuple[Term, ...]
    any_term: bool = False
    """A record matches when it holds any required term, not every one (ask's
    retrieval: a question's words are not all in the answer; the rank orders them)."""

    @property
    def required(self) -> tuple[Term, ...]:
        return tuple(term for term in self.terms if not term.excluded)

    @property
    def excluded(self) -> tuple[Term, ...]:
        return tuple(term for term in self.terms if term.excluded)


def _term(text: str, *, excluded: bool, quoted: bool) -> Term | None:
    prefix = not quoted and text.endswith("*")
    found = [form_of(word) for word in re.findall(r"[^\W_]+", text)]
    if not found:
        return None
    # An exclusion stays whole: a word typed in part would exclude more than was typed.
    partial = (not quoted and not prefix and not excluded and len(found) == 1
               and len(found[0]) >= PARTIAL_MIN)
    return Term(stems=tuple(stem(form) for form in found), prefix=prefix, form=found[-1],
                excluded=excluded, partial=partial)


def _capped_partials(terms: list[Term]) -> list[Term]:
    kept: list[Term] = []
    partials = 0
    for term in terms:
        partials += term.partial
        kept.append(replace(term, partial=False) if partials > PARTIALS_MAX and term.partial
                    else term)
    return kept


def parse(text: str) -> Query:
    """The terms of `text` (at most `TERMS_MAX`); `QueryTooBroad` for a prefix shorter
    than `PREFIX_MIN` letters or more than `PREFIXES_MAX` prefixes."""
    terms: list[Term] = []
    for match in _TOKEN_RE.finditer(text):
        minus, phrase, bare = match.groups()
        if phrase is not None:
            term = _term(phrase, excluded=bool(minus), quoted=True)
        else:
            excluded = bare.startswith("-") and len(bare) > 1
            term = _term(bare[1:] if excluded else bare, excluded=excluded, quoted=False)
        if term is not None:
            terms.append(term)
        if len(terms) == TERMS_MAX:
            break
    prefixes = [term for term in terms if term.prefix]
    if any(len(term.form) < PREFIX_MIN for term in prefixes):
        raise QueryTooBroad("prefix_too_short")
    if len(prefixes) > PREFIXES_MAX:
        raise QueryTooBroad("too_many_prefixes")
    return Query(terms=tuple(_capped_partials(terms)))


def _matches_at(found: list[TextWord], at: int, term: Term) -> bool:
    if at + len(term.stems) > len(found):
        return False
    last = len(term.stems) - 1
    for offset, wanted in enumerate(term.stems):
        word = found[at + offset]
        if term.prefix and offset == last:
            if not (word.stem.startswith(wanted) or word.form.startswith(term.form)):
                return False
        elif term.partial:
            if not (word.stem == wanted or word.form.startswith(term.form)):
                return False
        elif word.stem != wanted:
            return False
    return True


def holds(found: list[TextWord], term: Term) -> bool:
    """Whether the words of a text (`words(text)`) hold the term anywhere."""
    return any(_matches_at(found, at, term) for at in range(len(found)))


@dataclass(frozen=True, slots=True, kw_only=True)
class Marks:
    """Where a text holds a query's required terms: `[start, end)` in code points."""

    spans: tuple[tuple[int, int], ...]
    terms: int
    """How many of the required terms the text holds."""


def marks(text: str, query: Query) -> Marks:
    """The spans of `text` that match any required term, in order, and how many of the
    terms it holds (a phrase marks its words from the first to the last)."""
    found = words(text)
    present = {word.stem for word in found}
    spans: list[tuple[int, int]] = []
    held = 0
    for term in query.required:
        # Every stem matched whole must be in the text: most terms are not, and a set
        # look-up is far cheaper than trying each place.
        whole = term.stems[:-1] if term.prefix or term.partial else term.stems
        if not present.issuperset(whole):
            continue
        hit = False
        for at in range(len(found)):
            if _matches_at(found, at, term):
                hit = True
                spans.append((found[at].start, found[at + len(term.stems) - 1].end))
        held += hit
    return Marks(spans=tuple(_merged(spans)), terms=held)


def _merged(spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    merged: list[tuple[int, int]] = []
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end))
        else:
            merged.append((start, end))
    return merged
