"""The one retry rule of every follow-up's queue: backoff, `Retry-After`, give up.

A failed try waits `base · 2^(failures-1)`, at most `cap` (`backoff_seconds`:
the pipeline's own retries use the same curve, `pipeline.policy`). A wait the
other side asked for (`Retry-After` as seconds or an HTTP date, or a
`TransientFailure.retry_after`) wins when it is longer, up to the queue's
`asked_cap_seconds` (None: no bound). The row is given up when the next try
would come after its window (`window`, counted from the row's creation) or
after `attempts_limit` tries. Pure: the queues (`followups.reply`,
`followups.describe`, `followups.webhooks`) hand in their clock's `now`.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from email.utils import parsedate_to_datetime

from transcriber.pipeline.policy import backoff_base_seconds


def backoff_seconds(failures: int, *, base: float, cap: float) -> float:
    """base · 2^(failures-1), at most `cap` (1 s doubling to 10 min for webhooks)."""
    return float(backoff_base_seconds(failures, base=base, cap=cap))


def asked_seconds(asked: object, now: datetime) -> float | None:
    """The wait the other side asked for, in seconds from `now`: a number (an error's
    `retry_after`) or a `Retry-After` header (seconds, or an HTTP date); None when
    absent or unreadable."""
    if isinstance(asked, bool):
        return None
    if isinstance(asked, int | float):
        return max(float(asked), 0.0)
    if not isinstance(asked, str):
        return None
    text = asked.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        return None
    return max((moment - now).total_seconds(), 0.0)


def asked_of(error: BaseException) -> object:
    """What an error asks for (`TransientFailure.retry_after` and its kin); None."""
    return getattr(error, "retry_after", None)


@dataclass(frozen=True, slots=True, kw_only=True)
class RetryRule:
    """One queue's numbers for the one rule."""

    base_seconds: float
    cap_seconds: float
    window: timedelta | None = None
    """Give up once the next try would come later than this after the row's creation."""
    attempts_limit: int | None = None
    """Give up after this many tries."""
    asked_cap_seconds: float | None = None
    """The longest asked-for wait honoured (None: any)."""

    def next_try(self, *, failures: int, asked: float | None = None,
                 created_at: datetime | None = None, now: datetime) -> float | None:
        """Seconds until the next try after `failures` failed tries (this one counted);
        None when the row is given up."""
        if self.attempts_limit is not None and failures >= self.attempts_limit:
            return None
        delay = backoff_seconds(failures, base=self.base_seconds, cap=self.cap_seconds)
        if asked is not None and asked > delay:
            delay = asked if self.asked_cap_seconds is None else max(
                delay, min(asked, self.asked_cap_seconds))
        if (self.window is not None and created_at is not None
                and now + timedelta(seconds=delay) > created_at + self.window):
            return None
        return delay
