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
  own, `said_again`) is what compresses and each copy decoded alone says it again
  (`heard_again`);
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
from collections import Counter
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from transcriber.providers.clips import (
    CLIP_PAD_SECONDS,
    UNCOVERED_MIN_SECONDS,
    WORD_REACH_SECONDS,
    Seconds,
    seconds_of,
    subtract,
)
from transcriber.providers.whisper_repeats import (
    COMPRESSION_RATIO_MAX,
    REPEATS_KEPT,
    RawSegment,
    compression_ratio,
    heard_again,
    invented,
    loops,
    pauses_of,
    said_again,
    token,
)

LOG_PROB_MIN = -1.0  # Whisper's own threshold (faster-whisper's default)
# A word this far from every speech region lies over non-speech: the VAD pads its regions
# by 0.1 s and the word alignment is off by up to a few hundred ms.
SPEECH_REACH_SECONDS = 0.6
# A word this far past its clip's ends is outside it (the clip is padded by 0.3 s).
CLIP_REACH_SECONDS = 0.3
# A letter said more than this many times running is a loop inside a word («ааа» stays).
LETTERS_KEPT = 3
REASONS = ("compression", "repeats", "logprob", "non_speech", "outside_clip")


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


def failed(segments: Sequence[RawSegment], found: Cut) -> tuple[str, ...]:
    """Pure: the `REASONS` one decoded clip fails (`found`: its `cut`)."""
    reasons: list[str] = []
    if compression_ratio(" ".join(str(s["text"]).strip() for s in segments)) > \
            COMPRESSION_RATIO_MAX:
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
    copies_heard: int = 0  # copies of a phrase said again, heard again on their own

    @property
    def unclear_seconds(self) -> float:
        return sum(end - start for start, end in self.unclear)


Redecode = Callable[[Seconds], list[RawSegment]]


def guard(clips: Sequence[Seconds], groups: Sequence[Sequence[RawSegment]], *,
          regions: Sequence[Seconds], redecode: Redecode,
          safe: Collection[int] = ()) -> Guarded:
    """Every clip's decoding checked; one that fails decoded again (`redecode`) unless it
    already was the safe decoding (`safe`: indexes), the better kept and cut; then the
    loops that run across clips cut over the whole part. A clip that fails on its
    compression ratio alone, which a phrase said again explains (`said_again`), has
    each later copy decoded again on its own instead: the copies all heard again
    (`heard_again`), the clip passes (a fraction of the cost: one short window each,
    where the whole clip's ratio fails every try of the fallback)."""
    if len(clips) != len(groups):
        raise ValueError("one group of segments per clip")
    copies_heard = 0
    redecoded: Counter[str] = Counter()
    dropped: Counter[str] = Counter()
    unclear: list[Seconds] = []
    repeats = 0
    kept: list[RawSegment] = []
    for index, (clip, group) in enumerate(zip(clips, groups, strict=True)):
        found = cut(group, clip=clip, regions=regions)
        reasons = failed(group, found)
        copies = said_again(group, regions) if reasons == ("compression",) else []
        if copies and index not in safe and all(
                heard_again(c, redecode(_around(c.span, clip))) for c in copies):
            reasons = ()
            copies_heard += len(copies)
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
                span = _around((a, b), clip)
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
                   redecoded=dict(redecoded), dropped=dict(dropped), clips=len(clips),
                   copies_heard=copies_heard)


def _around(span: Seconds, clip: Seconds) -> Seconds:
    return max(clip[0], span[0] - CLIP_PAD_SECONDS), min(clip[1], span[1] + CLIP_PAD_SECONDS)
