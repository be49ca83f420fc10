"""Text while recording: the windows' pure rules (`domain.live_text`)."""

from __future__ import annotations

import numpy as np

from transcriber.domain.live_text import (
    BYTES_PER_MS,
    SEARCH_MS,
    WINDOW_MS,
    cut_point,
    joined,
    silent,
    window_bytes,
)


def _tone(ms: int, amplitude: float = 8000.0) -> np.ndarray:
    t = np.arange(ms * 16) / 16_000
    return (amplitude * np.sin(2 * np.pi * 220 * t)).astype("<i2")


def test_no_window_until_a_whole_one_arrived() -> None:
    assert cut_point(b"") is None
    assert cut_point(_tone(WINDOW_MS - 1).tobytes()) is None


def test_a_window_is_cut_at_the_pause_in_its_last_seconds() -> None:
    # Speech, a 200 ms pause 1.5 s before the window's end, speech again.
    pause_at = WINDOW_MS - 1500
    audio = np.concatenate([_tone(pause_at), np.zeros(200 * 16, "<i2"),
                            _tone(WINDOW_MS + 2000 - pause_at - 200)])
    cut = cut_point(audio.tobytes())
    assert cut is not None
    assert cut % 2 == 0
    assert pause_at * BYTES_PER_MS <= cut <= (pause_at + 200) * BYTES_PER_MS


def test_a_window_without_a_pause_is_cut_within_its_last_seconds() -> None:
    cut = cut_point(_tone(WINDOW_MS + 5000).tobytes())
    assert cut is not None
    assert window_bytes() - SEARCH_MS * BYTES_PER_MS <= cut <= window_bytes()


def test_silence_is_not_recognized_and_speech_is() -> None:
    assert silent(np.zeros(16_000, "<i2").tobytes())
    assert silent(_tone(1000, amplitude=20).tobytes())  # hiss far below speech
    assert not silent(_tone(1000).tobytes())
    assert silent(b"")


def test_the_windows_texts_read_as_one_line() -> None:
    assert joined(["  Hello,\nworld. ", "", "How  are you?"]) == "Hello, world. How are you?"
