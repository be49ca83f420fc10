"""The batched recognizer's clip planning and its coverage check (pure)."""

from __future__ import annotations

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from transcriber.providers.clips import (
    CLIP_MAX_GAP_SECONDS,
    CLIP_MAX_SECONDS,
    Clip,
    Decoded,
    Loudness,
    coverage,
    plan_clips,
    seconds_of,
    subtract,
    unclipped,
    widened,
)


def _spans(clips: list[Clip]) -> list[tuple[float, float]]:
    return [(c.start, c.end) for c in clips]


def test_clips_keep_the_pauses_and_stay_inside_whispers_window() -> None:
    regions = [(0.3, 6.0), (6.8, 9.5), (10.7, 17.0), (17.8, 20.5), (21.7, 28.0), (28.8, 31.0)]
    clips = plan_clips(regions, duration=40.0, pad=0.0)
    assert _spans(clips) == [(0.3, 28.0), (28.8, 31.0)]


def test_a_long_gap_starts_a_new_clip_so_noise_between_is_not_decoded() -> None:
    regions = [(0.0, 4.0), (4.0 + CLIP_MAX_GAP_SECONDS + 0.1, 9.0), (9.5, 12.0)]
    assert _spans(plan_clips(regions, duration=20.0, pad=0.0)) == [(0.0, 4.0), (6.1, 12.0)]
    assert plan_clips([], duration=3.0) == []


def test_a_stretch_longer_than_the_window_is_cut_into_clips_that_meet() -> None:
    # 45 s of speech with no pause: nothing of it is dropped (it was cut to 30 s).
    clips = plan_clips([(5.0, 50.0)], duration=60.0, pad=0.0)
    assert clips[0].start == 5.0
    assert clips[-1].end == 50.0
    assert all(a.end == b.start for a, b in itertools.pairwise(clips))
    assert all(c.seconds <= CLIP_MAX_SECONDS for c in clips)


def test_a_long_stretch_is_cut_in_the_pause_the_vad_left() -> None:
    # Regions the VAD split at 0.2-s pauses, joined again by the padding.
    regions = [(0.0, 12.0), (12.2, 24.0), (24.2, 40.0)]
    clips = plan_clips(regions, duration=40.0)
    assert len(clips) == 2
    assert 24.0 - 0.15 <= clips[0].end <= 24.2 + 0.15


def test_without_a_pause_a_long_stretch_is_cut_at_its_quietest_point() -> None:
    rate = 16_000
    t = np.arange(50 * rate) / rate
    loud = np.sin(2 * np.pi * 200 * t).astype(np.float32)
    loud[int(23.4 * rate):int(23.5 * rate)] *= 0.01  # the one quiet moment
    clips = plan_clips([(0.0, 50.0)], duration=50.0, quietest=Loudness(loud).quietest)
    assert abs(clips[0].end - 23.45) < 0.05


def test_regions_are_widened_for_the_clips_and_join_where_they_meet() -> None:
    regions = [(0.1, 2.0), (2.5, 4.0), (5.0, 7.9)]
    assert widened(regions, duration=8.0) == [(0.0, 4.3), (4.7, 8.0)]
    assert widened([], duration=3.0) == []
    assert widened([(1.0, 2.0)], duration=10.0, pad=0.0) == [(1.0, 2.0)]


@st.composite
def _regions(draw: st.DrawFn) -> tuple[list[tuple[float, float]], float]:
    """Ordered, disjoint regions inside a duration (what a VAD gives), any lengths."""
    cuts = draw(st.lists(st.floats(min_value=0.0, max_value=4 * 3600.0, allow_nan=False),
                         min_size=0, max_size=60, unique=True))
    cuts.sort()
    regions = [(a, b) for a, b in zip(cuts[::2], cuts[1::2], strict=False) if b > a]
    duration = draw(st.floats(min_value=(cuts[-1] if cuts else 0.0),
                              max_value=(cuts[-1] if cuts else 0.0) + 100.0))
    return regions, duration


@given(_regions(), st.sampled_from([None, "quiet"]))
@settings(max_examples=300, deadline=None)
def test_any_regions_give_ordered_clips_of_a_window_at_most_holding_all_speech(
    found: tuple[list[tuple[float, float]], float], quiet: str | None,
) -> None:
    regions, duration = found
    # A quietest-point finder anywhere in its range (here: a third of the way).
    quietest = (lambda lo, hi: lo + (hi - lo) / 3) if quiet else None
    clips = plan_clips(regions, duration=duration, quietest=quietest)
    assert all(c.seconds <= CLIP_MAX_SECONDS + 1e-9 for c in clips)
    assert all(c.seconds > 0 for c in clips)
    assert all(a.end <= b.start for a, b in itertools.pairwise(clips))
    assert seconds_of(unclipped(regions, clips)) <= 1e-6


def test_subtract_leaves_what_no_hole_covers() -> None:
    assert subtract([(0.0, 10.0)], [(2.0, 3.0), (5.0, 12.0)]) == [(0.0, 2.0), (3.0, 5.0)]
    assert subtract([(0.0, 1.0)], []) == [(0.0, 1.0)]
    assert subtract([(0.0, 1.0)], [(0.0, 1.0)]) == []


def _words(start: float, end: float, every: float = 0.4) -> tuple[tuple[float, float], ...]:
    return tuple((t, t + every * 0.8) for t in np.arange(start, end, every))


def test_words_that_stop_seconds_before_the_speech_leave_the_rest_uncovered() -> None:
    clips = [Clip(start=0.0, end=30.0)]
    regions = [(0.0, 30.0)]
    found = coverage(regions, clips, [Decoded(words=_words(0.0, 20.0), has_text=True)])
    assert found[0].violated
    assert 8.0 < found[0].uncovered_seconds < 10.0  # 20 s + the words' reach .. 30 s


def test_words_over_all_the_speech_cover_it() -> None:
    clips = [Clip(start=0.0, end=30.0)]
    found = coverage([(0.5, 29.5)], clips, [Decoded(words=_words(0.6, 29.4), has_text=True)])
    assert not found[0].violated


def test_an_empty_clip_between_clips_with_words_is_a_violation() -> None:
    clips = [Clip(start=0.0, end=25.0), Clip(start=25.0, end=50.0), Clip(start=50.0, end=75.0)]
    regions = [(0.0, 75.0)]
    decoded = [Decoded(words=_words(0.0, 25.0), has_text=True),
               Decoded(words=(), has_text=False),
               Decoded(words=_words(50.0, 75.0), has_text=True)]
    found = coverage(regions, clips, decoded)
    assert [f.empty for f in found] == [False, True, False]
    assert found[1].uncovered_seconds == 25.0


def test_empty_clips_of_noise_among_empty_clips_are_not() -> None:
    # Music the VAD took for speech, that Whisper calls no speech: nothing to hear.
    clips = [Clip(start=0.0, end=25.0), Clip(start=25.0, end=50.0)]
    decoded = [Decoded(words=(), has_text=False, no_speech=0.9)] * 2
    assert not any(f.violated for f in coverage([(0.0, 50.0)], clips, decoded))


def test_an_empty_clip_whisper_thought_was_speech_is_a_violation() -> None:
    clips = [Clip(start=0.0, end=20.0)]
    decoded = [Decoded(words=(), has_text=False, no_speech=0.1)]
    assert coverage([(0.0, 20.0)], clips, decoded)[0].empty
