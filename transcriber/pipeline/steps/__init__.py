"""The step table: one step per claimable stage, keyed by the names in `stages.STAGES`.

Imports: the rest of the pipeline and the floors below it; the adapters arrive
typed by their ports.
"""

from __future__ import annotations

from collections.abc import Mapping

from transcriber.domain.stages import step_names
from transcriber.pipeline.step import Step
from transcriber.pipeline.steps.finish import FinishStep
from transcriber.pipeline.steps.normalize import NormalizeStep
from transcriber.pipeline.steps.poll import PollStep
from transcriber.pipeline.steps.submit import SubmitStep
from transcriber.ports import (
    AnswerFormat,
    ObjectStore,
    PartCutter,
    Recognizer,
    SpeakerSeparator,
    Transcoder,
)


def build_step_table(
    *,
    transcoder: Transcoder,
    cutter: PartCutter,
    recognizer: Recognizer,
    store: ObjectStore | None,
    formats: Mapping[str, AnswerFormat] | None = None,
    separator: SpeakerSeparator | None = None,
) -> dict[str, Step]:
    """`formats` read answers saved by other providers than `recognizer` (by name)."""
    steps: list[Step] = [
        NormalizeStep(transcoder),
        SubmitStep(recognizer, store=store, cutter=cutter, separator=separator),
        PollStep(recognizer, store=store, cutter=cutter, formats=formats or {},
                 separator=separator),
        FinishStep(),
    ]
    table = {step.name: step for step in steps}
    missing = set(step_names()) ^ set(table)
    if missing:
        raise RuntimeError(f"step table does not match the stage descriptor: {sorted(missing)}")
    return table


__all__ = ["FinishStep", "NormalizeStep", "PollStep", "SubmitStep", "build_step_table"]
