"""Upload slots and the body pace, as pure bookkeeping."""

from __future__ import annotations

import pytest

from transcriber.web.errors import ApiError
from transcriber.web.uploadguard import Pace, PaceWatch, UploadSlots

PACE = Pace(idle_seconds=60, min_bytes_per_second=8192, window_seconds=120)


async def test_per_user_cap_is_429_and_total_cap_503_with_retry_after() -> None:
    slots = UploadSlots(total=3, per_user=2)
    async with slots.hold("alice"), slots.hold("alice"):
        with pytest.raises(ApiError) as per_user:
            async with slots.hold("alice"):
                pass
        assert per_user.value.status == 429
        assert per_user.value.headers["Retry-After"] == "30"
        async with slots.hold("bob"):
            with pytest.raises(ApiError) as total:
                async with slots.hold("carol"):
                    pass
            assert total.value.status == 503
            assert "Retry-After" in total.value.headers
        assert slots.receiving == 2
    assert slots.receiving == 0
    async with slots.hold("alice"):  # freed slots are reusable
        assert slots.receiving == 1


async def test_a_failed_upload_frees_its_slot() -> None:
    slots = UploadSlots(total=1, per_user=1)
    with pytest.raises(RuntimeError):
        async with slots.hold("alice"):
            raise RuntimeError
    assert slots.receiving == 0


def test_no_byte_for_the_idle_time_is_cut() -> None:
    watch = PaceWatch(PACE, now=0)
    assert watch.verdict(30, 100_000) is None
    assert watch.verdict(89, 100_000) is None
    assert watch.verdict(90, 100_000) == "idle"


def test_a_crawl_below_the_floor_is_cut_after_the_first_window() -> None:
    watch = PaceWatch(PACE, now=0)
    received = 0
    verdicts = []
    for second in range(1, 400):
        received += 4000  # under half the floor, but never idle
        verdicts.append((second, watch.verdict(second, received)))
    cut = next(second for second, verdict in verdicts if verdict is not None)
    assert cut == 120
    assert dict(verdicts)[cut] == "slow"


def test_a_slow_link_uploading_six_hours_of_audio_is_never_cut() -> None:
    # 6 h of 128 kbit/s MP3 (345.6 MB) over a 1 Mbit/s uplink that halves
    # every other minute and pauses 30 s every 10 minutes.
    watch = PaceWatch(PACE, now=0)
    size = 21600 * 16000
    received, second = 0, 0
    while received < size:
        second += 1
        if second % 600 < 30:
            rate = 0
        elif (second // 60) % 2:
            rate = 62_500
        else:
            rate = 125_000
        received = min(size, received + rate)
        assert watch.verdict(second, received) is None, second
    assert second < 6 * 3600


def test_a_zero_floor_only_cuts_idle_bodies() -> None:
    watch = PaceWatch(Pace(idle_seconds=5, min_bytes_per_second=0, window_seconds=10), now=0)
    for second in range(1, 100):
        assert watch.verdict(second, second) is None
