"""Where a search matched inside a transcript: the utterances that hold the query's words.

A search result carries up to `RESULT_MATCHES` of them (`matches`), and
`GET /app/audiorecords/{id}/matches?q=` answers all of them (up to
`FIND_MATCHES`) for the card's find-in-transcript box. Each is
`{"utterance_index", "start_ms", "end_ms", "speaker", "snippet", "marks"}`:
`snippet` is the utterance's text (a long one cut to a window around its first
mark, `…` at a cut end) and `marks` the `[start, end)` spans of the matched
words in it, counted in Unicode code points. The marks are offsets, never
markup: the web app builds `<mark>` elements from them as text nodes.

The words are found by `transcriber.search_query.marks`, with the same word
forms as the index, so a result the index found shows the words that made it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from transcriber.ports import Utterance
from transcriber.search_query import Marks, Query, marks

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


def utterance_matches(utterances: Sequence[Utterance], query: Query, *,
                      limit: int) -> list[dict[str, Any]]:
    """The utterances holding the query's words: those holding the most of its terms
    first when there are more than `limit`, then given in time order. The scan stops at
    the `limit`-th utterance holding every term (no later one could take its place).
    Pure and CPU-bound: the web route runs it in a thread."""
    found: list[tuple[int, int, Marks]] = []
    every_term = len(query.required)
    whole = 0  # utterances holding every term: none can be beaten
    for index, utterance in enumerate(utterances):
        held = marks(utterance.text, query)
        if held.spans:
            found.append((held.terms, index, held))
            whole += held.terms == every_term
            if whole == limit:
                break
    if len(found) > limit:
        found = sorted(found, key=lambda entry: (-entry[0], entry[1]))[:limit]
        found.sort(key=lambda entry: entry[1])
    answer = []
    for _, index, held in found:
        utterance = utterances[index]
        snippet, spans = _snippet(utterance.text, held)
        answer.append({"utterance_index": index, "start_ms": utterance.start_ms,
                       "end_ms": utterance.end_ms, "speaker": utterance.speaker,
                       "snippet": snippet, "marks": spans})
    return answer
