"""Where a search matched inside a transcript: the utterances that hold the query's words.

A search result carries up to `RESULT_MATCHES` of them (`matches`), and
`GET /app/audiorecords/{id}/matches?q=` answers all of them (up to
`FIND_MATCHES`) for the card's find-in-transcript box. Each is
`{"utterance_index", "start_ms", "end_ms", "speaker", "snippet", "marks"}`:
`snippet` is the utterance's text (a long one cut to a window around its first
mark, `…` at a cut end) and `marks` the `[start, end)` spans of the matched
words in it, counted in Unicode code points. The marks are offsets, never
markup: the web app builds `<mark>` elements from them as text nodes.

The words are found by `transcriber.domain.search.marks`, with the same word
forms as the index, so a result the index found shows the words that made it.

Matching hours of transcript is pure Python (about a tenth of a second of CPU
for six hours): it runs in the worker processes of `transcriber.web.match_pool`,
never on the event loop's interpreter, under a CPU budget (`structure_matches`'s
`budget`): past it the scan stops and the answer says `partial`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from transcriber.domain import transcripts
from transcriber.domain.search import Marks, Query, marks
from transcriber.domain.shapes_search import MatchBody
from transcriber.ports import Utterance

RESULT_MATCHES = 3
FIND_MATCHES = 1000
SNIPPET_MAX = 240
"""Code points of a snippet at most, its `…` included."""
_CONTEXT_BEFORE = 60


def _snippet(text: str, found: Marks) -> tuple[str, list[list[int]]]:
    spans = [list(span) for span in found.spans]
    if len(text) <= SNIPPET_MAX:
        return text, spans
    start = max(0, spans[0][0] - _CONTEXT_BEFORE)
    end = min(len(text), start + SNIPPET_MAX - 2)
    head = "…" if start > 0 else ""
    tail = "…" if end < len(text) else ""
    shift = len(head) - start
    kept = [[max(s, start) + shift, min(e, end) + shift] for s, e in spans
            if s < end and e > start]
    return head + text[start:end] + tail, kept


@dataclass(frozen=True, slots=True, kw_only=True)
class FoundMatches:
    """One transcript's matches, as a worker sends them back."""

    matches: list[MatchBody]
    partial: bool = False
    """The budget ran out before the transcript was read whole."""
    unreadable: bool = False
    """The stored structure cannot be read (`transcripts.BadStructure`)."""


def structure_matches(contents: Sequence[str | bytes | None], query: Query, *, limit: int,
                      budget: float,
                      clock: Callable[[], float] = time.process_time) -> list[FoundMatches]:
    """The matches of each stored structure (None: no transcript) within `budget`
    seconds of `clock` (the worker's CPU time) for all of them together; once it is
    spent, the rest are read no further (`partial`). Pure, run by a worker process."""
    deadline = clock() + budget
    answers = []
    for stored in contents:
        if stored is None:
            answers.append(FoundMatches(matches=[]))
            continue
        try:
            utterances = transcripts.load_structure(stored)
        except transcripts.BadStructure:
            answers.append(FoundMatches(matches=[], unreadable=True))
            continue
        found, partial = utterance_matches(utterances, query, limit=limit, deadline=deadline,
                                           clock=clock)
        answers.append(FoundMatches(matches=found, partial=partial))
    return answers


def utterance_matches(utterances: Sequence[Utterance], query: Query, *, limit: int,
                      deadline: float = float("inf"),
                      clock: Callable[[], float] = time.process_time,
                      ) -> tuple[list[MatchBody], bool]:
    """The utterances holding the query's words: those holding the most of its terms
    first when there are more than `limit`, then given in time order; and whether the
    scan stopped at `deadline` (of `clock`) before the last utterance. The scan stops at
    the `limit`-th utterance holding every term (no later one could take its place)."""
    found: list[tuple[int, int, Marks]] = []
    every_term = len(query.required)
    whole = 0  # utterances holding every term: none can be beaten
    partial = False
    for index, utterance in enumerate(utterances):
        if clock() > deadline:
            partial = True
            break
        held = marks(utterance.text, query)
        if held.spans:
            found.append((held.terms, index, held))
            whole += held.terms == every_term
            if whole == limit:
                break
    if len(found) > limit:
        found = sorted(found, key=lambda entry: (-entry[0], entry[1]))[:limit]
        found.sort(key=lambda entry: entry[1])
    answer: list[MatchBody] = []
    for _, index, held in found:
        utterance = utterances[index]
        snippet, spans = _snippet(utterance.text, held)
        answer.append(MatchBody(utterance_index=index, start_ms=utterance.start_ms,
                                end_ms=utterance.end_ms, speaker=utterance.speaker,
                                snippet=snippet, marks=spans))
    return answer, partial
