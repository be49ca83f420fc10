"""The repetition guard of the local recognizer (pure)."""

from __future__ import annotations

from typing import Any

from transcriber.providers.whisper_decoding import decoding_options, drop_repeats
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
