"""Simulated steps of the load test: random durations, transient failures and
deferrals in given shares, and a witness that no record is held twice."""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from transcriber.core.errors import TransientFailure
from transcriber.domain.stages import step_names
from transcriber.pipeline.step import Advanced, Deferred, Job, Outcome


@dataclass(slots=True)
class Holders:
    """Which records have a step running right now, shared by a whole step table.

    The load test's witness for "no record is held by two claimers at once": a
    record entered while it is already running counts as an overlap.
    """

    running: dict[str, int] = field(default_factory=dict)
    overlaps: int = 0
    max_per_record: int = 0
    max_running: int = 0
    # sum(running.values()), kept as it changes (not summed again on every entry).
    now_running: int = 0

    def enter(self, record_id: str) -> None:
        held = self.running.get(record_id, 0) + 1
        self.running[record_id] = held
        if held > 1:
            self.overlaps += 1
        self.max_per_record = max(self.max_per_record, held)
        self.now_running += 1
        self.max_running = max(self.max_running, self.now_running)

    def leave(self, record_id: str) -> None:
        self.now_running -= 1
        held = self.running[record_id] - 1
        if held:
            self.running[record_id] = held
        else:
            del self.running[record_id]


@dataclass(slots=True, kw_only=True)
class SimulatedStep:
    """A step that takes a random time from `seconds`, then fails transiently
    (share `failure_share`), defers (share `defer_share`) or advances.

    `advanced` counts, per record, the runs that returned `Advanced`: with one
    holder per record it is 1 for every record that passed this step.
    """

    name: str
    holders: Holders
    rng: random.Random
    seconds: tuple[float, float] = (0.0, 0.0)
    failure_share: float = 0.0
    defer_share: float = 0.0
    defer_seconds: float = 0.0
    advanced: dict[str, int] = field(default_factory=dict)
    failures: int = 0
    deferrals: int = 0

    def time_limit_seconds(self, job: Job) -> float | None:
        return None

    async def run(self, job: Job) -> Outcome:
        self.holders.enter(job.record_id)
        try:
            low, high = self.seconds
            pause = self.rng.uniform(low, high)
            if pause > 0:
                await job.clock.sleep(pause)
            roll = self.rng.random()
        finally:
            self.holders.leave(job.record_id)
        if roll < self.failure_share:
            self.failures += 1
            raise TransientFailure(f"simulated {self.name} failure")
        if roll < self.failure_share + self.defer_share:
            self.deferrals += 1
            return Deferred(delay_seconds=self.defer_seconds)
        self.advanced[job.record_id] = self.advanced.get(job.record_id, 0) + 1
        return Advanced()


def simulated_steps(
    *,
    seconds: tuple[float, float],
    failure_share: float,
    defer_share: float,
    defer_seconds: float,
    seed: int | None = None,
) -> tuple[dict[str, SimulatedStep], Holders]:
    """A complete step table of `SimulatedStep`s sharing one `Holders`."""
    holders = Holders()
    rng = random.Random(seed)
    table = {
        name: SimulatedStep(name=name, holders=holders, rng=rng, seconds=seconds,
                            failure_share=failure_share, defer_share=defer_share,
                            defer_seconds=defer_seconds)
        for name in step_names()
    }
    return table, holders
