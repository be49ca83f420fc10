"""The quality report of a freshly recognized transcript, from its parts' answers.

A recognizer's parsed answer (`ports.Answer`) says, per part (docs/recognition.md,
"Quality report"): the speech its VAD found (`speech`), the speech whose text it
rejected (`unclear`) and how many looped lines it dropped (`repeats_removed`),
all part-relative. Here they are placed on the record's timeline exactly as
`parts.join` and `speakers.speech_of` place the utterances (moved by the part's
offset, held inside the part's span) and handed to the pure `quality.assess`.

Answers that do not say (a recognizer that keeps none of these, or local ones
saved before these fields) count as "not known": no unclear span, no repeat, and
the record's speech is then its utterances' time. Pure functions only.
"""

from __future__ import annotations

from collections.abc import Sequence

from transcriber.domain.quality import Quality, assess
from transcriber.pipeline.parts import PartPlan, placed
from transcriber.pipeline.speakers import speech_of
from transcriber.ports import Answer, Span, Utterance


def unclear_of(parts: Sequence[tuple[PartPlan, Answer]]) -> list[Span]:
    """Pure: every part's unclear speech on the record's timeline (none where not said)."""
    found: list[Span] = []
    for plan, answer in parts:
        found.extend(placed(answer.unclear or (), plan))
    return found


def repeats_of(parts: Sequence[tuple[PartPlan, Answer]]) -> int:
    return sum(answer.repeats_removed for _, answer in parts)


def report_of(parts: Sequence[tuple[PartPlan, Answer]],
              utterances: Sequence[Utterance]) -> Quality:
    """Pure: the report of the transcript made of these parts' answers."""
    return assess(utterances, speech=speech_of(parts), unclear=unclear_of(parts),
                  repeats_removed=repeats_of(parts))
