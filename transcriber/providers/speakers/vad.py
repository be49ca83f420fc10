"""The one VAD of the service: the Silero model that faster-whisper ships, with the
options that tell speaker turns apart."""

from __future__ import annotations

from typing import Final

import numpy as np

from transcriber.domain.voices import Floats
from transcriber.ports import Span
from transcriber.providers.speakers.features import SAMPLE_RATE

# A pause of 0.3 s may be a change of speaker; 0.1 s of padding keeps the windows on
# speech (the recognizer's VAD uses them too).
TURN_MIN_SILENCE_MS: Final = 300
TURN_PAD_MS: Final = 100
# Silero's speech probability that starts a region (it ends under this less 0.15):
# 0.5, Silero's own, chosen on the hard-audio corpus against 0.35 and 0.65
# (docs/recognition.md, "VAD threshold"; `tests/bench/test_decoding_table.py`).
SPEECH_THRESHOLD = 0.5


def speech_regions(samples: Floats, *, max_speech_s: float = float("inf")) -> list[Span]:
    """Speech stretches found by the Silero VAD that faster-whisper ships (ONNX, bundled),
    with the turn options; the one VAD of the service (the batched recognizer's clips
    are built from these regions, at most `max_speech_s` long)."""
    from faster_whisper.vad import (  # noqa: PLC0415 - faster-whisper loads when used
        VadOptions,
        get_speech_timestamps,
    )

    options = VadOptions(min_silence_duration_ms=TURN_MIN_SILENCE_MS, speech_pad_ms=TURN_PAD_MS,
                         max_speech_duration_s=max_speech_s,
                         threshold=SPEECH_THRESHOLD)
    found = get_speech_timestamps(np.ascontiguousarray(samples, dtype=np.float32), options)
    scale = 1000 / SAMPLE_RATE
    return [Span(start_ms=int(r["start"] * scale), end_ms=int(r["end"] * scale)) for r in found]
