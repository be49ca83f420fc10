"""The benchmark's own DER: collar, best mapping, missed and false alarm."""

from __future__ import annotations

import pytest

from tests.helpers.der import Segment, diarization_error


def _s(start: int, end: int, who: str) -> Segment:
    return Segment(start_ms=start, end_ms=end, speaker=who)


REFERENCE = [_s(0, 10_000, "A"), _s(10_000, 20_000, "B")]


def test_a_perfect_answer_under_other_names_scores_zero() -> None:
    score = diarization_error(REFERENCE, [_s(0, 10_000, "7"), _s(10_000, 20_000, "3")])
    assert score.der == 0.0
    assert score.found_speakers == 2


def test_errors_inside_the_collar_are_not_counted_but_outside_are() -> None:
    late = [_s(0, 10_200, "x"), _s(10_200, 20_000, "y")]
    assert diarization_error(REFERENCE, late).der == 0.0
    later = [_s(0, 11_000, "x"), _s(11_000, 20_000, "y")]
    score = diarization_error(REFERENCE, later)
    # 750 ms of confusion outside the collar, over 20 s less three 0.5 s collars.
    assert score.confusion == pytest.approx(750 / (20_000 - 250 - 500 - 250), abs=1e-3)


def test_one_speaker_for_everything_is_half_wrong() -> None:
    score = diarization_error(REFERENCE, [_s(0, 20_000, "only")])
    assert score.der == pytest.approx(0.5, abs=0.01)
    assert score.found_speakers == 1


def test_missed_speech_and_false_alarm_count() -> None:
    score = diarization_error(
        [_s(0, 10_000, "A")], [_s(0, 5_000, "x"), _s(12_000, 14_000, "x")], collar_ms=0
    )
    assert score.missed == pytest.approx(0.5)
    assert score.false_alarm == pytest.approx(0.2)
    assert score.der == pytest.approx(0.7)
