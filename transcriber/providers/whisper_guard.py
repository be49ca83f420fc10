"""No loops, no invented text: the checks every clip the local recognizer decoded passes
before its text is kept (pure, but for the one call that decodes a clip again).

Whisper invents text in two well-known ways: it loops (one phrase over and over where
the speech went on saying something else), and it writes text where nobody spoke
(silence, music, noise: «Продолжение следует…», "Thank you for watching"). Its own
guards (the temperature fallback on a compression ratio over 2.4 or a log probability
under −1) run inside the sequential decoding's windows only, and what comes out of the
last fallback is kept whatever it is; the batched pipeline has no fallback at all. So
every decoded clip, on both paths, is checked here against what Whisper itself reports
and what the text and the VAD show (`REASONS`):

- `compression`: the clip's text compresses (zlib, as Whisper computes it) better than
  `COMPRESSION_RATIO_MAX`, unless a phrase said again (each copy over speech of its
  own) is what compresses (`said_again`);
- `repeats`: a phrase (an n-gram of words, not only a whole segment) follows itself more
  than `REPEATS_KEPT` times, and the audio does not say it that often (`invented`);
- `logprob`: the clip's average token log probability is under `LOG_PROB_MIN`;
- `non_speech`: words lie more than `SPEECH_REACH_SECONDS` from every VAD speech region;
- `outside_clip`: words lie more than `CLIP_REACH_SECONDS` outside the clip.

A clip that fails is decoded again the safe way (the caller's `redecode`: sequential,
temperature fallback, beam search, no conditioning on previous text) and the better of
the two decodings is kept; of that, only what passes is kept (the first two copies of a
loop, the words over speech and inside the clip); the speech whose text was rejected is
returned as *unclear*, never saved as text.

A real repetition is told from a loop by the audio: each copy a person says has speech
of its own, so a pause the VAD saw lies between every two copies; a loop Whisper
invents packs its copies into one stretch of speech, or its word times collapse.
"""

from __future__ import annotations

import bisect
import itertools
import zlib
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from transcriber.providers.clips import (
    CLIP_PAD_SECONDS,
    UNCOVERED_MIN_SECONDS,
    WORD_REACH_SECONDS,
    Seconds,
    seconds_of,
    subtract,
)

RawSegment = dict[str, Any]

COMPRESSION_RATIO_MAX = 2.4  # Whisper's own threshold (faster-whisper's default)
LOG_PROB_MIN = -1.0  # likewise
REPEATS_KEPT = 2  # a phrase may follow itself this many times before it is a loop
LOOP_PHRASE_MAX_WORDS = 40  # the longest phrase looked for (a whole sentence looping)
# A word this far from every speech region lies over non-speech: the VAD pads its regions
# by 0.1 s and the word alignment is off by up to a few hundred ms.
SPEECH_REACH_SECONDS = 0.6
# A word this far past its clip's ends is outside it (the clip is padded by 0.3 s).
CLIP_REACH_SECONDS = 0.3
# A pause the VAD saw this close to the meeting of two copies separates them.
PAUSE_REACH_SECONDS = 0.3
# A copy said faster than this per word is no speech: its word times collapsed.
COPY_MIN_SECONDS_PER_WORD = 0.08
# A letter said more than this many times running is a loop inside a word («ааа» stays).
LETTERS_KEPT = 3
REASONS = ("compression", "repeats", "logprob", "non_speech", "outside_clip")


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


def near_speech(start: float, end: float, regions: Sequence[Seconds], ends: Sequence[float],
                *, reach: float = SPEECH_REACH_SECONDS) -> bool:
    """Pure: whether [start, end] comes within `reach` of a region (`regions` ordered,
    `ends` their ends, for the search)."""
    index = bisect.bisect_left(ends, start - reach)
    return index < len(regions) and regions[index][0] - reach <= end


def within(span: Seconds, regions: Sequence[Seconds]) -> list[Seconds]:
    """Pure: the parts of the regions inside `span`."""
    return [(max(a, span[0]), min(b, span[1])) for a, b in regions
            if b > span[0] and a < span[1]]


def merged(spans: Sequence[Seconds]) -> list[Seconds]:
    """Pure: the spans sorted, touching or overlapping ones joined, empty ones left out."""
    joined: list[Seconds] = []
    for start, end in sorted(s for s in spans if s[1] > s[0]):
        if joined and start <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], end))
        else:
            joined.append((start, end))
    return joined


def _cut_word_loop(text: str) -> tuple[str, int]:
    """Pure: a hyphenated word whose piece follows itself more than `REPEATS_KEPT` times
    («ки-ки-ки-ки-ки») with the copies past the second left out, and a letter run past
    `LETTERS_KEPT` («īļļļļļļļļ») cut to it; how many loops went."""
    removed = 0
    pieces = text.split("-")
    if len(pieces) > REPEATS_KEPT + 1:
        kept: list[str] = []
        run = 0
        for piece in pieces:
            run = run + 1 if kept and token(piece) and token(piece) == token(kept[-1]) else 1
            if run > REPEATS_KEPT:
                removed += 1
                continue
            kept.append(piece)
        text = "-".join(kept)
    letters = "".join(c for c, _ in itertools.groupby(text))
    if len(letters) < len(text):
        out: list[str] = []
        for letter, group in itertools.groupby(text):
            count = len(list(group))
            if letter.isalpha() and count > LETTERS_KEPT:
                removed += 1
                count = LETTERS_KEPT
            out.append(letter * count)
        text = "".join(out)
    return text, removed


@dataclass(slots=True, kw_only=True)
class Cut:
    """One decoding with what fails left out."""

    segments: list[RawSegment]
    unclear: list[Seconds] = field(default_factory=list)
    repeats_removed: int = 0
    dropped: Counter[str] = field(default_factory=Counter)  # words, by reason

    @property
    def unclear_seconds(self) -> float:
        return sum(end - start for start, end in merged(self.unclear))


def _seconds(word: RawSegment) -> Seconds:
    return word["start_ms"] / 1000, word["end_ms"] / 1000


def cut(segments: Sequence[RawSegment], *, clip: Seconds | None,
        regions: Sequence[Seconds]) -> Cut:
    """Pure: `segments` (the saved answer's, with words) without the words outside the
    clip (`clip` None: no clip to hold them), over non-speech, or past the second copy of
    an invented loop; the speech under a loop's removed copies, up to the next word kept,
    is unclear. Segments without word times are kept as they are."""
    ordered = sorted(regions)
    ends = [b for _, b in ordered]
    pauses = pauses_of(ordered)
    result = Cut(segments=[])
    flat = [(index, word) for index, segment in enumerate(segments)
            for word in segment.get("words") or ()]
    alive: list[tuple[int, RawSegment]] = []
    for index, word in flat:
        start, end = _seconds(word)
        if clip is not None and (start < clip[0] - CLIP_REACH_SECONDS
                                 or end > clip[1] + CLIP_REACH_SECONDS):
            result.dropped["outside_clip"] += 1
        elif not near_speech(start, end, ordered, ends):
            result.dropped["non_speech"] += 1
        else:
            text, removed = _cut_word_loop(str(word["text"]))
            result.repeats_removed += removed
            alive.append((index, {**word, "text": text} if removed else word))
    spoken = [position for position, (_, word) in enumerate(alive) if token(str(word["text"]))]
    gone: set[int] = set()
    for loop in loops([token(str(alive[p][1]["text"])) for p in spoken]):
        copies = [(_seconds(alive[spoken[loop.first + k * loop.size]][1])[0],
                   _seconds(alive[spoken[loop.first + (k + 1) * loop.size - 1]][1])[1])
                  for k in range(loop.copies)]
        if not invented(copies, pauses, size=loop.size):
            continue
        first = spoken[loop.first + REPEATS_KEPT * loop.size]
        last = spoken[loop.first + loop.copies * loop.size + loop.tail - 1]
        gone.update(range(first, last + 1))
        result.repeats_removed += loop.copies - REPEATS_KEPT
        after = last + 1
        until = (_seconds(alive[after][1])[0] if after < len(alive)
                 else max(copies[-1][1], clip[1] if clip else copies[-1][1]))
        result.unclear.extend(within((copies[REPEATS_KEPT - 1][1], until), ordered))
    kept_words: dict[int, list[RawSegment]] = {}
    for position, (index, word) in enumerate(alive):
        if position not in gone:
            kept_words.setdefault(index, []).append(word)
    for index, segment in enumerate(segments):
        words = segment.get("words") or []
        if not words:
            if str(segment["text"]).strip():
                result.segments.append(segment)
            continue
        kept = kept_words.get(index, [])
        if kept == words:
            result.segments.append(segment)
        elif kept:
            result.segments.append({**segment, "start_ms": kept[0]["start_ms"],
                                    "end_ms": kept[-1]["end_ms"], "words": kept,
                                    "text": "".join(str(w["text"]) for w in kept).strip()})
    return result


def average_logprob(segments: Sequence[RawSegment]) -> float | None:
    """Pure: the segments' `avg_logprob` weighted by their text's length (None: unknown)."""
    known = [(len(str(s["text"])), float(s["avg_logprob"])) for s in segments
             if s.get("avg_logprob") is not None and str(s["text"]).strip()]
    weight = sum(length for length, _ in known)
    return sum(length * value for length, value in known) / weight if weight else None


def said_again(segments: Sequence[RawSegment], regions: Sequence[Seconds]) -> bool:
    """Pure: whether the clip's text compresses past `COMPRESSION_RATIO_MAX` only because
    a person said a phrase again: with every copy but the first left out of each run of a
    phrase following itself whose copies each have speech of their own (`invented` says
    no), the words compress under it. A run packed into one stretch of speech stays in
    the text (it may be a loop of two, which the ratio is there to catch); a segment
    without word times leaves nothing to tell copies apart by."""
    if any(not segment.get("words") for segment in segments):
        return False
    words = [word for segment in segments for word in segment["words"]]
    spoken = [word for word in words if token(str(word["text"]))]
    pauses = pauses_of(regions)
    gone: set[int] = set()
    for loop in loops([token(str(word["text"])) for word in spoken], kept=1):
        copies = [(_seconds(spoken[loop.first + k * loop.size])[0],
                   _seconds(spoken[loop.first + (k + 1) * loop.size - 1])[1])
                  for k in range(loop.copies)]
        if not invented(copies, pauses, size=loop.size):
            gone.update(id(word) for word in
                        spoken[loop.first + loop.size:loop.first + loop.copies * loop.size])
    if not gone:
        return False
    rest = "".join(str(word["text"]) for word in words if id(word) not in gone)
    return compression_ratio(rest.strip()) <= COMPRESSION_RATIO_MAX


def failed(segments: Sequence[RawSegment], found: Cut, *,
           regions: Sequence[Seconds]) -> tuple[str, ...]:
    """Pure: the `REASONS` one decoded clip fails (`found`: its `cut`; `regions`: the
    VAD's speech). A ratio that a phrase said again explains (`said_again`) is no reason:
    decoding such a clip again costs a sequential decoding (about 5 CPU seconds for a
    30-second clip) and gives the same words."""
    reasons: list[str] = []
    if compression_ratio(" ".join(str(s["text"]).strip() for s in segments)) > \
            COMPRESSION_RATIO_MAX and not said_again(segments, regions):
        reasons.append("compression")
    if found.repeats_removed:
        reasons.append("repeats")
    logprob = average_logprob(segments)
    if logprob is not None and logprob < LOG_PROB_MIN:
        reasons.append("logprob")
    reasons.extend(reason for reason in ("non_speech", "outside_clip") if found.dropped[reason])
    return tuple(reasons)


def heard(segments: Sequence[RawSegment]) -> list[Seconds]:
    """Pure: the time the segments' words reach (`WORD_REACH_SECONDS` about each word; a
    segment without word times reaches over its own span)."""
    reach: list[Seconds] = []
    for segment in segments:
        words = segment.get("words") or [segment]
        reach.extend((w["start_ms"] / 1000 - WORD_REACH_SECONDS,
                      w["end_ms"] / 1000 + WORD_REACH_SECONDS) for w in words)
    return reach


def unheard(segments: Sequence[RawSegment], clip: Seconds,
            regions: Sequence[Seconds]) -> list[Seconds]:
    """Pure: the clip's stretches of speech, `UNCOVERED_MIN_SECONDS` or longer, that no
    word of `segments` reaches (as the coverage check finds them)."""
    return [(a, b) for a, b in subtract(within(clip, regions), heard(segments))
            if b - a >= UNCOVERED_MIN_SECONDS]


def _score(segments: Sequence[RawSegment], found: Cut, clip: Seconds,
           regions: Sequence[Seconds]) -> tuple[float, int, float]:
    """Pure: which of two decodings of a clip is kept (lower is better): less speech left
    unheard once what fails is cut, fewer words left out, a higher log probability."""
    logprob = average_logprob(segments)
    removed = found.repeats_removed + sum(found.dropped.values())
    return (round(seconds_of(unheard(found.segments, clip, regions)), 1), removed,
            -(logprob if logprob is not None else 0.0))


@dataclass(frozen=True, slots=True, kw_only=True)
class Guarded:
    """One part's decoding after the guard."""

    segments: list[RawSegment]
    unclear: list[Seconds]  # merged, in order
    repeats_removed: int
    redecoded: dict[str, int]  # clips decoded again, by reason
    dropped: dict[str, int]  # words left out over non-speech or outside their clip
    clips: int

    @property
    def unclear_seconds(self) -> float:
        return sum(end - start for start, end in self.unclear)


Redecode = Callable[[Seconds], list[RawSegment]]


def guard(clips: Sequence[Seconds], groups: Sequence[Sequence[RawSegment]], *,
          regions: Sequence[Seconds], redecode: Redecode,
          safe: Collection[int] = ()) -> Guarded:
    """Every clip's decoding checked; one that fails decoded again (`redecode`) unless it
    already was the safe decoding (`safe`: indexes), the better kept and cut; then the
    loops that run across clips cut over the whole part."""
    if len(clips) != len(groups):
        raise ValueError("one group of segments per clip")
    redecoded: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    unclear: list[Seconds] = []
    repeats = 0
    kept: list[RawSegment] = []
    for index, (clip, group) in enumerate(zip(clips, groups, strict=True)):
        found = cut(group, clip=clip, regions=regions)
        reasons = failed(group, found, regions=regions)
        if reasons and index not in safe:
            redecoded.update(reasons)
            again = redecode(clip)
            other = cut(again, clip=clip, regions=regions)
            if _score(again, other, clip, regions) <= _score(group, found, clip, regions):
                found = other
        if reasons:
            # What the kept decoding still leaves unheard (a loop's cut copies, a
            # decoding that stopped early) is decoded again stretch by stretch.
            for a, b in unheard(found.segments, clip, regions):
                span = (max(clip[0], a - CLIP_PAD_SECONDS), min(clip[1], b + CLIP_PAD_SECONDS))
                piece = cut(redecode(span), clip=span, regions=regions)
                found.segments.extend(piece.segments)
                found.unclear.extend(piece.unclear)
                found.repeats_removed += piece.repeats_removed
                found.dropped.update(piece.dropped)
            # Rejected text whose speech no kept word reaches is unclear.
            found.unclear = subtract(found.unclear, heard(found.segments))
        unclear.extend(found.unclear)
        repeats += found.repeats_removed
        dropped.update(found.dropped)
        kept.extend(found.segments)
    kept.sort(key=lambda s: (s["start_ms"], s["end_ms"]))
    whole = cut(kept, clip=None, regions=regions)  # loops across clips
    unclear.extend(whole.unclear)
    dropped.update(whole.dropped)
    return Guarded(segments=whole.segments, unclear=merged(unclear),
                   repeats_removed=repeats + whole.repeats_removed,
                   redecoded=dict(redecoded), dropped=dict(dropped), clips=len(clips))


def _nearest(middle: float, clips: Sequence[Seconds], starts: Sequence[float]) -> int:
    index = max(bisect.bisect_right(starts, middle) - 1, 0)
    if (index + 1 < len(clips) and middle > clips[index][1]
            and clips[index + 1][0] - middle < middle - clips[index][1]):
        index += 1
    return index


def by_clip(segments: Sequence[RawSegment], clips: Sequence[Seconds]) -> list[list[RawSegment]]:
    """Pure: the segments of a decoding of the whole part, word by word in the clip the
    word's middle is in (else the nearest): the groups `guard` checks. A segment whose
    words fall in several clips (the sequential decoding's VAD joins speech across a
    long gap) is split there. No clips: no groups."""
    groups: list[list[RawSegment]] = [[] for _ in clips]
    if not clips:
        return groups
    starts = [start for start, _ in clips]
    for segment in segments:
        words = segment.get("words") or []
        if not words:
            middle = (segment["start_ms"] + segment["end_ms"]) / 2000
            groups[_nearest(middle, clips, starts)].append(segment)
            continue
        pieces: dict[int, list[RawSegment]] = {}
        for word in words:
            middle = (word["start_ms"] + word["end_ms"]) / 2000
            pieces.setdefault(_nearest(middle, clips, starts), []).append(word)
        if len(pieces) == 1:
            groups[next(iter(pieces))].append(segment)
            continue
        for index, kept in pieces.items():
            groups[index].append({**segment, "start_ms": kept[0]["start_ms"],
                                  "end_ms": kept[-1]["end_ms"], "words": kept,
                                  "text": "".join(str(w["text"]) for w in kept).strip()})
    return groups
