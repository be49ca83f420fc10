"""Body slots, the body pace and the content-coding check, as pure bookkeeping."""

from __future__ import annotations

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from transcriber.web.errors import ApiError
from transcriber.web.uploadguard import BodySlots, Pace, PaceWatch, refuse_coded

PACE = Pace(idle_seconds=60, min_bytes_per_second=8192, window_seconds=120)


async def test_per_user_cap_is_429_and_total_cap_503_with_retry_after() -> None:
    slots = BodySlots(total=3, per_user=2)
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


async def test_without_a_cap_per_user_one_user_meets_the_total_as_503() -> None:
    slots = BodySlots(total=2, what="request bodies")
    async with slots.hold("local"), slots.hold("local"):
        with pytest.raises(ApiError) as total:
            async with slots.hold("local"):
                pass
    assert total.value.status == 503
    assert total.value.message == "too many request bodies are arriving; try again shortly"


@pytest.mark.parametrize("headers", [
    {}, {"Content-Encoding": "identity"}, {"Content-Encoding": "IDENTITY"},
    {"Content-Encoding": ""}, {"Content-Transfer-Encoding": "binary"},
    {"Content-Transfer-Encoding": "8bit"},
])
def test_a_body_sent_as_it_is_passes(headers: dict[str, str]) -> None:
    refuse_coded(CIMultiDictProxy(CIMultiDict(headers)))


@pytest.mark.parametrize("headers", [
    [("Content-Encoding", "gzip")], [("Content-Encoding", "x-gzip")],
    [("Content-Encoding", "identity, gzip")], [("Content-Encoding", "br")],
    [("Content-Encoding", "identity"), ("Content-Encoding", "deflate")],
    [("Content-Transfer-Encoding", "base64")],
    [("Content-Transfer-Encoding", "quoted-printable")],
])
def test_a_coded_body_is_415_naming_identity(headers: list[tuple[str, str]]) -> None:
    with pytest.raises(ApiError) as refused:
        refuse_coded(CIMultiDictProxy(CIMultiDict(headers)))
    assert refused.value.status == 415
    assert refused.value.code == "unsupported_encoding"
    assert refused.value.headers == {"Accept-Encoding": "identity"}
    assert refused.value.close


async def test_a_failed_upload_frees_its_slot() -> None:
    slots = BodySlots(total=1, per_user=1)
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
