"""What a person typed into search, read as terms, and where those terms stand in a text.

The syntax, all of it (anything else is plain words; nothing is an error):

- `word` matches every form of the word: «неделя» finds «недели», «недель»;
  "report" finds "reported";
- `word*` matches as a prefix of a word's stem or of its form (the search box
  adds it to the word being typed): «кот*» finds «котёл», «кот» does not;
- `"several words"` matches those words in that order (each in any form);
- `-word` and `-"several words"` exclude records that have them.

Every term is required. Terms are normalized by `transcriber.wordforms`, the
same functions the index and the marks use, so what the index matched is
what the marks show.

What a query may cost is capped here, before any engine sees it: at most
`TERMS_MAX` terms are read (the rest dropped), and a word typed in part must
keep `PREFIX_MIN` letters (a one-letter prefix expands to a large share of a
language: «п*» is every word with п, on the index and in the marks), at most
`PREFIXES_MAX` of them a query. A query past those is refused
(`QueryTooBroad`), never silently widened or narrowed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from transcriber.errors import QueryTooBroad
from transcriber.wordforms import Word, form_of, stem, words

QUERY_MAX = 200
"""Characters of a query at most."""
TERMS_MAX = 16
"""Terms of a query read at most (the rest are dropped)."""
PREFIX_MIN = 2
"""Letters a word typed in part (`word*`) keeps at least."""
PREFIXES_MAX = 4
"""Words typed in part a query holds at most."""

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


@dataclass(frozen=True, slots=True, kw_only=True)
class Query:
    terms: tuple[Term, ...]

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
    return Term(stems=tuple(stem(form) for form in found), prefix=prefix, form=found[-1],
                excluded=excluded)


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
    return Query(terms=tuple(terms))


def _matches_at(found: list[Word], at: int, term: Term) -> bool:
    if at + len(term.stems) > len(found):
        return False
    last = len(term.stems) - 1
    for offset, wanted in enumerate(term.stems):
        word = found[at + offset]
        if term.prefix and offset == last:
            if not (word.stem.startswith(wanted) or word.form.startswith(term.form)):
                return False
        elif word.stem != wanted:
            return False
    return True


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
        whole = term.stems[:-1] if term.prefix else term.stems
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
