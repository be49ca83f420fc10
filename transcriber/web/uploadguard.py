"""Bounded uploads: how many receive at once, and how slowly a body may come.

An upload holds a temporary file and a descriptor for as long as its body
takes, so a client that opens many and sends nothing would hold them all.
`UploadSlots` counts uploads receiving in total and per user; one more is
answered before its body is read (503 or 429 with `Retry-After`). A
watchdog follows each body: no byte for `upload_idle_seconds`, or fewer than
`upload_min_bytes_per_second` on average over the last
`upload_rate_window_seconds`, and the body's stream fails, so the handler
stops reading, removes the temporary file and answers 408.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

from aiohttp import web

from transcriber.errors import IncompleteInput
from transcriber.settings import ServerSettings
from transcriber.web.errors import ApiError

RETRY_AFTER_SECONDS = 30


class UploadTooSlow(IncompleteInput):
    """The body stalled or crawled below the minimum rate."""


class UploadSlots:
    def __init__(self, *, total: int, per_user: int) -> None:
        self._total = total
        self._per_user = per_user
        self._by_user: Counter[str] = Counter()

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> UploadSlots:
        return cls(total=settings.uploads_max, per_user=settings.uploads_per_user_max)

    @property
    def receiving(self) -> int:
        return self._by_user.total()

    @asynccontextmanager
    async def hold(self, user_id: str) -> AsyncIterator[None]:
        # The sender's own cap first: it is theirs to wait for.
        if self._by_user[user_id] >= self._per_user:
            raise ApiError(429, "too_many_uploads",
                           f"at most {self._per_user} uploads at once; "
                           "wait for one to finish", headers={"Retry-After":
                                                              str(RETRY_AFTER_SECONDS)},
                           close=True)
        if self.receiving >= self._total:
            raise ApiError(503, "busy", "too many uploads are arriving; try again shortly",
                           headers={"Retry-After": str(RETRY_AFTER_SECONDS)}, close=True)
        self._by_user[user_id] += 1
        try:
            yield
        finally:
            self._by_user[user_id] -= 1
            if self._by_user[user_id] <= 0:
                del self._by_user[user_id]


@dataclass(frozen=True, slots=True, kw_only=True)
class Pace:
    idle_seconds: float
    min_bytes_per_second: int
    window_seconds: float

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> Pace:
        return cls(idle_seconds=settings.upload_idle_seconds,
                   min_bytes_per_second=settings.upload_min_bytes_per_second,
                   window_seconds=settings.upload_rate_window_seconds)

    @property
    def tick_seconds(self) -> float:
        return max(min(self.idle_seconds, self.window_seconds) / 4, 0.05)


class PaceWatch:
    """Pure bookkeeping of (time, bytes so far) samples; `verdict` says when to cut."""

    def __init__(self, pace: Pace, now: float) -> None:
        self._pace = pace
        self._started = now
        self._last_progress = now
        self._last_bytes = 0
        self._samples: deque[tuple[float, int]] = deque([(now, 0)])

    def verdict(self, now: float, received: int) -> str | None:
        if received != self._last_bytes:
            self._last_bytes = received
            self._last_progress = now
        elif now - self._last_progress >= self._pace.idle_seconds:
            return "idle"
        self._samples.append((now, received))
        window = self._pace.window_seconds
        # Keep the newest sample at least a window old: the average is over
        # at least a whole window, and the first window is a grace period.
        while len(self._samples) > 1 and now - self._samples[1][0] >= window:
            self._samples.popleft()
        then, before = self._samples[0]
        if now - then >= window and self._pace.min_bytes_per_second:
            rate = (received - before) / (now - then)
            if rate < self._pace.min_bytes_per_second:
                return "slow"
        return None


@asynccontextmanager
async def paced_body(request: web.Request, pace: Pace,
                     clock: Callable[[], float]) -> AsyncIterator[None]:
    """Watch the request body while the block reads it; cut it when it stalls."""
    content = request.content
    watch = PaceWatch(pace, clock())

    async def watchdog() -> None:
        while not content.is_eof():
            await asyncio.sleep(pace.tick_seconds)
            reason = watch.verdict(clock(), content.total_bytes)
            if reason is not None:
                # Wakes the reader with this error wherever it waits.
                content.set_exception(UploadTooSlow(reason))
                return

    task = asyncio.create_task(watchdog(), name="upload-pace")
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


UPLOAD_SLOTS = web.AppKey("upload_slots", UploadSlots)
