"""The process-wide status-check budget (SpeechKit: 2,500 per hour)."""

from __future__ import annotations

import pytest

from transcriber.providers.quota import CallBudget
from transcriber.testing.clock import FakeClock


def test_budget_spends_then_says_how_long_to_wait() -> None:
    clock = FakeClock()
    budget = CallBudget(limit=3, window_seconds=3600, clock=clock)
    assert [budget.try_acquire() for _ in range(3)] == [0.0, 0.0, 0.0]
    clock.advance(600)
    assert budget.try_acquire() == pytest.approx(3000)
    assert budget.used == 3


def test_budget_frees_calls_as_the_window_slides() -> None:
    clock = FakeClock()
    budget = CallBudget(limit=2500, window_seconds=3600, clock=clock)
    for _ in range(2500):
        assert budget.try_acquire() == 0.0
    assert budget.try_acquire() > 0
    clock.advance(3600)
    assert budget.try_acquire() == 0.0
    assert budget.used == 1
