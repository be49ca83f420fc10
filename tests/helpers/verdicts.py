"""The quality report of one local answer, as the poll step makes it for a one-part record
(`pipeline.assessment.report_of` over `read_local_payload`): lets the recognizer's tests
check that the verdict a person sees matches what the decoding really did."""

from __future__ import annotations

import orjson

from transcriber.domain.quality import Quality
from transcriber.pipeline.assessment import report_of
from transcriber.pipeline.parts import PartPlan
from transcriber.providers.whisper_answer import read_local_payload


def report_of_answer(payload: bytes) -> Quality:
    """The report of a one-part record whose whole answer is `payload`."""
    duration_ms = int(orjson.loads(payload)["duration_ms"])
    plan = PartPlan(index=0, offset_ms=0, length_ms=duration_ms)
    answer = read_local_payload(payload)
    return report_of([(plan, answer)], answer.utterances)
