"""A process-wide budget of calls per window (SpeechKit: 2,500 status checks per hour).

A sliding window over the times of the calls made; `try_acquire` either
spends one call or says how long to wait. Waiting is the caller's choice:
the poll step defers instead of holding a worker.
"""

from __future__ import annotations

from collections import deque

from transcriber.core.clock import Clock


class CallBudget:
    def __init__(self, *, limit: int, window_seconds: float, clock: Clock) -> None:
        if limit < 1 or window_seconds <= 0:
            raise ValueError("a budget needs a positive limit and window")
        self._limit = limit
        self._window = window_seconds
        self._clock = clock
        self._calls: deque[float] = deque()

    @property
    def used(self) -> int:
        self._forget_old(self._clock.monotonic())
        return len(self._calls)

    def try_acquire(self) -> float:
        """0 when a call was spent; otherwise the seconds until one frees up."""
        now = self._clock.monotonic()
        self._forget_old(now)
        if len(self._calls) < self._limit:
            self._calls.append(now)
            return 0.0
        return max(self._calls[0] + self._window - now, 0.001)

    def _forget_old(self, now: float) -> None:
        while self._calls and self._calls[0] <= now - self._window:
            self._calls.popleft()
