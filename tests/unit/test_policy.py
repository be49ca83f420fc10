"""Pure pipeline decisions (transcriber.pipeline.policy)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from transcriber.core.errors import NoWork, PermanentFailure, TransientFailure
from transcriber.domain.stages import HaltReason, Stage, claimable_stages
from transcriber.pipeline import policy
from transcriber.pipeline.step import Advanced, Deferred
from transcriber.ports import ReplyAddress
from transcriber.settings import PipelineSettings

DEFAULTS = PipelineSettings()
T0 = datetime(2026, 1, 1, tzinfo=UTC)

# -- P1: "no work" at any depth ----------------------------------------------------


def _wrapped_by_cause() -> Exception:
    try:
        try:
            raise NoWork
        except NoWork as inner:
            raise RuntimeError("claim layer explained it") from inner
    except RuntimeError as outer:
        return outer


def _wrapped_by_context() -> Exception:
    try:
        try:
            raise NoWork
        except NoWork:
            raise LookupError("raised while handling") from None
    except LookupError as outer:
        # `from None` hides the context from tracebacks but keeps __context__.
        return outer


def _wrapped_by_context_implicit() -> BaseException:
    try:
        try:
            raise NoWork
        except NoWork:
            raise KeyError("while handling") # noqa: B904 - the implicit chain is the point
    except KeyError as outer:
        return outer


@pytest.mark.parametrize(
    "value",
    [
        NoWork(),
        _wrapped_by_cause(),
        _wrapped_by_context(),
        _wrapped_by_context_implicit(),
        ExceptionGroup("one", [ValueError("x"), NoWork()]),
        ExceptionGroup("outer", [ExceptionGroup("inner", [_wrapped_by_cause()])]),
        BaseExceptionGroup("base", [KeyboardInterrupt(), NoWork()]),
    ],
    ids=["bare", "cause", "context-from-none", "context", "group", "nested-group", "base-group"],
)
def test_p01_no_work_is_recognised_at_any_depth(value: BaseException) -> None:
    assert policy.is_no_work(value)


@pytest.mark.parametrize(
    "value",
    [None, "no work", RuntimeError("no work"), TransientFailure("no work"),
     ExceptionGroup("g", [ValueError("x")])],
)
def test_p01_other_values_are_not_no_work(value: object) -> None:
    assert not policy.is_no_work(value)


def test_p01_a_cycle_in_the_chain_terminates() -> None:
    first = RuntimeError("a")
    second = RuntimeError("b")
    first.__context__ = second
    second.__context__ = first
    assert not policy.is_no_work(first)


# -- P5: backoff -------------------------------------------------------------------------


def test_p05_backoff_defaults_follow_base_times_power_of_two() -> None:
    plain = [policy.backoff_base_seconds(n, base=5, cap=300) for n in range(1, 10)]
    assert plain == [5, 10, 20, 40, 80, 160, 300, 300, 300]


def test_p05_jitter_uses_the_injected_random_source() -> None:
    low = policy.backoff_seconds(1, base=5, cap=300, jitter=0.1, rng=lambda: 0.0)
    mid = policy.backoff_seconds(1, base=5, cap=300, jitter=0.1, rng=lambda: 0.5)
    high = policy.backoff_seconds(1, base=5, cap=300, jitter=0.1, rng=lambda: 0.999999)
    assert low == pytest.approx(4.5)
    assert mid == pytest.approx(5.0)
    assert high == pytest.approx(5.5, rel=1e-5)


@given(
    base=st.floats(min_value=0.01, max_value=100),
    factor=st.floats(min_value=1, max_value=10_000),
    jitter=st.floats(min_value=0, max_value=0.99),
    attempts=st.integers(min_value=1, max_value=200),
    r=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_p05_backoff_never_exceeds_cap_plus_jitter(
    base: float, factor: float, jitter: float, attempts: int, r: float
) -> None:
    cap = base * factor
    delay = policy.backoff_seconds(attempts, base=base, cap=cap, jitter=jitter, rng=lambda: r)
    assert delay <= cap * (1 + jitter) * (1 + 1e-12)
    assert delay >= min(base, cap) * (1 - jitter) * (1 - 1e-12)


@given(
    base=st.floats(min_value=0.01, max_value=100),
    factor=st.floats(min_value=1, max_value=10_000),
    attempts=st.integers(min_value=1, max_value=100),
)
def test_p05_plain_backoff_grows_strictly_until_the_cap(
    base: float, factor: float, attempts: int
) -> None:
    cap = base * factor
    now = policy.backoff_base_seconds(attempts, base=base, cap=cap)
    after = policy.backoff_base_seconds(attempts + 1, base=base, cap=cap)
    if now < cap:
        assert after > now
    else:
        assert after == now == cap


@given(
    attempts=st.integers(min_value=1, max_value=20),
    r1=st.floats(min_value=0, max_value=1, exclude_max=True),
    r2=st.floats(min_value=0, max_value=1, exclude_max=True),
)
def test_p05_with_the_default_settings_each_jittered_pause_is_longer_until_the_cap(
    attempts: int, r1: float, r2: float
) -> None:
    s = DEFAULTS
    first = policy.retry_delay(attempts, s, rng=lambda: r1)
    second = policy.retry_delay(attempts + 1, s, rng=lambda: r2)
    plain_second = policy.backoff_base_seconds(attempts + 1, base=s.backoff_base_seconds,
                                               cap=s.backoff_cap_seconds)
    if plain_second < s.backoff_cap_seconds:
        assert second > first
    assert max(first, second) <= s.backoff_cap_seconds * 1.1 + 1e-9


def test_p05_retry_after_wins_when_longer() -> None:
    assert policy.retry_delay(1, DEFAULTS, retry_after=120, rng=lambda: 0.5) == 120
    assert policy.retry_delay(6, DEFAULTS, retry_after=1, rng=lambda: 0.5) == 160


def test_p05_huge_attempt_counts_do_not_overflow() -> None:
    assert policy.backoff_base_seconds(10_000, base=5, cap=300) == 300


# -- P4: leases, heartbeat, time limit -----------------------------------------------------


def test_p04_lease_defaults_to_the_setting_and_can_differ_by_stage() -> None:
    settings = dataclasses.replace(DEFAULTS, lease_seconds=60,
                                   stage_lease_seconds={"submitted": "30"})
    table = policy.lease_table(settings)
    assert set(table) == set(claimable_stages())
    assert table[Stage.SUBMITTED] == 30
    assert table[Stage.UPLOADED] == 60


def test_p04_heartbeat_every_third_of_the_lease() -> None:
    assert policy.renew_interval(60) == 20


def test_p04_step_time_limit_from_the_step_or_the_setting() -> None:
    assert policy.step_time_limit(None, DEFAULTS) == 3600
    assert policy.step_time_limit(0, DEFAULTS) == 3600
    assert policy.step_time_limit(90.5, DEFAULTS) == 90.5


# -- P8, P11, P16: the claimer's verdict ------------------------------------------------


def _verdict(stage: Stage, attempts: int, in_stage_seconds: float) -> policy.ClaimVerdict:
    return policy.check_claim(
        stage=stage, attempts=attempts,
        state_entered_at=T0, now=T0 + timedelta(seconds=in_stage_seconds), settings=DEFAULTS,
    )


@pytest.mark.parametrize(
    ("stage", "step"),
    [(Stage.UPLOADED, "normalize"), (Stage.NORMALIZED, "submit"), (Stage.SUBMITTED, "poll"),
     (Stage.TRANSCRIBED, "finish")],
)
def test_p08_next_step_is_chosen_by_stage(stage: Stage, step: str) -> None:
    assert policy.next_step(stage) == step
    assert _verdict(stage, 1, 0) == policy.RunStep(step=step)


def test_p08_done_has_no_step() -> None:
    with pytest.raises(ValueError, match="done"):
        policy.next_step(Stage.DONE)
    assert policy.stuck_limit_seconds(Stage.DONE, DEFAULTS) is None


def test_p16_attempts_above_the_limit_halt_attempts_exhausted() -> None:
    assert isinstance(_verdict(Stage.UPLOADED, 8, 0), policy.RunStep)
    verdict = _verdict(Stage.UPLOADED, 9, 0)
    assert isinstance(verdict, policy.HaltRecord)
    assert verdict.reason is HaltReason.ATTEMPTS_EXHAUSTED


@pytest.mark.parametrize(
    ("stage", "limit"),
    # `normalized` holds a whole local recognition in parts: the long limit.
    [(Stage.UPLOADED, 3600), (Stage.NORMALIZED, 86400), (Stage.SUBMITTED, 86400),
     (Stage.TRANSCRIBED, 3600)],
)
def test_p11_stuck_limit_by_whose_work_we_wait_for(stage: Stage, limit: int) -> None:
    assert policy.stuck_limit_seconds(stage, DEFAULTS) == limit
    assert isinstance(_verdict(stage, 1, limit), policy.RunStep)
    verdict = _verdict(stage, 1, limit + 1)
    assert isinstance(verdict, policy.HaltRecord)
    assert verdict.reason is HaltReason.STUCK


# -- P12, P17: outcomes to decisions -----------------------------------------------------


def test_p17_outcomes_and_failures_map_to_decisions() -> None:
    rng = lambda: 0.5  # noqa: E731
    assert policy.decide(Advanced(), attempts=1, settings=DEFAULTS, rng=rng) == \
        policy.AdvanceDecision(effects=())
    assert policy.decide(Deferred(delay_seconds=5), attempts=3, settings=DEFAULTS, rng=rng) == \
        policy.DeferDecision(delay_seconds=5)
    permanent = policy.decide(PermanentFailure("not audio"), attempts=1, settings=DEFAULTS)
    assert permanent == policy.HaltDecision(reason=HaltReason.STEP_FAILED,
                                            error_class="PermanentFailure",
                                            error_text="PermanentFailure: not audio")
    transient = policy.decide(TransientFailure("503"), attempts=2, settings=DEFAULTS, rng=rng)
    assert transient == policy.RetryDecision(delay_seconds=10, error_class="TransientFailure",
                                             error_text="TransientFailure: 503")
    unclassified = policy.decide(OSError("/data/records/x/secret.wav"), attempts=1,
                                 settings=DEFAULTS, rng=rng)
    assert isinstance(unclassified, policy.RetryDecision)
    assert unclassified.error_text == "OSError"  # a foreign message may carry a path
    timed_out = policy.decide(policy.StepTimedOut(60), attempts=1, settings=DEFAULTS, rng=rng)
    assert isinstance(timed_out, policy.RetryDecision)


# -- P6: delivery ----------------------------------------------------------------------------


def test_p06_delivery_plan() -> None:
    http = ReplyAddress(record_id="r", source="http")
    tg = ReplyAddress(record_id="r", source="telegram", tg_chat_id=5, tg_message_id=7)
    tg_no_chat = ReplyAddress(record_id="r", source="telegram")
    assert policy.delivery_plan(http, bot_running=False) == policy.NoReply()
    assert policy.delivery_plan(http, bot_running=True) == policy.NoReply()
    assert policy.delivery_plan(tg, bot_running=True) == policy.SendReply()
    assert policy.delivery_plan(tg, bot_running=False) == policy.Undeliverable(
        reason="bot_not_running", level="warning")
    # Corruption is the louder signal and wins over a missing bot.
    for running in (True, False):
        assert policy.delivery_plan(tg_no_chat, bot_running=running) == policy.Undeliverable(
            reason="chat_missing", level="error")
