from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta, timezone

import pytest

from transcriber.core.clock import format_time, parse_time, stamp
from transcriber.testing.clock import FakeClock


def test_stored_time_format_is_fixed_width_utc_seconds() -> None:
    moment = datetime(2026, 3, 4, 5, 6, 7, 890_000, tzinfo=timezone(timedelta(hours=3)))
    assert format_time(moment) == "2026-03-04T02:06:07Z"


def test_format_round_trips_at_second_precision() -> None:
    moment = datetime(2026, 12, 31, 23, 59, 59, tzinfo=UTC)
    assert parse_time(format_time(moment)) == moment


def test_text_order_is_time_order() -> None:
    base = datetime(2026, 1, 1, tzinfo=UTC)
    moments = [base + timedelta(seconds=s) for s in (0, 9, 10, 59, 60, 3599, 86_400 * 40)]
    texts = [format_time(m) for m in moments]
    assert texts == sorted(texts)


async def test_fake_clock_wakes_sleepers_only_when_advanced() -> None:
    clock = FakeClock()
    woke: list[float] = []

    async def sleeper(seconds: float) -> None:
        await clock.sleep(seconds)
        woke.append(seconds)

    tasks = [asyncio.create_task(sleeper(s)) for s in (5, 1, 3)]
    await asyncio.sleep(0)
    assert clock.sleepers == 3
    clock.advance(2)
    await asyncio.sleep(0)
    assert woke == [1]
    clock.advance(3)
    await asyncio.gather(*tasks)
    assert woke == [1, 3, 5]
    assert stamp(clock) == "2026-01-01T00:00:05Z"


@pytest.mark.parametrize("text", ["2026-02-28T23:59:59Z", "1999-01-01T00:00:00Z"])
def test_parse_reads_the_stored_format_as_utc(text: str) -> None:
    parsed = parse_time(text)
    assert parsed == datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    assert parsed.utcoffset() == timedelta(0)
    assert format_time(parsed) == text


@pytest.mark.parametrize("text", ["2026-01-01 00:00:00Z", "2026-01-01T00:00:00+00:00",
                                  "2026-01-01", "2026-13-01T00:00:00Z", ""])
def test_parse_refuses_anything_but_the_stored_format(text: str) -> None:
    with pytest.raises(ValueError, match=r"does not match format|month must be"):
        parse_time(text)
