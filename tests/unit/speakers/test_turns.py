"""Speech windows for the embedder and turns from labelled windows."""

from __future__ import annotations

from transcriber.ports import Span, Turn
from transcriber.providers.speakers.embedder import subwindow_spans
from transcriber.providers.speakers.turns import WindowPlan, plan_windows, turns_from_windows


def test_windows_are_whole_on_each_regions_grid_and_skip_crumbs() -> None:
    plan = WindowPlan(window_ms=1600, step_ms=800, min_ms=400)
    regions = [
        Span(start_ms=0, end_ms=4300),
        Span(start_ms=5000, end_ms=6000),
        Span(start_ms=7000, end_ms=7300),
    ]
    windows = plan_windows(regions, plan)
    assert windows == [
        Span(start_ms=0, end_ms=1600),
        Span(start_ms=800, end_ms=2400),
        Span(start_ms=1600, end_ms=3200),
        Span(start_ms=2400, end_ms=4000),
        Span(start_ms=5000, end_ms=6000),
    ]


def test_a_change_of_speaker_falls_between_the_window_centres() -> None:
    regions = [Span(start_ms=0, end_ms=4000), Span(start_ms=5000, end_ms=6000)]
    windows = plan_windows(regions, WindowPlan())
    turns = turns_from_windows(regions, windows, [0, 0, 1, 1, 1])
    # Centres 800, 1600, 2400, 3200 | 5500: the change lands at (1600 + 2400) / 2.
    assert turns == [
        Turn(start_ms=0, end_ms=2000, speaker=0),
        Turn(start_ms=2000, end_ms=4000, speaker=1),
        Turn(start_ms=5000, end_ms=6000, speaker=1),
    ]


def test_neighbouring_regions_of_one_speaker_stay_apart_across_silence() -> None:
    regions = [
        Span(start_ms=0, end_ms=1000),
        Span(start_ms=1000, end_ms=2000),
        Span(start_ms=3000, end_ms=3800),
    ]
    windows = plan_windows(regions, WindowPlan())
    assert turns_from_windows(regions, windows, [2, 2, 2]) == [
        Turn(start_ms=0, end_ms=2000, speaker=2),
        Turn(start_ms=3000, end_ms=3800, speaker=2),
    ]


def test_embedder_inputs_tile_each_window_and_reach_its_end() -> None:
    assert subwindow_spans(Span(start_ms=0, end_ms=1600), 500) == [(0, 80), (80, 160)]
    assert subwindow_spans(Span(start_ms=800, end_ms=2400), 500) == [(80, 160), (160, 240)]
    assert subwindow_spans(Span(start_ms=0, end_ms=1500), 500) == [(0, 80), (70, 150)]
    assert subwindow_spans(Span(start_ms=0, end_ms=500), 500) == [(0, 50)]
    # The features end before the window does (the last frames need a full FFT).
    assert subwindow_spans(Span(start_ms=4000, end_ms=5200), 480) == [(400, 480)]


def test_a_regions_tail_goes_to_its_last_window() -> None:
    # 0-4300: whole windows up to 2400-4000; the last 300 ms has no window (and costs no
    # embedder input: every input of these windows is on the 80-frame grid) ...
    regions = [Span(start_ms=0, end_ms=4300)]
    windows = plan_windows(regions, WindowPlan())
    assert windows[-1] == Span(start_ms=2400, end_ms=4000)
    assert {span for w in windows for span in subwindow_spans(w, 10_000)} == {
        (0, 80), (80, 160), (160, 240), (240, 320), (320, 400)}
    # ... and the turns still cover the region to its end.
    turns = turns_from_windows(regions, windows, [0, 0, 0, 1])
    assert turns[-1] == Turn(start_ms=2800, end_ms=4300, speaker=1)
