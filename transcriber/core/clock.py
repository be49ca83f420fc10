"""The one clock. Every stored time is `YYYY-MM-DDTHH:MM:SSZ` (UTC, seconds).

Fixed-width text sorts like time, so SQL compares times as text. Tests inject
`FakeClock` (see `transcriber.testing.clock`) instead of sleeping.
"""

from __future__ import annotations

import asyncio
import time
from datetime import UTC, datetime, timedelta
from typing import Protocol

TIME_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
_STORED_LENGTH = len("2026-01-01T00:00:00Z")


def format_time(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime(TIME_FORMAT)


def parse_time(text: str) -> datetime:
    # `fromisoformat` reads the stored format about 20 times faster than
    # `strptime` (a claim parses one); anything else goes through `strptime`,
    # which refuses what is not exactly TIME_FORMAT.
    if len(text) == _STORED_LENGTH and text[10] == "T" and text[-1] == "Z":
        return datetime.fromisoformat(text)
    return datetime.strptime(text, TIME_FORMAT).replace(tzinfo=UTC)


class Clock(Protocol):
    def now(self) -> datetime:
        """The current UTC time."""

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin, for durations."""

    async def sleep(self, seconds: float) -> None:
        """Wait; a fake clock returns once the test advances time."""


class SystemClock:
    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def stamp(clock: Clock, *, plus_seconds: float = 0) -> str:
    """The clock's time (optionally shifted) in the stored format."""
    return format_time(clock.now() + timedelta(seconds=plus_seconds))


async def rest(clock: Clock, seconds: float, *events: asyncio.Event) -> None:
    """Return once `seconds` passed on `clock` or as soon as one of `events` is set: the
    pause of every polling actor, woken early by its wake or stop event."""
    waiters = [asyncio.ensure_future(clock.sleep(seconds)),
               *(asyncio.ensure_future(event.wait()) for event in events)]
    try:
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
