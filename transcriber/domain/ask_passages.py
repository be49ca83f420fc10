"""Passages: the places of the archive a question is answered from (pure).

A passage is a window of a record's utterances: the line that holds the most
of the question's words (weighed by how rare each is among the candidates'
lines, so "budget" in every meeting counts less than "поставщиков" in one) and
one line each side of it, with the line's speaker and times. Its score adds
half its neighbours' weight, the words the record's title, brief and topics
hold, and the record's place in the index's rank. The line's best sentence
(most weight, then the first) is marked: that is what a citation quotes,
verbatim.

What never becomes a passage: a `poor` transcript, a line the recognizer was
mostly unsure of (`quality.describable`, the describer's gate), a line
overlapping unclear speech by more than half its length, and (where a speaker
is named) another speaker's lines at a passage's centre.

Offline, the answer is the passages themselves, grouped by record (records in
the order of their best passage), each with its marked sentence as its
citation.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from transcriber.domain.quality import Quality, describable
from transcriber.domain.search import Query, TextWord, fold, holds, stem, words
from transcriber.domain.transcripts import Utterance

WINDOW_SIDE = 1
"""Lines each side of a passage's centre."""
PASSAGES_MAX = 8
"""Passages an answer holds at most."""
PER_RECORD_MAX = 3
"""Passages of one record at most."""
UNCLEAR_SHARE = 0.5
"""A line overlapping unclear speech by at least this share of its length is left out."""
_NEIGHBOUR = 0.5
_ABOUT = 0.5
_RANKED = 0.3
_SPEAKER = 1.5

_SENTENCE_RE = re.compile(r"[^.!?…]+[.!?…]*")


@dataclass(frozen=True, slots=True, kw_only=True)
class Line:
    """An utterance a passage may quote."""

    index: int
    """Its place in the record's current transcript (the card's `utterance_index`)."""
    start_ms: int
    end_ms: int
    speaker: str | None
    """The speaker's name where the owner gave one, else the label (`S1`), else None."""
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Candidate:
    """A record retrieval found, with what may be quoted of it."""

    record_id: str
    title: str
    created_at: str
    about: str
    """Its title, brief and topics, as one text (their words weigh the record)."""
    lines: tuple[Line, ...]
    rank: int
    """Its place in the index's order (0: the best match)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Passage:
    record_id: str
    title: str
    created_at: str
    lines: tuple[Line, ...]
    best: Line
    """The line that holds the question's words best."""
    sentence: tuple[int, int]
    """The best sentence of `best.text`: `[start, end)` in code points."""
    score: float

    @property
    def quote(self) -> str:
        return self.best.text[self.sentence[0]:self.sentence[1]]


@dataclass(frozen=True, slots=True, kw_only=True)
class Citation:
    """A verbatim part of one line of a passage, and where it was said."""

    record_id: str
    line: Line
    quote: str
    passage: int
    """The passage's number (from 1, as the answer cites it)."""


def offline_citations(found: Sequence[Passage]) -> list[Citation]:
    """Offline, each passage cites its best sentence."""
    return [Citation(record_id=p.record_id, line=p.best, quote=p.quote, passage=number)
            for number, p in enumerate(found, start=1)]


def usable_lines(utterances: Sequence[Utterance], quality: Quality | None,
                 names: Mapping[str, str]) -> tuple[Line, ...]:
    """The lines of a transcript a passage may hold, with their places in it."""
    kept = {id(u) for u in describable(utterances, quality)}
    unclear = quality.unclear_spans if quality is not None else ()
    lines = []
    for index, u in enumerate(utterances):
        if id(u) not in kept or not u.text.strip():
            continue
        length = max(u.end_ms - u.start_ms, 1)
        overlap = sum(max(0, min(u.end_ms, s.end_ms) - max(u.start_ms, s.start_ms))
                      for s in unclear)
        if overlap / length >= UNCLEAR_SHARE:
            continue
        speaker = names.get(u.speaker, u.speaker) if u.speaker is not None else None
        lines.append(Line(index=index, start_ms=u.start_ms, end_ms=u.end_ms, speaker=speaker,
                          text=u.text.strip()))
    return tuple(lines)


def _weights(query: Query, texts: Sequence[list[TextWord]]) -> list[float]:
    """Each term's weight: rarer among the candidates' lines weighs more (idf)."""
    total = max(len(texts), 1)
    weights = []
    for term in query.required:
        held = sum(1 for found in texts if holds(found, term))
        weights.append(math.log(1 + total / (1 + held)) if held else 0.0)
    return weights


def _weight(found: list[TextWord], query: Query, weights: Sequence[float]) -> float:
    return sum(w for term, w in zip(query.required, weights, strict=True)
               if w and holds(found, term))


def _best_sentence(text: str, query: Query, weights: Sequence[float]) -> tuple[int, int]:
    best, best_weight = (0, len(text)), -1.0
    for match in _SENTENCE_RE.finditer(text):
        start, end = match.start(), match.end()
        while start < end and text[start].isspace():
            start += 1
        while end > start and text[end - 1].isspace():
            end -= 1
        if start == end:
            continue
        weight = _weight(words(text[start:end]), query, weights)
        if weight > best_weight:
            best, best_weight = (start, end), weight
    return best


def _named_speakers(lines: Sequence[Line], names: frozenset[str],
                    speaker: str | None) -> frozenset[str]:
    """The speakers of a record the question names (by a word of their name, in any form)."""
    wanted = {stem(fold(word)) for word in re.findall(r"[^\W_]+", speaker or "")}
    named = set()
    for line in lines:
        if line.speaker is None or line.speaker in named:
            continue
        own = {stem(fold(word)) for word in re.findall(r"[^\W_]+", line.speaker)}
        if (wanted and own & wanted) or (not wanted and own & names):
            named.add(line.speaker)
    return frozenset(named)


def passages(query: Query, candidates: Sequence[Candidate], *, names: frozenset[str] = frozenset(),
             speaker: str | None = None, limit: int = PASSAGES_MAX) -> list[Passage]:
    """The best passages of the candidates, grouped by record (best record first), at most
    `limit`. `names`: the question's stems (a speaker's name among them narrows to that
    speaker, in the records that have one so named); `speaker`: a name the scope gives
    (records without that speaker give nothing)."""
    found = {c.record_id: [words(line.text) for line in c.lines] for c in candidates}
    weights = _weights(query, [w for texts in found.values() for w in texts])
    chosen: list[Passage] = []
    for candidate in candidates:
        named = _named_speakers(candidate.lines, names, speaker)
        if speaker is not None and not named:
            continue
        line_weights = [_weight(w, query, weights) for w in found[candidate.record_id]]
        about = _ABOUT * _weight(words(candidate.about), query, weights)
        ranked = _RANKED / (1 + candidate.rank)
        scored = []
        for at, line in enumerate(candidate.lines):
            if not line_weights[at] or (named and line.speaker not in named):
                continue
            low, high = max(0, at - WINDOW_SIDE), min(len(candidate.lines), at + WINDOW_SIDE + 1)
            near = sum(line_weights[i] for i in range(low, high) if i != at)
            score = line_weights[at] * (_SPEAKER if named else 1.0) + _NEIGHBOUR * near
            scored.append((score + about + ranked, at, low, high))
        taken: list[tuple[int, int]] = []
        for score, at, low, high in sorted(scored, key=lambda s: (-s[0], s[1])):
            if len(taken) == PER_RECORD_MAX:
                break
            if any(low < t_high and t_low < high for t_low, t_high in taken):
                continue
            taken.append((low, high))
            best = candidate.lines[at]
            chosen.append(Passage(
                record_id=candidate.record_id, title=candidate.title,
                created_at=candidate.created_at, lines=candidate.lines[low:high], best=best,
                sentence=_best_sentence(best.text, query, weights), score=score))
    return grouped(chosen)[:limit]


def grouped(found: Sequence[Passage]) -> list[Passage]:
    """Passages by record, records in the order of their best passage, each record's
    passages best first."""
    by_record: dict[str, list[Passage]] = {}
    for passage in sorted(found, key=lambda p: -p.score):
        by_record.setdefault(passage.record_id, []).append(passage)
    return [passage for record in by_record.values() for passage in record]
