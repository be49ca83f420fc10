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

from transcriber.ports import Utterance


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
                              end_ms=u.end_ms + plan.offset_ms)
            middle = (shifted.start_ms + shifted.end_ms) // 2
            if low is not None and middle < low:
                continue
            if high is not None and middle >= high:
                continue
            result.append(shifted)
    result.sort(key=lambda u: (u.start_ms, u.channel, u.end_ms))
    return result
