"""Whisper's own loop guards in the local recognizer's options (the guard of every
decoded clip: test_guard.py)."""

from __future__ import annotations

from transcriber.providers.whisper_decoding import decoding_options
from transcriber.providers.whisper_fallback import FALLBACK
from transcriber.settings import RecognizerSettings


def test_decoding_uses_whispers_own_loop_guards() -> None:
    options = decoding_options(RecognizerSettings())
    assert options["condition_on_previous_text"] is False
    assert options["compression_ratio_threshold"] == 2.4
    assert options["vad_filter"] is True
    # Never sampled: a looping window is decoded again by the deterministic fallback.
    assert options["temperature"] == [0.0]
    assert len(FALLBACK) > 1
    assert "batch_size" not in decoding_options(RecognizerSettings(batched=False))
    assert decoding_options(RecognizerSettings(batched=True, batch_size=4))["batch_size"] == 4
