"""Webhooks' pure rules: URLs, the addresses a delivery may reach, and what an
answer means (with the follow-ups' one retry rule: backoff, Retry-After, the window)."""

from __future__ import annotations

import ipaddress
from datetime import UTC, datetime, timedelta

import pytest

from transcriber.domain.webhooks import (
    TargetRefused,
    address_refusal,
    answered,
    masked_url,
    parse_target,
)
from transcriber.followups.retry import RetryRule, asked_seconds, backoff_seconds

NOW = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("url", "host", "port", "literal"), [
    ("http://hooks.example.net/in", "hooks.example.net", 80, False),
    ("https://Hooks.Example.NET:8443/in?x=1", "hooks.example.net", 8443, False),
    ("http://127.0.0.1:9000/", "127.0.0.1", 9000, True),
    ("http://[::1]/", "::1", 80, True),
    ("http://пример.рф/hook", "xn--e1afmkfd.xn--p1ai", 80, False),
])
def test_a_url_is_parsed_to_its_target(url: str, host: str, port: int, literal: bool) -> None:
    target = parse_target(url)
    assert (target.host, target.port, target.address is not None) == (host, port, literal)


@pytest.mark.parametrize(("url", "reason"), [
    ("ftp://hooks.example.net/", "scheme"),
    ("file:///etc/passwd", "scheme"),
    ("gopher://hooks.example.net/", "scheme"),
    ("hooks.example.net/in", "bad_url"),
    ("http:///in", "bad_url"),
    ("http://hooks.example.net:0/", "bad_url"),
    ("http://hooks.example.net:99999/", "bad_url"),
    ("http://hooks.example.net/a b", "bad_url"),
    ("http://hooks.example.net/\n", "bad_url"),
    ("http://x/" + "a" * 2048, "bad_url"),
])
def test_a_bad_url_is_refused(url: str, reason: str) -> None:
    with pytest.raises(TargetRefused) as caught:
        parse_target(url)
    assert caught.value.reason == reason
    assert url not in str(caught.value)  # the message is ours, never the URL


@pytest.mark.parametrize(("address", "closed", "opened"), [
    ("93.184.216.34", None, None),
    ("2606:2800:220:1:248:1893:25c8:1946", None, None),
    ("127.0.0.1", "private", None),
    ("127.8.9.10", "private", None),
    ("::1", "private", None),
    ("10.0.0.1", "private", None),
    ("172.16.0.1", "private", None),
    ("192.168.1.1", "private", None),
    ("100.64.0.1", "private", None),  # carrier-grade NAT
    ("169.254.1.1", "private", None),  # link-local
    ("fe80::1", "private", None),
    ("fc00::1", "private", None),
    ("fec0::1", "private", None),  # site-local: not in is_private, as internal all the same
    ("::ffff:10.0.0.1", "private", None),  # IPv4-mapped
    ("2002:a00:1::", "private", None),  # 6to4 of 10.0.0.1
    ("64:ff9b::a00:1", "private", None),  # NAT64 of 10.0.0.1
    ("64:ff9b::5db8:d822", None, None),  # NAT64 of a public address
    ("169.254.169.254", "metadata", "metadata"),
    ("fd00:ec2::254", "metadata", "metadata"),
    ("100.100.100.200", "metadata", "metadata"),
    ("168.63.129.16", "metadata", "metadata"),  # Azure's WireServer: a public address
    ("::ffff:169.254.169.254", "metadata", "metadata"),
    ("224.0.0.1", "multicast", "multicast"),
    ("ff02::1", "multicast", "multicast"),
    ("0.0.0.0", "unspecified", "unspecified"),
    ("::", "unspecified", "unspecified"),
    ("240.0.0.1", "reserved", "reserved"),
    ("255.255.255.255", "reserved", "reserved"),
])
def test_addresses_a_delivery_may_reach(address: str, closed: str | None,
                                        opened: str | None) -> None:
    ip = ipaddress.ip_address(address)
    assert address_refusal(ip, allow_private=False) == closed
    assert address_refusal(ip, allow_private=True) == opened


def test_the_backoff_doubles_from_one_second_to_ten_minutes() -> None:
    waits = [backoff_seconds(n, base=1.0, cap=600.0) for n in range(1, 13)]
    assert waits == [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 600, 600]
    assert backoff_seconds(10_000, base=1.0, cap=600.0) == 600


@pytest.mark.parametrize(("header", "seconds"), [
    (None, None), ("120", 120.0), (" 7 ", 7.0), ("soon", None), ("-5", None),
    ("Thu, 01 Jan 2026 12:05:00 GMT", 300.0),
    ("Thu, 01 Jan 2026 11:00:00 GMT", 0.0),  # already past
])
def test_retry_after_in_seconds_or_as_a_date(header: str | None,
                                             seconds: float | None) -> None:
    assert asked_seconds(header, NOW) == seconds


RULE = RetryRule(base_seconds=1.0, cap_seconds=600.0, window=timedelta(hours=24))


def _verdict(status: int | None, *, failures: int = 1, retry_after: float | None = None,
             age: timedelta = timedelta(0)) -> tuple[str, float]:
    """The webhooks consumer's reading of an answer: `answered`, then the one rule."""
    outcome = answered(status)
    if outcome != "retry":
        return outcome, 0
    delay = RULE.next_try(failures=failures, asked=retry_after, created_at=NOW - age, now=NOW)
    return ("failed", 0) if delay is None else ("retry", delay)


def test_what_an_answer_means() -> None:
    assert _verdict(200) == ("delivered", 0)
    assert _verdict(204, failures=9) == ("delivered", 0)
    assert _verdict(410) == ("gone", 0)
    assert _verdict(500) == ("retry", 1)
    assert _verdict(None, failures=3) == ("retry", 4)  # no answer at all
    assert _verdict(302, failures=2) == ("retry", 2)  # redirects are not followed
    assert _verdict(404) == ("retry", 1)
    assert _verdict(503, retry_after=90) == ("retry", 90)  # Retry-After wins when longer
    assert _verdict(429, failures=5, retry_after=3) == ("retry", 16)
    assert _verdict(500, failures=20, age=timedelta(hours=23, minutes=50)) == ("retry", 600)
    assert _verdict(500, failures=20, age=timedelta(hours=23, minutes=51)) == ("failed", 0)
    assert _verdict(503, retry_after=2 * 86400) == ("failed", 0)  # past the window


@pytest.mark.parametrize(("url", "seen"), [
    ("https://hooks.example.net/in?token=abc", "https://hooks.example.net/\u2026"),
    ("https://user:pw@hooks.example.net:8443/", "https://hooks.example.net:8443/\u2026"),
    ("https://hooks.slack.com/services/T0/B0/s3cret", "https://hooks.slack.com/\u2026"),
    ("http://hooks.example.net", "http://hooks.example.net"),
    ("http://[::1]:8080/x", "http://[::1]:8080/\u2026"),
])
def test_a_read_token_sees_only_where_a_url_leads(url: str, seen: str) -> None:
    assert masked_url(url) == seen
