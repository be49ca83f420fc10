"""Subtitle cues: the utterances cut into what a subtitle player can show.

A whole utterance is a poor cue: a recognizer's segment runs to 30 s, and a
player then shows a wall of text for half a minute. The SRT and WebVTT exports
are cut here by the common subtitle rules:

- a cue lasts at most `MAX_CUE_MS` and holds at most `MAX_LINES` lines of at
  most `MAX_LINE_CHARS` characters (a single word longer than that is shown
  alone, as it cannot be cut);
- cues are cut between words, never inside one, preferring the end of a
  sentence, then a comma (or a dash, a colon), then a pause in the speech;
  each cut is chosen for the whole utterance at once (`_cut`), so cues come
  out of even length rather than full ones and a stub;
- cues follow each other in time and never overlap; a cue shorter than
  `MIN_CUE_MS` is held into the silence after it, never over the next cue.

Times come from the utterance's words (`Utterance.words`) where they spell its
text. Where an utterance has no words (records recognized before words were
kept, SpeechKit's answers) its text is split at spaces and each piece gets a
share of the utterance's time in proportion to its characters. Where a
person's correction changed some words, the unchanged words keep their times
and the changed text shares the time of the words it replaced (`_aligned`).
Text without spaces (Chinese, Japanese) is cut only where it has spaces.

Pure: no I/O, no clock. `transcripts.to_srt` / `to_vtt` render the cues.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    # Types only: `transcripts` renders its cues with this module.
    from transcriber.domain.transcripts import Utterance, Word

MAX_CUE_MS = 7000
MIN_CUE_MS = 1000
MAX_LINES = 2
MAX_LINE_CHARS = 42

# The costs `_cut` weighs (lower is better). A cue of its own costs CUE_COST;
# a cue far from full costs up to FILL_COST more (squared, so two half cues
# beat a full one and a stub); a cut costs CUT_COST, less at a punctuation
# mark, and a pause takes PAUSE_RELIEF_PER_S off it (a long one makes the cut
# worth a cue of its own).
CUE_COST = 6.0
FILL_COST = 10.0
CUT_COST = 12.0
COMMA_CUT_COST = 5.0
PAUSE_RELIEF_PER_S = 20.0
PAUSE_RELIEF_MAX = 40.0

_CLOSERS = re.escape("\"'»”’)]")
_SENTENCE_END = re.compile(f"[.!?…][{_CLOSERS}]*$")
_CLAUSE_END = re.compile(f"([,;:—–]|-)[{_CLOSERS}]*$")


@dataclass(frozen=True, slots=True, kw_only=True)
class Piece:
    """A piece of an utterance's text between two spaces, with its time."""

    start_ms: int
    end_ms: int
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Cue:
    start_ms: int
    end_ms: int
    lines: tuple[str, ...]
    """The shown lines; the first cue of an utterance starts with its `lead`."""
    utterance: int
    """The index of the utterance it was cut from, in the sequence given."""


def spread(texts: Sequence[str], start_ms: int, end_ms: int) -> list[Piece]:
    """Pieces sharing [start_ms, end_ms] in proportion to their characters, end to end."""
    total = sum(len(text) for text in texts) or 1
    length = max(end_ms - start_ms, 0)
    pieces, done = [], 0
    for text in texts:
        begin = start_ms + length * done // total
        done += len(text)
        pieces.append(Piece(start_ms=begin, end_ms=start_ms + length * done // total,
                            text=text))
    return pieces


def _word_pieces(words: Sequence[Word], start_ms: int, end_ms: int) -> list[Piece]:
    """The words as pieces between spaces, inside the utterance and in time order.

    A word without a leading space (Whisper's "'t" after " don") is glued to
    the one before: the two are one word on screen and are never cut apart."""
    pieces: list[Piece] = []
    cursor = start_ms
    for word in words:
        begin = min(max(word.start_ms, cursor), end_ms)
        end = min(max(word.end_ms, begin), end_ms)
        cursor = end
        parts = spread(word.text.split(), begin, end)
        if not parts:
            continue
        if pieces and not word.text[:1].isspace():
            glued, *parts = parts
            last = pieces[-1]
            pieces[-1] = Piece(start_ms=last.start_ms, end_ms=glued.end_ms,
                               text=last.text + glued.text)
        pieces.extend(parts)
    return pieces


def _aligned(said: list[str], timed: list[Piece], start_ms: int, end_ms: int) -> list[Piece]:
    """The text's pieces (`said`) with the times of the words that spell them.

    Pieces the words do not spell (a correction) share the time of the words
    they replace, or the gap they sit in; with no words at all that is the
    whole utterance."""
    if [piece.text for piece in timed] == said:
        return timed
    matcher = SequenceMatcher(None, [piece.text for piece in timed], said, autojunk=False)
    result: list[Piece] = []
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag == "equal":
            result.extend(timed[i1:i2])
        elif tag in ("replace", "insert"):
            if i1 < i2:
                begin, end = timed[i1].start_ms, timed[i2 - 1].end_ms
            else:
                begin = timed[i1 - 1].end_ms if i1 > 0 else start_ms
                end = timed[i1].start_ms if i1 < len(timed) else end_ms
            result.extend(spread(said[j1:j2], begin, max(begin, end)))
    return result


def pieces_of(utterance: Utterance) -> list[Piece]:
    """The utterance's text split at white space, each piece with its time."""
    start = utterance.start_ms
    end = max(utterance.end_ms, start)
    return _aligned(utterance.text.split(), _word_pieces(utterance.words, start, end),
                    start, end)


def _cut_cost(before: Piece, after: Piece) -> float:
    if _SENTENCE_END.search(before.text):
        cost = 0.0
    elif _CLAUSE_END.search(before.text) or after.text[:1] in "—–":
        cost = COMMA_CUT_COST
    else:
        cost = CUT_COST
    pause_s = max(after.start_ms - before.end_ms, 0) / 1000
    return cost - min(pause_s * PAUSE_RELIEF_PER_S, PAUSE_RELIEF_MAX)


class _Layout:
    """Widths of one utterance's pieces, and whether a run of them fits a cue's lines.

    Lines are filled greedily to test a run: a run fits in two lines exactly
    when what the fullest first line leaves fits in one."""

    def __init__(self, texts: Sequence[str], lead: str) -> None:
        self.lead = lead
        self.sums = [0]
        for text in texts:
            self.sums.append(self.sums[-1] + len(text))
        self.count = len(texts)

    def width(self, i: int, j: int) -> int:
        """Characters of pieces i..j-1 on one line, with the lead before piece 0."""
        chars = self.sums[j] - self.sums[i] + max(j - i - 1, 0)
        if i == 0 and self.lead:
            chars += len(self.lead) + (1 if j > 0 else 0)
        return chars

    def first_line_end(self, i: int) -> int:
        """Where the fullest first line starting at piece i ends (at least one unit)."""
        j = i
        if i == 0 and self.lead:
            while j < self.count and self.width(0, j + 1) <= MAX_LINE_CHARS:
                j += 1
        else:  # width(i, j + 1) <= MAX_LINE_CHARS, summed inline (run for every piece)
            sums, limit = self.sums, self.sums[i] + i + MAX_LINE_CHARS
            while j < self.count and sums[j + 1] + j <= limit:
                j += 1
        if j == i and not (i == 0 and self.lead):
            j = i + 1  # one piece too long for any line: alone on its line
        return j

    def fits(self, i: int, j: int, first_end: int) -> bool:
        if j <= first_end:
            return True
        rest = self.sums[j] - self.sums[first_end] + (j - first_end - 1)
        return rest <= MAX_LINE_CHARS or j - first_end == 1


def _cut(pieces: Sequence[Piece], lead: str) -> list[tuple[int, int]]:
    """The runs of pieces (i, j) that become the cues: the cheapest cutting (by
    `_cut_cost` and the cues' fill) among those that keep every cue within its
    time and lines."""
    layout = _Layout([piece.text for piece in pieces], lead)
    count = len(pieces)
    # The cost of cutting before piece j, and nothing after the last piece.
    cuts = [0.0, *(_cut_cost(pieces[j - 1], pieces[j]) for j in range(1, count)), 0.0]
    best = [float("inf")] * (count + 1)
    back = [0] * (count + 1)
    best[0] = 0.0
    full = MAX_LINES * MAX_LINE_CHARS
    sums = layout.sums
    for i in range(count):
        first_end = layout.first_line_end(i)
        start = pieces[i].start_ms
        # This loop runs about a dozen times a word: the widths are summed inline.
        shift = len(lead) + 1 if i == 0 and lead else 0
        for j in range(i + 1, count + 1):
            if j > i + 1 and (pieces[j - 1].end_ms - start > MAX_CUE_MS
                              or not layout.fits(i, j, first_end)):
                break
            chars = sums[j] - sums[i] + j - i - 1 + shift
            slack = (full - chars) / full if chars < full else 0.0
            cost = best[i] + CUE_COST + FILL_COST * slack * slack + cuts[j]
            if cost < best[j]:
                best[j], back[j] = cost, i
    runs = []
    j = count
    while j > 0:
        runs.append((back[j], j))
        j = back[j]
    return runs[::-1]


def _line_cost(units: Sequence[str], k: int) -> float:
    before = units[k - 1]
    mark = 0.0 if _SENTENCE_END.search(before) else 3.0 if _CLAUSE_END.search(before) else 6.0
    first = len(" ".join(units[:k]))
    second = len(" ".join(units[k:]))
    return mark + abs(first - second) / 4


def lines_of(units: Sequence[str]) -> tuple[str, ...]:
    """Words laid out on one line where they fit, else on two, broken where
    `_line_cost` likes best (at a punctuation mark, lines of even length)."""
    whole = " ".join(units)
    if len(whole) <= MAX_LINE_CHARS or len(units) == 1:
        return (whole,)
    breaks = [
        k for k in range(1, len(units))
        if (k == 1 or len(" ".join(units[:k])) <= MAX_LINE_CHARS)
        and (k == len(units) - 1 or len(" ".join(units[k:])) <= MAX_LINE_CHARS)
    ]
    if not breaks:  # not reached from `_cut`, which only makes runs that fit
        return (whole,)
    k = min(breaks, key=lambda at: _line_cost(units, at))
    return (" ".join(units[:k]), " ".join(units[k:]))


def _settled(cues: list[Cue]) -> list[Cue]:
    """The cues in time order, none overlapping the next, each held to at least
    `MIN_CUE_MS` where the next cue starts late enough.

    Utterances of two channels may overlap in time: the earlier cue then ends
    where the later starts (its text was shown; the talk over it is the later
    cue's). Cues starting at the same instant follow each other by 1 ms, so
    none lasts no time at all."""
    ordered = sorted(cues, key=lambda cue: cue.start_ms)  # stable: utterance order on ties
    starts: list[int] = []
    for cue in ordered:
        starts.append(max(cue.start_ms, starts[-1] + 1) if starts else max(cue.start_ms, 0))
    settled = []
    for index, cue in enumerate(ordered):
        start = starts[index]
        end = max(cue.end_ms, start + MIN_CUE_MS)
        if index + 1 < len(ordered):
            end = min(end, starts[index + 1])
        settled.append(Cue(start_ms=start, end_ms=end, lines=cue.lines,
                           utterance=cue.utterance))
    return settled


def subtitle_cues(utterances: Sequence[Utterance], leads: Sequence[str] = ()) -> list[Cue]:
    """The cues of the utterances, in time order. `leads[i]` (when given and not
    empty) opens the first line of utterance i's first cue (`"Anna:"`), as one
    unbreakable word; an utterance with no text makes no cue."""
    cues: list[Cue] = []
    for index, utterance in enumerate(utterances):
        pieces = pieces_of(utterance)
        if not pieces:
            continue
        lead = " ".join(leads[index].split()) if index < len(leads) else ""
        for i, j in _cut(pieces, lead):
            units = [piece.text for piece in pieces[i:j]]
            if i == 0 and lead:
                units.insert(0, lead)
            cues.append(Cue(start_ms=pieces[i].start_ms, end_ms=pieces[j - 1].end_ms,
                            lines=lines_of(units), utterance=index))
    return _settled(cues)
