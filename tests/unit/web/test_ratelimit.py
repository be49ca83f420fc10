"""The token bucket and the poll interval, driven by the fake clock."""

from __future__ import annotations

from transcriber.followups.card import poll_after_ms
from transcriber.settings import ServerSettings
from transcriber.testing.clock import FakeClock
from transcriber.web.ratelimit import RateLimiter, TokenOwners


def _limiter(clock: FakeClock, requests: int = 120) -> RateLimiter:
    return RateLimiter(requests=requests, window_seconds=60, idle_seconds=600, clock=clock)


def test_full_budget_then_refusal_with_retry_after() -> None:
    clock = FakeClock()
    limiter = _limiter(clock)
    assert all(limiter.hit("a").allowed for _ in range(120))
    refused = limiter.hit("a")
    assert not refused.allowed
    assert refused.retry_after_seconds == 1  # one token every 0.5 s, rounded up to 1 s


def test_budget_refills_over_the_window() -> None:
    clock = FakeClock()
    limiter = _limiter(clock)
    for _ in range(120):
        limiter.hit("a")
    clock.advance(30)
    assert sum(limiter.hit("a").allowed for _ in range(100)) == 60


def test_retry_after_matches_the_refill_rate() -> None:
    clock = FakeClock()
    limiter = _limiter(clock, requests=2)  # one token per 30 s
    limiter.hit("a")
    limiter.hit("a")
    assert limiter.hit("a").retry_after_seconds == 30
    clock.advance(29)
    assert not limiter.hit("a").allowed
    clock.advance(1)
    assert limiter.hit("a").allowed


def test_addresses_have_separate_budgets() -> None:
    clock = FakeClock()
    limiter = _limiter(clock, requests=1)
    assert limiter.hit("a").allowed
    assert not limiter.hit("a").allowed
    assert limiter.hit("b").allowed


def test_idle_buckets_are_dropped_after_ten_minutes() -> None:
    clock = FakeClock()
    limiter = _limiter(clock)
    limiter.hit("old")
    clock.advance(300)
    limiter.hit("recent")
    assert limiter.tracked == 2
    clock.advance(300)  # "old" idle 600 s, "recent" 300 s
    limiter.hit("new")
    assert limiter.tracked == 2
    clock.advance(600)
    limiter.hit("new")
    assert limiter.tracked == 1


def test_poll_interval_is_the_card_share_of_the_budget() -> None:
    # 1/8 of 120 per 60 s = 15 polls per minute = one every 4 s.
    assert poll_after_ms(ServerSettings()) == 4000
    assert poll_after_ms(ServerSettings(rate_limit_requests=60,
                                        rate_limit_poll_share=0.25)) == 4000
    assert poll_after_ms(ServerSettings(rate_limit_requests=1000)) == 480


def test_the_table_is_bounded_and_forgets_the_least_recently_seen() -> None:
    clock = FakeClock()
    limiter = RateLimiter(requests=2, window_seconds=60, idle_seconds=600, clock=clock,
                          table_max=100)
    limiter.hit("steady")
    limiter.hit("steady")
    assert not limiter.hit("steady").allowed
    for n in range(99):  # distinct forwarded addresses, all within the idle time
        limiter.hit(f"10.0.{n // 256}.{n % 256}")
        if n % 10 == 0:
            assert not limiter.hit("steady").allowed  # still remembered: seen recently
    for n in range(10_000):
        limiter.hit(f"10.1.{n // 256}.{n % 256}")
        assert limiter.tracked <= 100
    assert limiter.tracked == 100


def test_token_owners_forget_and_keep_at_most_their_size() -> None:
    owners = TokenOwners(most=2)
    owners.learn("a", "alice")
    owners.learn("b", "bob")
    owners.learn("a", "alice")  # seen again: now the newest
    owners.learn("c", "carol")
    assert (owners.owner("a"), owners.owner("b"), owners.owner("c")) == (
        "alice", None, "carol")
    owners.forget("a")
    assert owners.owner("a") is None
