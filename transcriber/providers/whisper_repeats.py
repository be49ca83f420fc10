"""A phrase that follows itself: a loop Whisper invented, or words a person said again
(pure). The guard (`whisper_guard`) cuts the loops and lets what was said stay.

Whisper loops: one phrase over and over where the speech went on saying something
else. A person repeats too. The two are told apart by the audio: each copy a person
says has speech of its own, so a pause the VAD saw lies between every two copies; a
loop Whisper invents packs its copies into one stretch of speech, or its word times
collapse (`invented`). A clip whose text compresses too well only because a phrase is
said again (`said_again`) is heard again copy by copy (`heard_again`): Whisper
repeating the previous sentence over new speech says that new speech when the copy's
stretch is decoded with nothing before it.
"""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from transcriber.providers.clips import Seconds

RawSegment = dict[str, Any]

COMPRESSION_RATIO_MAX = 2.4  # Whisper's own threshold (faster-whisper's default)

REPEATS_KEPT = 2  # a phrase may follow itself this many times before it is a loop
LOOP_PHRASE_MAX_WORDS = 40  # the longest phrase looked for (a whole sentence looping)

# A pause the VAD saw this close to the meeting of two copies separates them.
PAUSE_REACH_SECONDS = 0.3
# A copy said faster than this per word is no speech: its word times collapsed.
COPY_MIN_SECONDS_PER_WORD = 0.08

# A clip whose ratio more copies than this explain is decoded again whole: hearing each
# copy again on its own would cost as much.
COPIES_HEARD_MAX = 3
# Words of the neighbours a copy's stretch (padded by 0.3 s each side) may add about it.
NEIGHBOUR_WORDS_MAX = 4


def compression_ratio(text: str) -> float:
    """Pure: Whisper's compression ratio of `text` (0 for no text)."""
    data = text.encode("utf-8")
    return len(data) / len(zlib.compress(data)) if data else 0.0


def token(word: str) -> str:
    """Pure: a word as the loop check compares it (case and punctuation aside)."""
    return "".join(c for c in word.casefold() if c.isalnum())


@dataclass(frozen=True, slots=True, kw_only=True)
class Loop:
    first: int  # index of the first copy's first token
    size: int  # tokens in one copy
    copies: int
    tail: int = 0  # tokens after the last copy that begin one more (a copy cut short)


def _tail(tokens: Sequence[str], at: int, phrase: Sequence[str]) -> int:
    """Pure: how many tokens from `at` begin `phrase` again (the last may be cut inside a
    word: «и про» after «и прохожу»), none when all of it follows."""
    count = 0
    while count < len(phrase) and at + count < len(tokens):
        if tokens[at + count] == phrase[count]:
            count += 1
        elif tokens[at + count] and phrase[count].startswith(tokens[at + count]):
            return count + 1
        else:
            break
    return count if at + count >= len(tokens) else 0


def loops(tokens: Sequence[str], *, max_size: int = LOOP_PHRASE_MAX_WORDS,
          kept: int = REPEATS_KEPT) -> list[Loop]:
    """Pure: the runs where a phrase of 1..`max_size` tokens follows itself more than
    `kept` times, left to right, the shortest phrase first, not overlapping."""
    found: list[Loop] = []
    count = len(tokens)
    at = 0
    while at < count:
        hit = None
        for size in range(1, min(max_size, (count - at) // (kept + 1)) + 1):
            if tokens[at + size] != tokens[at]:
                continue  # cheap: the second copy must start with the first's token
            phrase = list(tokens[at:at + size])
            copies = 1
            while list(tokens[at + copies * size:at + (copies + 1) * size]) == phrase:
                copies += 1
            if copies > kept:
                hit = Loop(first=at, size=size, copies=copies,
                           tail=_tail(tokens, at + copies * size, phrase))
                break
        if hit is None:
            at += 1
        else:
            found.append(hit)
            at += hit.size * hit.copies
    return found


def pauses_of(regions: Sequence[Seconds]) -> list[Seconds]:
    """Pure: the pauses the VAD saw between its (ordered) regions; a region cut at its
    longest length meets the next one in a pause of no width."""
    ordered = sorted(regions)
    return [(a[1], b[0]) for a, b in itertools.pairwise(ordered) if b[0] >= a[1]]


def invented(copies: Sequence[Seconds], pauses: Sequence[Seconds], *, size: int) -> bool:
    """Pure: whether the copies of a phrase (their (start, end), in order) are a loop
    Whisper invented rather than a phrase said again: some copy's word times collapsed,
    or the stretch they span holds fewer pauses the VAD saw than there are meetings of
    two copies (each copy said has speech of its own; the pauses are counted, not
    matched to the copies' word times, which the alignment of identical copies places
    loosely)."""
    if any(end - start < size * COPY_MIN_SECONDS_PER_WORD for start, end in copies):
        return True
    low, high = copies[0][0] - PAUSE_REACH_SECONDS, copies[-1][1] + PAUSE_REACH_SECONDS
    inside = sum(1 for a, b in pauses if a <= high and b >= low)
    return inside < len(copies) - 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Copy:
    """A copy of a phrase said again, past the first of its run: its time and words."""

    span: Seconds
    tokens: tuple[str, ...]


def said_again(segments: Sequence[RawSegment], regions: Sequence[Seconds]) -> list[Copy]:
    """Pure: the copies that alone make the clip's text compress past
    `COMPRESSION_RATIO_MAX`: each run of a phrase following itself whose copies each have
    speech of their own (`invented` says no) gives its copies past the first, and with
    them left out the words compress under it. None where that is not so: no such run, a
    run packed into one stretch of speech (it stays in the text: it may be a loop), a
    segment without word times (nothing tells copies apart), or more copies than
    `COPIES_HEARD_MAX`. Whether they were really said is for the caller to hear
    (`heard_again`)."""
    if any(not segment.get("words") for segment in segments):
        return []
    words = [word for segment in segments for word in segment["words"]]
    spoken = [word for word in words if token(str(word["text"]))]
    pauses = pauses_of(regions)
    gone: set[int] = set()
    found: list[Copy] = []
    for loop in loops([token(str(word["text"])) for word in spoken], kept=1):
        runs = [spoken[loop.first + k * loop.size:loop.first + (k + 1) * loop.size]
                for k in range(loop.copies)]
        copies = [(run[0]["start_ms"] / 1000, run[-1]["end_ms"] / 1000) for run in runs]
        if invented(copies, pauses, size=loop.size):
            continue
        for run, span in zip(runs[1:], copies[1:], strict=True):
            gone.update(id(word) for word in run)
            found.append(Copy(span=span, tokens=tuple(token(str(w["text"])) for w in run)))
    rest = "".join(str(word["text"]) for word in words if id(word) not in gone)
    if not found or len(found) > COPIES_HEARD_MAX or \
            compression_ratio(rest.strip()) > COMPRESSION_RATIO_MAX:
        return []
    return found


def heard_again(copy: Copy, again: Sequence[RawSegment]) -> bool:
    """Pure: whether a decoding of the copy's own stretch of audio alone (`again`) says
    the copy's words, in order, with at most `NEIGHBOUR_WORDS_MAX` words of its
    neighbours about them (the stretch is padded): Whisper looping on the previous
    sentence over new speech hears that new speech when the stretch is decoded with
    nothing before it."""
    tokens = [t for segment in again for t in (
        token(str(w["text"])) for w in segment.get("words") or
        ({"text": part} for part in str(segment["text"]).split())) if t]
    size = len(copy.tokens)
    return len(tokens) - size <= NEIGHBOUR_WORDS_MAX and any(
        tuple(tokens[at:at + size]) == copy.tokens for at in range(len(tokens) - size + 1))
