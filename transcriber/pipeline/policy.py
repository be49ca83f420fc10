"""Pure pipeline decisions: no I/O, no clock reads, no database.

The step actors and the writer commands only do I/O and apply what these
functions decide. Everything stage-dependent derives from `stages.STAGES`.

Eligibility (P2) has its executable form in the claim query
(`db.queries.pipeline.CLAIM`); this is its statement in words. A record is
eligible when all of these hold:

- its stage is claimable (`stages.claimable_stages()`: every stage with a step);
- it is not halted (`halted_at IS NULL`; the halt flag is the only way out of
  selection, P9);
- its `delay_time` is empty or has passed (backoff after a failure, P5, or a
  deferral, P12);
- its lease is empty or has expired (`acquire_expires_at <= now`, P4).

Among eligible records the oldest wins: order `created_at`, then `id` (P2).
The owner plays no part (P7).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Literal

from transcriber.core.errors import NoWork, PermanentFailure, StepFailure, TransientFailure
from transcriber.db.commands.pipeline import Effect
from transcriber.domain.stages import HaltReason, LimitKind, Stage, claimable_stages, spec_of
from transcriber.pipeline.step import Advanced, Deferred
from transcriber.ports import ReplyAddress, UndeliveredReason
from transcriber.settings import PipelineSettings

Random = Callable[[], float]
"""A source of floats in [0, 1): `random.random` in production, fixed in tests."""

ERROR_TEXT_MAX = 500


# -- P1: "no work" ----------------------------------------------------------


def _chain(value: BaseException) -> Iterator[BaseException]:
    """Every exception reachable through causes, contexts and groups."""
    seen: set[int] = set()
    stack: list[BaseException] = [value]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        yield current
        if isinstance(current, BaseExceptionGroup):
            stack.extend(current.exceptions)
        if current.__cause__ is not None:
            stack.append(current.__cause__)
        if current.__context__ is not None:
            stack.append(current.__context__)


def is_no_work(value: object) -> bool:
    """True when `value` is, or wraps at any depth, the "no work" marker."""
    if not isinstance(value, BaseException):
        return False
    return any(isinstance(item, NoWork) for item in _chain(value))


# -- P4: leases, step time limit ---------------------------------------------


def lease_seconds(stage: Stage, settings: PipelineSettings) -> float:
    """The lease written at claim (and at every renewal) for a record in `stage`."""
    override = settings.stage_lease_seconds.get(stage.value)
    return float(override) if override is not None else float(settings.lease_seconds)


def lease_table(settings: PipelineSettings) -> dict[Stage, float]:
    """Lease of every claimable stage, the parameters of the claim query."""
    return {stage: lease_seconds(stage, settings) for stage in claimable_stages()}


def renew_interval(lease: float) -> float:
    """Heartbeat period: a third of the lease, so two renewals may fail in a row."""
    return lease / 3


def step_time_limit(step_limit: float | None, settings: PipelineSettings) -> float:
    """How long a step may run before the actor cancels it (P4)."""
    if step_limit is not None and step_limit > 0:
        return step_limit
    return settings.step_time_limit_minutes * 60


# -- P5: backoff --------------------------------------------------------------


def backoff_base_seconds(attempts: int, *, base: float, cap: float) -> float:
    """`base · 2^(attempts-1)`, at most `cap` (no jitter)."""
    exponent = max(attempts, 1) - 1
    # Beyond 2^64 the cap has long won; avoid building huge floats.
    if exponent >= 64:
        return cap
    return min(base * 2.0**exponent, cap)


def backoff_seconds(
    attempts: int, *, base: float, cap: float, jitter: float, rng: Random = random.random
) -> float:
    """The pause before the next try after the `attempts`-th failure (P5).

    ±`jitter` spreads retries of records that failed together, so an outage
    does not end with all of them hitting the provider in the same second.
    """
    plain = backoff_base_seconds(attempts, base=base, cap=cap)
    return plain * (1 + jitter * (2 * rng() - 1))


def retry_delay(
    attempts: int,
    settings: PipelineSettings,
    *,
    retry_after: float | None = None,
    rng: Random = random.random,
) -> float:
    """Backoff from the settings; a failure that asks for a longer wait gets it."""
    delay = backoff_seconds(
        attempts,
        base=settings.backoff_base_seconds,
        cap=settings.backoff_cap_seconds,
        jitter=settings.backoff_jitter,
        rng=rng,
    )
    if retry_after is not None and retry_after > delay:
        return retry_after
    return delay


# -- P8, P11, P16: what the claimer does with a claimed record ----------------


def next_step(stage: Stage) -> str:
    """The one place that picks the step from the stage (P8)."""
    step = spec_of(stage).step
    if step is None:
        raise ValueError(f"stage {stage.value} has no step (it is never claimed)")
    return step


def stuck_limit_seconds(stage: Stage, settings: PipelineSettings) -> float | None:
    """How long a record may stay in `stage` before it is halted `stuck` (P11)."""
    kind = spec_of(stage).limit
    if kind is None:
        return None
    if kind is LimitKind.OWN_WORK:
        return settings.own_work_limit_minutes * 60
    return settings.foreign_work_limit_minutes * 60


@dataclass(frozen=True, slots=True, kw_only=True)
class RunStep:
    """Run the stage's step."""

    step: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HaltRecord:
    """Halt the record (the stage is kept) and tell the sender (P9, P10)."""

    reason: HaltReason
    error_text: str


ClaimVerdict = RunStep | HaltRecord


def check_claim(
    *,
    stage: Stage,
    attempts: int,
    state_entered_at: datetime,
    now: datetime,
    settings: PipelineSettings,
) -> ClaimVerdict:
    """What the claimer does with a record it just claimed (P11, P16).

    `attempts` already counts this claim, so `attempts > limit` means the
    limit was spent by earlier claims that never reached success.
    """
    if attempts > settings.attempts_limit:
        return HaltRecord(
            reason=HaltReason.ATTEMPTS_EXHAUSTED,
            error_text=f"{attempts - 1} attempts spent, the limit is {settings.attempts_limit}",
        )
    limit = stuck_limit_seconds(stage, settings)
    in_stage = (now - state_entered_at).total_seconds()
    if limit is not None and in_stage > limit:
        return HaltRecord(
            reason=HaltReason.STUCK,
            error_text=f"{int(in_stage)} s in stage {stage.value}, the limit is {int(limit)} s",
        )
    return RunStep(step=next_step(stage))


# -- P12, P17: how a step's result maps to a decision ---------------------------


class StepTimedOut(TransientFailure):
    """The step ran past its time limit and was cancelled (P4): transient."""

    def __init__(self, limit_seconds: float) -> None:
        super().__init__(f"step ran longer than {limit_seconds:g} s")
        self.limit_seconds = limit_seconds


class StepCancelled(TransientFailure):
    """The step was cancelled by something other than the service's shutdown."""

    def __init__(self) -> None:
        super().__init__("step was cancelled")


@dataclass(frozen=True, slots=True, kw_only=True)
class AdvanceDecision:
    effects: tuple[Effect, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeferDecision:
    delay_seconds: float


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryDecision:
    """A transient failure: release with a backoff delay, keep the attempts."""

    delay_seconds: float
    error_class: str
    error_text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class HaltDecision:
    """A permanent failure: halt `step_failed` at once (P17)."""

    reason: HaltReason
    error_class: str
    error_text: str


Decision = AdvanceDecision | DeferDecision | RetryDecision | HaltDecision


def error_text(error: BaseException) -> str:
    """The machine text kept with a failure: the class and, for our own failure
    kinds, their reason. Foreign exceptions' messages are left out: they may
    carry file names, URLs or content."""
    name = type(error).__name__
    own_reason = isinstance(error, StepFailure) and bool(error.reason)
    text = f"{name}: {error}" if own_reason else name
    return text[:ERROR_TEXT_MAX]


def decide(
    result: Advanced | Deferred | BaseException,
    *,
    attempts: int,
    settings: PipelineSettings,
    rng: Random = random.random,
) -> Decision:
    """Map a step's outcome or raised failure to what the actor writes."""
    if isinstance(result, Advanced):
        return AdvanceDecision(effects=tuple(result.effects))
    if isinstance(result, Deferred):
        return DeferDecision(delay_seconds=max(result.delay_seconds, 0.0))
    if isinstance(result, PermanentFailure):
        return HaltDecision(
            reason=HaltReason.STEP_FAILED,
            error_class=type(result).__name__,
            error_text=error_text(result),
        )
    retry_after = result.retry_after if isinstance(result, TransientFailure) else None
    return RetryDecision(
        delay_seconds=retry_delay(attempts, settings, retry_after=retry_after, rng=rng),
        error_class=type(result).__name__,
        error_text=error_text(result),
    )


# -- P6: where a reply or notice goes ---------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class NoReply:
    """HTTP records get no reply and no undelivered log."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SendReply:
    pass


@dataclass(frozen=True, slots=True, kw_only=True)
class Undeliverable:
    reason: UndeliveredReason
    level: Literal["warning", "error"]


DeliveryPlan = NoReply | SendReply | Undeliverable


def undelivered_level(reason: UndeliveredReason) -> Literal["warning", "error"]:
    """A bot not configured is a declared mode (WARN); a Telegram record without
    a chat is corruption (ERROR) and must not drown among the former."""
    return "error" if reason in ("chat_missing", "window_passed") else "warning"


def delivery_plan(address: ReplyAddress, *, bot_running: bool) -> DeliveryPlan:
    if address.source != "telegram":
        return NoReply()
    if address.tg_chat_id is None:
        return Undeliverable(reason="chat_missing", level=undelivered_level("chat_missing"))
    if not bot_running:
        return Undeliverable(reason="bot_not_running", level=undelivered_level("bot_not_running"))
    return SendReply()
