"""Fake steps for tests: duration on the clock, scripted failures and
deferrals, and a record of every call.

A `FakeStep` plays its `script` one behaviour per run (then repeats the last
one, or `default` when the script is empty). Each behaviour first sleeps its
duration on the job's clock (a `FakeClock` in tests, so time moves only when
the test says so), then succeeds, defers or raises the failure it names.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.domain.stages import Stage, step_names
from transcriber.pipeline.step import Advanced, Deferred, Effect, Job, Outcome, Step

FailureKind = Literal["transient", "permanent", "unclassified"]


class FakeCrash(RuntimeError):
    """An unclassified exception from a fake step (counts as transient, P17)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Behaviour:
    seconds: float = 0.0
    fail: FailureKind | None = None
    defer_seconds: float | None = None
    effects: tuple[Effect, ...] = ()
    retry_after: float | None = None


SUCCEED = Behaviour()


@dataclass(frozen=True, slots=True, kw_only=True)
class Call:
    record_id: str
    token: str
    stage: Stage
    attempts: int


@dataclass(slots=True, kw_only=True)
class FakeStep:
    name: str
    script: list[Behaviour] = field(default_factory=list)
    default: Behaviour = SUCCEED
    time_limit: float | None = None
    calls: list[Call] = field(default_factory=list)
    finished: int = 0
    cancelled: int = 0

    def then(self, *behaviours: Behaviour) -> FakeStep:
        """Queue behaviours for the next runs."""
        self.script.extend(behaviours)
        return self

    def time_limit_seconds(self, job: Job) -> float | None:
        return self.time_limit

    async def run(self, job: Job) -> Outcome:
        self.calls.append(Call(record_id=job.record_id, token=job.token, stage=job.stage,
                               attempts=job.attempts))
        behaviour = self.script.pop(0) if self.script else self.default
        try:
            if behaviour.seconds > 0:
                await job.clock.sleep(behaviour.seconds)
        except BaseException:
            self.cancelled += 1
            raise
        self.finished += 1
        if behaviour.fail == "transient":
            raise TransientFailure(f"fake {self.name} failed", retry_after=behaviour.retry_after)
        if behaviour.fail == "permanent":
            raise PermanentFailure(f"fake {self.name} refused the input")
        if behaviour.fail == "unclassified":
            raise FakeCrash(f"fake {self.name} crashed")
        if behaviour.defer_seconds is not None:
            return Deferred(delay_seconds=behaviour.defer_seconds)
        return Advanced(effects=behaviour.effects)


def fake_steps(
    defaults: Mapping[str, Behaviour] | None = None, *, names: Iterable[str] | None = None
) -> dict[str, FakeStep]:
    """A complete step table of fakes (every step of the stage descriptor)."""
    defaults = defaults or {}
    return {
        name: FakeStep(name=name, default=defaults.get(name, SUCCEED))
        for name in (names if names is not None else step_names())
    }


def fake_steps_from_spec(spec: str) -> dict[str, Step]:
    """`"normalize=5,poll=0.5"` → fake steps taking that many seconds (others 0).

    The test entry point `tests/serve_with_fakes.py` uses this, so a real
    `transcriber serve` process can run the pipeline without ffmpeg or a recognizer.
    """
    defaults: dict[str, Behaviour] = {}
    for item in filter(None, (part.strip() for part in spec.split(","))):
        name, _, seconds = item.partition("=")
        name = name.strip()
        if name not in step_names():
            raise ValueError(f"{name!r} is not a step")
        defaults[name] = Behaviour(seconds=float(seconds))
    return dict(fake_steps(defaults))
