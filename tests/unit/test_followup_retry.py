"""The follow-ups' one retry rule (`followups.retry`), as each queue sets it: the
Telegram outbox (a window), the describer (a number of tries, asked waits within
the cap), webhooks (a window, any asked wait)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from transcriber.core.errors import TransientFailure
from transcriber.followups.retry import RetryRule, asked_of, asked_seconds

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


def test_the_backoff_doubles_to_its_cap() -> None:
    rule = RetryRule(base_seconds=10.0, cap_seconds=600.0)
    waits = [rule.next_try(failures=n, now=NOW) for n in range(1, 9)]
    assert waits == [10, 20, 40, 80, 160, 320, 600, 600]


def test_a_longer_asked_wait_wins_and_a_shorter_one_does_not() -> None:
    rule = RetryRule(base_seconds=1.0, cap_seconds=600.0)
    assert rule.next_try(failures=1, asked=90.0, now=NOW) == 90
    assert rule.next_try(failures=5, asked=3.0, now=NOW) == 16


def test_an_asked_wait_is_bounded_where_the_queue_says_so() -> None:
    rule = RetryRule(base_seconds=10.0, cap_seconds=600.0, asked_cap_seconds=600.0)
    assert rule.next_try(failures=1, asked=86_400.0, now=NOW) == 600
    assert rule.next_try(failures=1, asked=120.0, now=NOW) == 120


def test_a_row_is_given_up_after_its_tries() -> None:
    rule = RetryRule(base_seconds=10.0, cap_seconds=600.0, attempts_limit=3)
    assert rule.next_try(failures=2, now=NOW) == 20
    assert rule.next_try(failures=3, now=NOW) is None


def test_a_row_is_given_up_when_its_next_try_would_pass_the_window() -> None:
    rule = RetryRule(base_seconds=1.0, cap_seconds=600.0, window=timedelta(hours=1))
    fresh, old = NOW - timedelta(minutes=10), NOW - timedelta(minutes=59, seconds=30)
    assert rule.next_try(failures=1, created_at=fresh, now=NOW) == 1
    assert rule.next_try(failures=10, created_at=old, now=NOW) is None
    assert rule.next_try(failures=1, asked=3600.0, created_at=fresh, now=NOW) is None


def test_what_an_error_or_a_header_asks_for() -> None:
    assert asked_seconds(asked_of(TransientFailure("busy", retry_after=42)), NOW) == 42
    assert asked_seconds(asked_of(ValueError("x")), NOW) is None
    assert asked_seconds("Thu, 01 Jan 2026 12:05:00 GMT", NOW) == 300
    assert asked_seconds(True, NOW) is None
