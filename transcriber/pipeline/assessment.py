"""The quality report of a freshly recognized transcript, from its parts' saved answers.

The local recognizer's answer says, per part (docs/recognition.md, "Quality
report"): the speech its VAD found (`speech`), the speech whose text it
rejected (`unclear`) and how many looped lines it dropped (`repeats_removed`),
all part-relative. Here they are placed on the record's timeline exactly as
`parts.join` and `speakers.speech_of` place the utterances (moved by the part's
offset, held inside the part's span) and handed to the pure `quality.assess`.

Answers that do not say (SpeechKit's, or local ones saved before these fields)
count as "not known": no unclear span, no repeat, and the record's speech is
then its utterances' time. Pure functions only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import orjson

from transcriber.domain.quality import Quality, assess
from transcriber.pipeline.parts import PartPlan
from transcriber.ports import Span, Utterance


def _answer(payload: bytes) -> dict[str, Any]:
    try:
        data = orjson.loads(payload)
    except orjson.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


def _placed(items: Any, plan: PartPlan) -> list[Span] | None:
    """Part-relative `[[start_ms, end_ms], ...]` on the record's timeline, held inside
    the part's span; None when the answer does not carry the list."""
    if not isinstance(items, list):
        return None
    low, high = plan.offset_ms, plan.offset_ms + plan.length_ms
    spans: list[Span] = []
    for item in items:
        try:
            start, end = item
            first = min(max(int(start) + plan.offset_ms, low), high)
            last = min(max(int(end) + plan.offset_ms, first), high)
        except (TypeError, ValueError):
            continue  # one malformed pair is not a reason to lose the report
        if last > first:
            spans.append(Span(start_ms=first, end_ms=last))
    return spans


def unclear_of(parts: Sequence[tuple[PartPlan, bytes]]) -> list[Span]:
    """Pure: every part's unclear speech on the record's timeline (none where not said)."""
    found: list[Span] = []
    for plan, payload in parts:
        found.extend(_placed(_answer(payload).get("unclear"), plan) or ())
    return found


def speech_regions_of(parts: Sequence[tuple[PartPlan, bytes]]) -> list[Span] | None:
    """Pure: the VAD's speech of every part on the record's timeline; None unless every
    answer says it (a part without would look like silence)."""
    found: list[Span] = []
    for plan, payload in parts:
        spans = _placed(_answer(payload).get("speech"), plan)
        if spans is None:
            return None
        found.extend(spans)
    return found


def repeats_of(parts: Sequence[tuple[PartPlan, bytes]]) -> int:
    total = 0
    for _, payload in parts:
        count = _answer(payload).get("repeats_removed")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            total += count
    return total


def report_of(parts: Sequence[tuple[PartPlan, bytes]],
              utterances: Sequence[Utterance]) -> Quality:
    """Pure: the report of the transcript made of these parts' answers."""
    return assess(utterances, speech=speech_regions_of(parts), unclear=unclear_of(parts),
                  repeats_removed=repeats_of(parts))
