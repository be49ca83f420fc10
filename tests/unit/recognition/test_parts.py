"""Cutting long records into overlapping parts and stitching them back (no duplicates)."""

from __future__ import annotations

import itertools

from hypothesis import given
from hypothesis import strategies as st

from transcriber.pipeline.parts import (
    PartPlan,
    join,
    plan_at_pauses,
    plan_parts,
    stitch,
    uncovered_by_parts,
)
from transcriber.ports import Utterance
from transcriber.providers.ffmpeg import parse_silences

HOUR = 3_600_000


def test_short_record_is_one_part() -> None:
    assert plan_parts(10_000, max_part_ms=4 * HOUR, overlap_ms=5000) == [
        PartPlan(index=0, offset_ms=0, length_ms=10_000)]
    assert plan_parts(10 * HOUR, max_part_ms=None, overlap_ms=5000)[0].length_ms == 10 * HOUR


def test_six_hour_record_is_two_overlapping_parts_under_the_limit() -> None:
    parts = plan_parts(6 * HOUR, max_part_ms=4 * HOUR, overlap_ms=5000)
    assert [p.offset_ms for p in parts] == [0, 4 * HOUR - 5000]
    assert all(p.length_ms <= 4 * HOUR for p in parts)
    assert parts[-1].offset_ms + parts[-1].length_ms == 6 * HOUR


@given(duration=st.integers(min_value=1, max_value=30 * HOUR),
       max_part=st.integers(min_value=60_000, max_value=5 * HOUR),
       overlap=st.integers(min_value=0, max_value=20_000))
def test_parts_cover_everything_within_the_limit(duration: int, max_part: int,
                                                 overlap: int) -> None:
    parts = plan_parts(duration, max_part_ms=max_part, overlap_ms=overlap)
    assert parts[0].offset_ms == 0
    assert parts[-1].offset_ms + parts[-1].length_ms == duration
    for current, following in itertools.pairwise(parts):
        assert current.length_ms <= max_part
        assert following.offset_ms <= current.offset_ms + current.length_ms  # no gap


def test_stitch_drops_the_overlap_duplicate_and_shifts_times() -> None:
    first = PartPlan(index=0, offset_ms=0, length_ms=60_000)
    second = PartPlan(index=1, offset_ms=50_000, length_ms=30_000)
    # "shared" is heard by both parts: at 52-54 s absolute.
    part0 = [Utterance(start_ms=1000, end_ms=2000, channel=0, text="start"),
             Utterance(start_ms=52_000, end_ms=54_000, channel=0, text="shared"),
             Utterance(start_ms=57_000, end_ms=59_500, channel=0, text="late")]
    part1 = [Utterance(start_ms=2000, end_ms=4000, channel=0, text="shared"),
             Utterance(start_ms=7000, end_ms=9500, channel=0, text="late"),
             Utterance(start_ms=20_000, end_ms=21_000, channel=0, text="end")]
    result = stitch([(second, part1), (first, part0)])
    assert [u.text for u in result] == ["start", "shared", "late", "end"]
    assert result[-1].start_ms == 70_000


MINUTE = 60_000


def test_local_parts_are_cut_in_the_pause_nearest_to_each_part_length() -> None:
    pauses = [(9 * MINUTE, 9 * MINUTE + 400),          # near the first target, short
              (10 * MINUTE + 20_000, 10 * MINUTE + 21_000),  # near it, longer: taken
              (15 * MINUTE, 15 * MINUTE + 2000),        # too far from any target
              (20 * MINUTE + 40_000, 20 * MINUTE + 40_600)]
    parts = plan_at_pauses(25 * MINUTE, pauses, part_ms=10 * MINUTE, overlap_ms=4000)
    cuts = [10 * MINUTE + 20_500, 20 * MINUTE + 40_300]
    assert [p.offset_ms for p in parts] == [0, cuts[0] - 2000, cuts[1] - 2000]
    # The stitch cuts in the middle of each overlap: exactly in the pause.
    assert [p.offset_ms + p.length_ms - 2000 for p in parts[:-1]] == cuts
    assert parts[-1].offset_ms + parts[-1].length_ms == 25 * MINUTE


def test_without_pauses_the_cut_falls_on_the_part_length() -> None:
    parts = plan_at_pauses(25 * MINUTE, [], part_ms=10 * MINUTE, overlap_ms=4000)
    assert [p.offset_ms for p in parts] == [0, 10 * MINUTE - 2000, 20 * MINUTE - 2000]
    assert plan_at_pauses(9 * MINUTE, [], part_ms=10 * MINUTE, overlap_ms=4000) == [
        PartPlan(index=0, offset_ms=0, length_ms=9 * MINUTE)]


def test_silencedetect_log_is_read() -> None:
    log = ("[silencedetect @ 0x1] silence_start: 1.5\n"
           "[silencedetect @ 0x1] silence_end: 2.25 | silence_duration: 0.75\n"
           "[silencedetect @ 0x1] silence_start: -0.01\n"
           "[silencedetect @ 0x1] silence_end: 0.5 | silence_duration: 0.51\n"
           "[silencedetect @ 0x1] silence_start: 9.0\n")
    assert parse_silences(log) == [(1500, 2250), (0, 500)]


def test_parts_cut_in_pauses_are_joined_keeping_every_utterance() -> None:
    first = PartPlan(index=0, offset_ms=0, length_ms=30_000)
    second = PartPlan(index=1, offset_ms=30_000, length_ms=20_000)
    # Whisper's times drift: the last words of part 0 are said to end past its end.
    parts = [(second, [Utterance(start_ms=0, end_ms=1500, channel=0, text="c")]),
             (first, [Utterance(start_ms=1000, end_ms=2000, channel=0, text="a"),
                      Utterance(start_ms=29_000, end_ms=31_500, channel=0, text="b")])]
    joined = join(parts)
    assert [u.text for u in joined] == ["a", "b", "c"]
    assert [(u.start_ms, u.end_ms) for u in joined] == [
        (1000, 2000), (29_000, 30_000), (30_000, 31_500)]


def test_uncovered_by_parts_finds_what_no_part_holds() -> None:
    parts = [PartPlan(index=0, offset_ms=0, length_ms=10_000),
             PartPlan(index=1, offset_ms=12_000, length_ms=5_000)]
    assert uncovered_by_parts(parts, 20_000) == [(10_000, 12_000), (17_000, 20_000)]
    assert uncovered_by_parts(plan_parts(20_000, max_part_ms=8_000, overlap_ms=500),
                              20_000) == []
    assert uncovered_by_parts([], 5_000) == [(0, 5_000)]


@given(duration=st.integers(min_value=1, max_value=30 * HOUR),
       part=st.integers(min_value=60_000, max_value=5 * HOUR),
       pauses=st.lists(st.tuples(st.integers(0, 30 * HOUR), st.integers(1, 5_000)),
                       max_size=40))
def test_parts_cut_at_pauses_leave_nothing_out(duration: int, part: int,
                                               pauses: list[tuple[int, int]]) -> None:
    silences = [(start, start + length) for start, length in pauses]
    assert uncovered_by_parts(plan_at_pauses(duration, silences, part_ms=part, overlap_ms=0),
                              duration) == []
