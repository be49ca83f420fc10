"""The repetition guard of the local recognizer (pure)."""

from __future__ import annotations

from typing import Any

from transcriber.providers.whisper import (
    CLIP_MAX_GAP_SECONDS,
    CLIP_MAX_SECONDS,
    decoding_options,
    drop_repeats,
    speech_clips,
    widened,
)
from transcriber.settings import RecognizerSettings


def _segments(*texts: str) -> list[dict[str, Any]]:
    return [{"start_ms": i * 1000, "end_ms": i * 1000 + 900, "text": t}
            for i, t in enumerate(texts)]


def test_a_loop_keeps_the_utterance_and_two_repeats() -> None:
    looped = _segments("Hello there.", *["Thank you for watching."] * 40, "Goodbye.")
    kept = [s["text"] for s in drop_repeats(looped)]
    assert kept == ["Hello there.", *["Thank you for watching."] * 3, "Goodbye."]


def test_repeats_are_compared_by_their_words() -> None:
    looped = _segments("Thank you.", "thank you", "Thank you!", "THANK YOU...", "Thank you")
    assert len(drop_repeats(looped)) == 3


def test_speech_that_comes_back_later_is_kept() -> None:
    talk = _segments("Yes.", "Yes.", "No.", "Yes.", "Yes.", "No.", "Yes.")
    assert drop_repeats(talk) == talk


def test_empty_utterances_do_not_make_a_run() -> None:
    talk = _segments("", "", "", "", "")
    assert drop_repeats(talk) == talk


def test_decoding_uses_whispers_own_loop_guards() -> None:
    options = decoding_options(RecognizerSettings())
    assert options["condition_on_previous_text"] is False
    assert options["compression_ratio_threshold"] == 2.4
    assert options["vad_filter"] is True
    assert len(options["temperature"]) > 1  # a looping window is decoded again, hotter
    assert "batch_size" not in decoding_options(RecognizerSettings(batched=False))
    assert decoding_options(RecognizerSettings(batched=True, batch_size=4))["batch_size"] == 4


def test_clips_keep_the_pauses_and_stay_inside_whispers_window() -> None:
    regions = [(0.0, 6.0), (6.8, 9.5), (10.7, 17.0), (17.8, 20.5), (21.7, 28.0), (28.8, 31.0)]
    clips = speech_clips(regions)
    assert clips == [{"start": 0.0, "end": 28.0}, {"start": 28.8, "end": 31.0}]
    assert all(c["end"] - c["start"] <= CLIP_MAX_SECONDS for c in clips)


def test_a_long_gap_starts_a_new_clip_so_noise_between_is_not_decoded() -> None:
    clips = speech_clips([(0.0, 4.0), (4.0 + CLIP_MAX_GAP_SECONDS + 0.1, 9.0), (9.5, 12.0)])
    assert clips == [{"start": 0.0, "end": 4.0}, {"start": 6.1, "end": 12.0}]


def test_a_region_longer_than_the_window_is_held_to_it() -> None:
    assert speech_clips([(5.0, 50.0)]) == [{"start": 5.0, "end": 35.0}]
    assert speech_clips([]) == []


def test_regions_are_widened_for_the_clips_and_join_where_they_meet() -> None:
    # The separation's finer regions (0.3-s pauses, 0.1-s padding) widened by 0.3 s:
    # the clip edges the 0.4-s padding gave; pauses under 0.6 s close up.
    regions = [(0.1, 2.0), (2.5, 4.0), (5.0, 7.9)]
    assert widened(regions, duration=8.0) == [(0.0, 4.3), (4.7, 8.0)]
    assert widened([], duration=3.0) == []
    assert widened([(1.0, 2.0)], duration=10.0, pad=0.0) == [(1.0, 2.0)]
