"""Cutting a long record into parts and stitching the parts' utterances back.

Parts overlap by a few seconds so no word is lost at a cut. Part k covers
`[k·stride, k·stride + part_length)` with `stride = part_length - overlap`.
Each utterance is kept by exactly one part: the cut between two parts lies
in the middle of their overlap, and an utterance belongs to the part whose
side of the cut holds its midpoint. Pure functions only.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace

from transcriber.ports import Span, Utterance, Word


@dataclass(frozen=True, slots=True, kw_only=True)
class PartPlan:
    index: int
    offset_ms: int
    length_ms: int


def plan_parts(duration_ms: int, *, max_part_ms: int | None, overlap_ms: int) -> list[PartPlan]:
    """One part for short records; overlapping parts of at most `max_part_ms` otherwise."""
    if max_part_ms is None or duration_ms <= max_part_ms:
        return [PartPlan(index=0, offset_ms=0, length_ms=max(duration_ms, 0))]
    if not 0 <= overlap_ms < max_part_ms // 2:
        raise ValueError("overlap must be shorter than half a part")
    stride = max_part_ms - overlap_ms
    parts: list[PartPlan] = []
    offset = 0
    while True:
        length = min(max_part_ms, duration_ms - offset)
        parts.append(PartPlan(index=len(parts), offset_ms=offset, length_ms=length))
        if offset + length >= duration_ms:
            return parts
        offset += stride


def plan_at_pauses(duration_ms: int, pauses: Sequence[tuple[int, int]], *, part_ms: int,
                   overlap_ms: int, window_ms: int | None = None) -> list[PartPlan]:
    """Parts of about `part_ms`, each cut in the middle of a pause near its end.

    `pauses` are (start, end) of the silences found in the audio. The longest
    pause within `window_ms` (a fifth of a part) of the target is taken; with
    none there, the cut falls on the target. Neighbours overlap by `overlap_ms`
    around the cut (none by default: the cut is in a pause, and `join` keeps
    every utterance of every part), so a stitch cuts in the pause too.
    """
    if duration_ms <= part_ms:
        return [PartPlan(index=0, offset_ms=0, length_ms=max(duration_ms, 0))]
    if not 0 <= overlap_ms < part_ms // 2:
        raise ValueError("overlap must be shorter than half a part")
    window = part_ms // 5 if window_ms is None else window_ms
    middles = sorted(((start + end) // 2, end - start) for start, end in pauses)
    cuts: list[int] = []
    last = 0
    while duration_ms - last > part_ms:
        target = last + part_ms
        near = [(length, -abs(middle - target), middle) for middle, length in middles
                if abs(middle - target) <= window and middle - last > part_ms // 2
                and middle < duration_ms - overlap_ms]
        cut = max(near)[2] if near else target
        cuts.append(cut)
        last = cut
    offsets = [0, *(cut - overlap_ms // 2 for cut in cuts)]
    return plans_from_offsets(list(enumerate(offsets)), duration_ms=duration_ms,
                              overlap_ms=overlap_ms)


def plans_from_offsets(offsets: Sequence[tuple[int, int]], *, duration_ms: int,
                       overlap_ms: int) -> list[PartPlan]:
    """The parts' spans from their (index, offset) as stored: each reaches `overlap_ms`
    into the next; the last one to the end."""
    ordered = sorted(offsets)
    plans = []
    for position, (index, offset) in enumerate(ordered):
        if position + 1 < len(ordered):
            length = ordered[position + 1][1] - offset + overlap_ms
        else:
            length = max(duration_ms - offset, 0)
        plans.append(PartPlan(index=index, offset_ms=offset, length_ms=length))
    return plans


def uncovered_by_parts(parts: Sequence[PartPlan], duration_ms: int) -> list[tuple[int, int]]:
    """Pure: the spans of [0, duration_ms) that no part covers (empty when the plan kept
    its promise: every second of the record is in some part)."""
    gaps: list[tuple[int, int]] = []
    reached = 0
    for part in sorted(parts, key=lambda p: p.offset_ms):
        if part.offset_ms > reached:
            gaps.append((reached, min(part.offset_ms, duration_ms)))
        reached = max(reached, part.offset_ms + part.length_ms)
        if reached >= duration_ms:
            break
    if reached < duration_ms:
        gaps.append((reached, duration_ms))
    return [(a, b) for a, b in gaps if b > a]


def placed(spans: Sequence[Span], plan: PartPlan) -> list[Span]:
    """Pure: a part's spans (its speech, its unclear speech) on the record's timeline,
    held inside the part's span as `join` holds its utterances; empty ones dropped."""
    low, high = plan.offset_ms, plan.offset_ms + plan.length_ms
    moved: list[Span] = []
    for span in spans:
        first = min(max(span.start_ms + plan.offset_ms, low), high)
        last = min(max(span.end_ms + plan.offset_ms, first), high)
        if last > first:
            moved.append(Span(start_ms=first, end_ms=last))
    return moved


def moved_words(words: Sequence[Word], offset_ms: int, low: int | None = None,
                high: int | None = None) -> tuple[Word, ...]:
    """Pure: a part's words on the record's timeline, held inside [low, high] when given
    (as their utterance is)."""
    def place(ms: int) -> int:
        ms += offset_ms
        if low is not None:
            ms = max(ms, low)
        return ms if high is None else min(ms, high)
    return tuple(replace(w, start_ms=place(w.start_ms), end_ms=max(place(w.end_ms),
                                                                   place(w.start_ms)))
                 for w in words)


def join(parts: Sequence[tuple[PartPlan, Sequence[Utterance]]]) -> list[Utterance]:
    """Parts that do not overlap (cut in pauses) on one timeline: every utterance of
    every part is kept, its times held inside its own part's span.

    Whisper's segment times can drift by seconds within a window; a part's words
    are its words whatever their times say, so none is dropped or doubled at a cut.
    """
    result: list[Utterance] = []
    for plan, utterances in sorted(parts, key=lambda item: item[0].index):
        low, high = plan.offset_ms, plan.offset_ms + plan.length_ms
        for u in sorted(utterances, key=lambda u: (u.start_ms, u.channel)):
            start = min(max(u.start_ms + plan.offset_ms, low), high)
            end = min(max(u.end_ms + plan.offset_ms, start), high)
            result.append(replace(u, start_ms=start, end_ms=end,
                                  words=moved_words(u.words, plan.offset_ms, low, high)))
    return result


def _cut_points(parts: Sequence[PartPlan]) -> list[int]:
    """The absolute time between part k and k+1: the middle of their overlap."""
    cuts = []
    for current, following in itertools.pairwise(parts):
        overlap_end = current.offset_ms + current.length_ms
        cuts.append((following.offset_ms + overlap_end) // 2)
    return cuts


def stitch(parts: Sequence[tuple[PartPlan, Sequence[Utterance]]]) -> list[Utterance]:
    """All parts' utterances on one timeline, the overlap's duplicates dropped.

    Each part's utterances are relative to its own start.
    """
    ordered = sorted(parts, key=lambda item: item[0].index)
    plans = [plan for plan, _ in ordered]
    cuts = _cut_points(plans)
    result: list[Utterance] = []
    for position, (plan, utterances) in enumerate(ordered):
        low = cuts[position - 1] if position > 0 else None
        high = cuts[position] if position < len(cuts) else None
        for u in utterances:
            shifted = replace(u, start_ms=u.start_ms + plan.offset_ms,
                              end_ms=u.end_ms + plan.offset_ms,
                              words=moved_words(u.words, plan.offset_ms))
            middle = (shifted.start_ms + shifted.end_ms) // 2
            if low is not None and middle < low:
                continue
            if high is not None and middle >= high:
                continue
            result.append(shifted)
    result.sort(key=lambda u: (u.start_ms, u.channel, u.end_ms))
    return result
