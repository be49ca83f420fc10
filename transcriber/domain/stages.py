"""THE stage descriptor. Everything stage-dependent derives from `STAGES`.

A stage names what has been *achieved*. From each non-final stage exactly one
step runs; its success moves the record to `next_stage`. The claimable set,
the lease expression of the claim query, the stuck limits, the step table and
the schema's CHECK list are all computed from this table (P8, openspec/specs/pipeline/spec.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Stage(StrEnum):
    UPLOADED = "uploaded"
    NORMALIZED = "normalized"
    SUBMITTED = "submitted"
    TRANSCRIBED = "transcribed"
    DONE = "done"


class LimitKind(StrEnum):
    """Which stuck limit bounds the time a record may spend in a stage."""

    OWN_WORK = "own_work"
    FOREIGN_OPERATION = "foreign_operation"


class HaltReason(StrEnum):
    STEP_FAILED = "step_failed"
    ATTEMPTS_EXHAUSTED = "attempts_exhausted"
    STUCK = "stuck"


@dataclass(frozen=True, slots=True, kw_only=True)
class StageSpec:
    stage: Stage
    step: str | None
    next_stage: Stage | None
    limit: LimitKind | None
    # The record columns this stage's step may write (P3); effects check it.
    owned_columns: tuple[str, ...] = ()

    @property
    def claimable(self) -> bool:
        return self.step is not None


STAGES: tuple[StageSpec, ...] = (
    StageSpec(stage=Stage.UPLOADED, step="normalize", next_stage=Stage.NORMALIZED,
              limit=LimitKind.OWN_WORK,
              owned_columns=("normalized_file_id", "duration_ms")),
    # The local recognizer works through a long record here, one part per claim with
    # deferrals between (docs/recognition.md): the stage lasts as long as the whole
    # recognition, so it is bounded like a foreign operation; each claim still has
    # its step time limit.
    StageSpec(stage=Stage.NORMALIZED, step="submit", next_stage=Stage.SUBMITTED,
              limit=LimitKind.FOREIGN_OPERATION,
              owned_columns=("recognition_id",)),
    StageSpec(stage=Stage.SUBMITTED, step="poll", next_stage=Stage.TRANSCRIBED,
              limit=LimitKind.FOREIGN_OPERATION,
              owned_columns=("transcript_text_id", "structure_id", "detected_language",
                             "quality", "model")),
    StageSpec(stage=Stage.TRANSCRIBED, step="finish", next_stage=Stage.DONE,
              limit=LimitKind.OWN_WORK),
    StageSpec(stage=Stage.DONE, step=None, next_stage=None, limit=None),
)

_BY_STAGE = {spec.stage: spec for spec in STAGES}
FIRST_STAGE = STAGES[0].stage


def spec_of(stage: Stage | str) -> StageSpec:
    return _BY_STAGE[Stage(stage)]


def claimable_stages() -> tuple[Stage, ...]:
    return tuple(spec.stage for spec in STAGES if spec.claimable)


def step_names() -> tuple[str, ...]:
    return tuple(spec.step for spec in STAGES if spec.step is not None)


def stage_of_step(step: str) -> Stage:
    for spec in STAGES:
        if spec.step == step:
            return spec.stage
    raise KeyError(step)
