"""The step actor: claim → decide → run the stage's step → post the outcome.

N identical actors run side by side (P14); none is bound to a stage. The
actor does I/O only; every decision comes from `transcriber.pipeline.policy`. While a
step runs the actor renews its lease every lease/3 (P4), cancels the step
when the lease is lost (its result would be discarded anyway) or when it runs
past its time limit (a transient failure). A step cancelled because the
service stops gives its attempt back through a write that survives the
cancellation (P16).
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

import structlog
from structlog.typing import FilteringBoundLogger

from transcriber.core.clock import Clock, parse_time
from transcriber.core.errors import ClaimLost, NoWork
from transcriber.core.observability import (
    CLAIM_SECONDS,
    LEASE_EXPIRIES,
    STEP_SECONDS,
    WORKER_RUNS,
)
from transcriber.db.commands.pipeline import (
    Advance,
    Claim,
    Claimed,
    Defer,
    Fail,
    Halt,
    ReleaseOnShutdown,
    RenewLease,
)
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.domain.stages import (
    STAGES,
    HaltReason,
    Stage,
    spec_of,
    stage_of_step,
)
from transcriber.followups.after import FollowUps
from transcriber.followups.parts import Moment
from transcriber.pipeline import policy
from transcriber.pipeline.effects import discard_unwritten
from transcriber.pipeline.settled import SettledRecords
from transcriber.pipeline.step import Advanced, Deferred, Job, Step
from transcriber.ports import RecordFiles
from transcriber.settings import Settings

log = structlog.get_logger(__name__)

# The stage whose step's success makes a record `done`.
FINAL_STEP_STAGE = next(spec.stage for spec in STAGES if spec.next_stage is Stage.DONE)
RunOutcome = Literal["empty", "success", "failure", "deferred", "halted", "stale", "lease_lost"]
ClaimSource = Callable[[], Awaitable["Claimed | NoWork"]]


@dataclass(frozen=True, slots=True, kw_only=True)
class RunReport:
    """What one run of the actor did (for the loop and for tests)."""

    outcome: RunOutcome
    record_id: str | None = None
    stage: Stage | None = None
    step: str | None = None


EMPTY = RunReport(outcome="empty")


class StepActor:
    def __init__(
        self,
        *,
        name: str,
        settings: Settings,
        clock: Clock,
        writer: Writer,
        readers: ReaderPool,
        files: RecordFiles,
        steps: Mapping[str, Step],
        followups: FollowUps,
        rng: policy.Random = random.random,
        claim: ClaimSource | None = None,
        extras: Mapping[str, Any] | None = None,
        settled: SettledRecords | None = None,
    ) -> None:
        self.name = name
        self._settings = settings
        self._pipeline = settings.pipeline
        self._clock = clock
        self._writer = writer
        self._readers = readers
        self._files = files
        self._steps = steps
        self._followups = followups
        self._rng = rng
        self._claim_source = claim or self._claim
        self._extras = extras or {}
        # Told when a record reaches done or halts (the OpenAI door waits on it).
        self._settled = settled or SettledRecords()
        # Fixed for the actor's life: computed once, not per claim.
        self._leases = policy.lease_table(self._pipeline)
        self._metrics: dict[tuple[Any, tuple[str, ...]], Any] = {}
        # Bound once: the module's lazy proxy binds anew on every call, and a
        # cycle logs twice (at debug level, usually filtered out). The bound
        # logger shares structlog's processor list, so captures still see it.
        self._log: FilteringBoundLogger = log.bind()
        self.empty_runs = 0
        self.runs = 0

    # -- the loop ---------------------------------------------------------------

    async def run_forever(self, stopping: asyncio.Event) -> None:
        """Run until `stopping` is set; an empty run sleeps on the clock (P1)."""
        # One waiter on `stopping` for the actor's life, not one per idle sleep.
        stop = asyncio.ensure_future(stopping.wait())
        try:
            while not stopping.is_set():
                try:
                    report = await self.run_once()
                except Exception as exc:
                    # A bug or a dead writer; the actor itself must not die of it.
                    self._log.error("step_actor_error", actor=self.name, error=type(exc).__name__)
                    report = EMPTY
                if report.outcome == "empty" and not stopping.is_set():
                    await self._idle(stop)
        finally:
            stop.cancel()

    async def _idle(self, stop: asyncio.Future[Any]) -> None:
        sleeper = asyncio.ensure_future(self._clock.sleep(self._pipeline.idle_sleep_seconds))
        try:
            await asyncio.wait({sleeper, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            sleeper.cancel()

    # -- one run ------------------------------------------------------------------

    async def run_once(self) -> RunReport:
        claimed = await self._claim_guarded()
        if claimed is None:
            self.empty_runs += 1
            return EMPTY
        self.runs += 1
        if claimed.lease_taken_over:
            LEASE_EXPIRIES.inc()
            self._log.warning("lease_taken_over", record_id=claimed.record_id,
                        stage=claimed.stage.value, attempts=claimed.attempts)
        verdict = policy.check_claim(
            stage=claimed.stage,
            attempts=claimed.attempts,
            state_entered_at=parse_time(claimed.state_entered_at),
            now=self._clock.now(),
            settings=self._pipeline,
        )
        if isinstance(verdict, policy.HaltRecord):
            return await self._halt(claimed, verdict.reason, verdict.error_text, step=None,
                                    duration_ms=None)
        return await self._run_step(claimed, self._steps[verdict.step])

    def _claim(self) -> asyncio.Future[Claimed | NoWork]:
        # The writer's own reply future: shielding it below needs no task.
        return self._writer.submit(Claim(leases=self._leases))

    async def _claim_guarded(self) -> Claimed | None:
        """Claim; `None` is an empty run. A claim answered after the service
        began to stop is released at once, so the record is not hidden."""
        started = time.perf_counter()
        pending = asyncio.ensure_future(self._claim_source())
        try:
            answer = await asyncio.shield(pending)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                late = await pending
                if isinstance(late, Claimed):
                    await self._writer.ask(
                        ReleaseOnShutdown(record_id=late.record_id, token=late.token))
            raise
        except Exception as exc:
            if policy.is_no_work(exc):
                return None
            raise
        if policy.is_no_work(answer):
            return None
        CLAIM_SECONDS.observe(time.perf_counter() - started)
        assert isinstance(answer, Claimed)
        self._log.debug("claim_step", actor=self.name, record_id=answer.record_id,
                  stage=answer.stage.value, attempts=answer.attempts)
        return answer

    async def _run_step(self, claimed: Claimed, step: Step) -> RunReport:
        job = Job(
            record_id=claimed.record_id, token=claimed.token, stage=claimed.stage,
            attempts=claimed.attempts, settings=self._settings, clock=self._clock,
            writer=self._writer, readers=self._readers, files=self._files, extras=self._extras,
        )
        started = self._clock.monotonic()
        try:
            result = await self._supervise(job, step)
        except asyncio.CancelledError:
            await self._release_on_shutdown(claimed)
            raise
        seconds = self._clock.monotonic() - started
        self._metric(STEP_SECONDS, claimed.stage.value).observe(seconds)
        duration_ms = int(seconds * 1000)
        if isinstance(result, ClaimLost):
            self._log.warning("lease_lost", record_id=claimed.record_id, stage=claimed.stage.value,
                        step=step.name)
            return self._report("lease_lost", claimed, step.name)
        decision = policy.decide(result, attempts=claimed.attempts, settings=self._pipeline,
                                 rng=self._rng)
        return await self._apply(claimed, step.name, decision, duration_ms)

    async def _supervise(self, job: Job, step: Step) -> Advanced | Deferred | BaseException:
        """Run the step with its heartbeat and time limit; return its outcome or
        its failure (never raise, except the actor's own cancellation)."""
        try:
            limit = policy.step_time_limit(step.time_limit_seconds(job), self._pipeline)
            running = step.run(job)
        except Exception as exc:  # a step broken before it started is still its failure
            return exc
        task = asyncio.create_task(running, name=f"{self.name}:{step.name}:{job.record_id}")
        started = self._clock.monotonic()
        try:
            # One turn of the loop first: the step task runs up to its first
            # real wait. A step that is already done by then (no I/O) needs no
            # timer and no heartbeat; it cannot have outlived a lease.
            await asyncio.sleep(0)
            if not task.done():
                outcome = await self._watch(task, job, limit, started)
                if outcome is not None:
                    return outcome
        except asyncio.CancelledError:
            await _cancel(task)
            raise
        return _outcome(task, step)

    async def _watch(
        self, task: asyncio.Task[Any], job: Job, limit: float, started: float
    ) -> BaseException | None:
        """Heartbeat and time limit of a running step, until it ends (`None`)
        or is stopped (the reason: timed out, or the claim was lost)."""
        lease = policy.lease_seconds(job.stage, self._pipeline)
        interval = policy.renew_interval(lease)
        while not task.done():
            elapsed = self._clock.monotonic() - started
            if elapsed >= limit:
                await _cancel(task)
                return policy.StepTimedOut(limit)
            timer = asyncio.ensure_future(self._clock.sleep(min(interval, limit - elapsed)))
            try:
                await asyncio.wait({task, timer}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                timer.cancel()
            if task.done() or self._clock.monotonic() - started >= limit:
                continue
            try:
                await self._writer.ask(RenewLease(
                    record_id=job.record_id, token=job.token, lease_seconds=lease))
            except ClaimLost as lost:
                await _cancel(task)
                return lost
        return None

    async def _apply(
        self, claimed: Claimed, step: str, decision: policy.Decision, duration_ms: int
    ) -> RunReport:
        record_id, token, stage = claimed.record_id, claimed.token, claimed.stage.value
        if isinstance(decision, policy.AdvanceDecision):
            finishing = spec_of(stage_of_step(step)).next_stage is Stage.DONE
            done = Moment(record_id=record_id, occasion="done") if finishing else None
            # `done` writes every follow-up's row in its own transaction.
            effects = decision.effects if done is None else (
                *decision.effects, *self._followups.effects(done))
            try:
                await self._writer.ask(Advance(
                    record_id=record_id, token=token, step=step,
                    effects=effects, duration_ms=duration_ms))
            except ClaimLost:
                await discard_unwritten(decision.effects, self._files)
                return self._stale(claimed, step)
            except Exception as exc:
                # An effect refused to land: the whole advance rolled back; it is
                # the step's failure like any other.
                await discard_unwritten(decision.effects, self._files)
                retry = policy.decide(exc, attempts=claimed.attempts, settings=self._pipeline,
                                      rng=self._rng)
                return await self._apply(claimed, step, retry, duration_ms)
            self._metric(WORKER_RUNS, stage, "success").inc()
            self._log.debug("step_done", record_id=record_id, stage=stage, step=step,
                      duration_ms=duration_ms)
            if claimed.stage is FINAL_STEP_STAGE:
                self._settled.settled(record_id)
                await self._files.release(record_id)
            if done is not None:
                # After `done` is stored, exactly once; a failed follow-up undoes nothing (P6).
                await self._followups.after(done)
            return self._report("success", claimed, step)
        if isinstance(decision, policy.DeferDecision):
            try:
                await self._writer.ask(Defer(
                    record_id=record_id, token=token, delay_seconds=decision.delay_seconds))
            except ClaimLost:
                return self._stale(claimed, step)
            self._metric(WORKER_RUNS, stage, "deferred").inc()
            self._log.debug("step_deferred", record_id=record_id, stage=stage,
                      delay_seconds=decision.delay_seconds)
            return self._report("deferred", claimed, step)
        if isinstance(decision, policy.RetryDecision):
            try:
                await self._writer.ask(Fail(
                    record_id=record_id, token=token, delay_seconds=decision.delay_seconds,
                    error_text=decision.error_text))
            except ClaimLost:
                return self._stale(claimed, step)
            self._metric(WORKER_RUNS, stage, "failure").inc()
            self._log.warning("step_failed", record_id=record_id, stage=stage, step=step,
                        error=decision.error_class, kind="transient", attempts=claimed.attempts,
                        retry_in_seconds=round(decision.delay_seconds, 1))
            return self._report("failure", claimed, step)
        self._log.warning("step_failed", record_id=record_id, stage=stage, step=step,
                    error=decision.error_class, kind="permanent", attempts=claimed.attempts)
        return await self._halt(claimed, decision.reason, decision.error_text, step=step,
                                duration_ms=duration_ms)

    async def _halt(
        self,
        claimed: Claimed,
        reason: HaltReason,
        error_text: str,
        *,
        step: str | None,
        duration_ms: int | None,
    ) -> RunReport:
        halted = Moment(record_id=claimed.record_id, occasion="halted", halt_reason=reason)
        try:
            await self._writer.ask(Halt(
                record_id=claimed.record_id, token=claimed.token, reason=reason,
                error_text=error_text, duration_ms=duration_ms,
                effects=self._followups.effects(halted)))
        except ClaimLost:
            return self._stale(claimed, step)
        self._metric(WORKER_RUNS, claimed.stage.value, "halted").inc()
        self._log.error("record_halted", record_id=claimed.record_id, stage=claimed.stage.value,
                  reason=reason.value, attempts=claimed.attempts)
        self._settled.settled(claimed.record_id)
        # Its working copies (s3) are fetched again if a person resumes it.
        await self._files.release(claimed.record_id)
        # After the halt is stored, exactly once; a failed follow-up undoes nothing (P10, P6).
        await self._followups.after(halted)
        return self._report("halted", claimed, step)

    async def _release_on_shutdown(self, claimed: Claimed) -> None:
        # `Writer.ask` enqueues before it awaits: the release is written even if
        # this task is cancelled again while waiting for the answer.
        try:
            await self._writer.ask(
                ReleaseOnShutdown(record_id=claimed.record_id, token=claimed.token))
        except ClaimLost:
            released = False
        else:
            released = True
        self._log.info("step_released_on_shutdown", record_id=claimed.record_id,
                 stage=claimed.stage.value, released=released)

    def _stale(self, claimed: Claimed, step: str | None) -> RunReport:
        self._log.warning("result_stale", record_id=claimed.record_id, stage=claimed.stage.value,
                    step=step)
        return self._report("stale", claimed, step)

    def _metric(self, family: Any, *labels: str) -> Any:
        # `labels()` takes a lock and builds a key on every call: once per label set.
        child = self._metrics.get((family, labels))
        if child is None:
            child = self._metrics[family, labels] = family.labels(*labels)
        return child

    @staticmethod
    def _report(outcome: RunOutcome, claimed: Claimed, step: str | None) -> RunReport:
        return RunReport(outcome=outcome, record_id=claimed.record_id, stage=claimed.stage,
                         step=step)


def _outcome(task: asyncio.Task[Any], step: Step) -> Advanced | Deferred | BaseException:
    """What a finished step task gives the policy."""
    if task.cancelled():
        return policy.StepCancelled()
    error = task.exception()
    if error is not None:
        return error
    result: object = task.result()
    if isinstance(result, Advanced | Deferred):
        return result
    return TypeError(f"step {step.name} returned {type(result).__name__}")


async def _cancel(task: asyncio.Task[Any]) -> None:
    """Cancel a step task and wait until it has really stopped."""
    task.cancel()
    await asyncio.wait({task})
    if not task.cancelled():
        task.exception()  # retrieved: the result is discarded on purpose
