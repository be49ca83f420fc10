"""The step contract, shared by the engine (which runs steps) and the steps.

A step gets a `Job` (the claimed record id, its acquisition token and the
service's parts) and either returns an outcome or raises a failure:

- `Advanced(effects=...)`: the record moves to the next stage; the effects
  (files rows, texts, the step's own columns) are written in the same
  transaction as the stage change, conditional on the token (P3).
- `Deferred(delay_seconds=...)`: wait for a foreign operation (P12).
- raise `TransientFailure` (backoff) or `PermanentFailure` (halt at once);
  any other exception counts as transient (P17).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from transcriber.core.clock import Clock
from transcriber.db.commands.pipeline import Effect
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import Stage
from transcriber.ports import RecordFiles
from transcriber.settings import Settings

__all__ = ["Advanced", "Deferred", "Effect", "Job", "Outcome", "Step"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Advanced:
    effects: tuple[Effect, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Deferred:
    delay_seconds: float


Outcome = Advanced | Deferred


@dataclass(frozen=True, slots=True, kw_only=True)
class Job:
    """One claimed record, as a step sees it."""

    record_id: str
    token: str
    stage: Stage
    attempts: int
    settings: Settings
    clock: Clock
    writer: Writer
    readers: ReaderPool
    files: RecordFiles
    extras: Mapping[str, Any] = field(default_factory=dict)


class Step(Protocol):
    name: str

    async def run(self, job: Job) -> Outcome:
        """Do the stage's work; return the outcome or raise a failure."""

    def time_limit_seconds(self, job: Job) -> float | None:
        """How long this run may take before it is cancelled (None: the default)."""
