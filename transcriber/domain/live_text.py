"""Text while recording (issue 42, item 4): the pure rules of the preview that a
resumable upload's stored bytes are recognized into while it goes on.

The upload's audio is taken a window at a time from where the text so far ends
(`heard_ms`): a window is recognized only once `WINDOW_MS` of audio past that point
has arrived, and it is cut at the quietest moment of its last `SEARCH_MS`, so a word
is rarely split between two windows. A window with no sound in it is skipped
unrecognized (a recognizer fed silence invents words). The preview is never the
record's transcript: the finished upload becomes a record that the pipeline
recognizes as any other.
"""

from __future__ import annotations

import numpy as np

from transcriber.domain.transcripts import one_line

RATE = 16_000
BYTES_PER_MS = RATE * 2 // 1000  # 16 kHz mono signed 16-bit
WINDOW_MS = 15_000
"""The lag of the text behind the recording, at most (plus a send and a recognition)."""
SEARCH_MS = 3_000
FRAME_MS = 100
# Below this RMS (of full scale 32768) a window holds no speech to recognize (-50 dBFS).
SILENT_RMS = 32768 * 10 ** (-50 / 20)


def window_bytes() -> int:
    return WINDOW_MS * BYTES_PER_MS


def cut_point(pcm: bytes) -> int | None:
    """Pure: how many bytes of `pcm` (the audio from `heard_ms` on, up to a window)
    to recognize now: None until a whole window has arrived; else the window up to
    the middle of its quietest `FRAME_MS` in the last `SEARCH_MS`."""
    window = window_bytes()
    if len(pcm) < window:
        return None
    frame = FRAME_MS * BYTES_PER_MS
    start = window - SEARCH_MS * BYTES_PER_MS
    tail = np.frombuffer(pcm[start:window], dtype="<i2").astype(np.float64)
    frames = tail[: len(tail) // (frame // 2) * (frame // 2)].reshape(-1, frame // 2)
    energy = (frames**2).mean(axis=1)
    quietest = int(np.argmin(energy))
    return start + quietest * frame + frame // 2


def silent(pcm: bytes) -> bool:
    """Pure: no sound a recognizer could take for speech (all below `SILENT_RMS`)."""
    samples = np.frombuffer(pcm[: len(pcm) // 2 * 2], dtype="<i2").astype(np.float64)
    return samples.size == 0 or float(np.sqrt((samples**2).mean())) < SILENT_RMS


def joined(pieces: list[str]) -> str:
    """Pure: the windows' texts as one line, in order."""
    return " ".join(text for piece in pieces if (text := one_line(piece).strip()))
