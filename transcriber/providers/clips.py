"""The batched recognizer's clips, and the check that every second of speech was heard.

Whisper decodes a window of at most 30 s; the batched pipeline decodes each clip as
one window and drops whatever lies past its 30th second. So the clips are planned
here (pure functions): every second the VAD calls speech lies inside some clip, a
stretch of speech longer than a window is cut at its quietest point (a pause the VAD
saw, else the quietest 10-ms frame of the search range), and neighbouring clips meet at
the cut without overlapping, so no word is said twice.

Whisper can still stop early inside a window, or give nothing for a clip of speech.
`coverage` compares the decoded words with the VAD's speech clip by clip: speech that no
word lies near, a clip of speech that came back empty while a neighbour has words, and
speech no clip holds are the spans the recognizer decodes again the safe way
(sequentially, `whisper.WhisperRecognizer`), never saved short.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

# Whisper's window: the batched pipeline decodes each clip as one window.
CLIP_MAX_SECONDS = 30.0
# A longer gap (silence, music, noise: not speech) ends a clip, so it is never decoded.
CLIP_MAX_GAP_SECONDS = 2.0
# The VAD's regions are padded by 0.1 s (the speaker engine's options); the clips
# by another 0.3 s, so a word's soft ends stay inside.
CLIP_PAD_SECONDS = 0.3
# A long stretch is cut no earlier than this share of a window into a clip (18 s of 30):
# clips stay full (Whisper fills its 30-s window whatever the clip's length, so fewer,
# fuller clips are faster).
CUT_SEARCH_FROM = 0.6
# Around a pause the VAD left between two regions, its quietest point is searched this
# far on either side of its middle.
PAUSE_SEARCH_SECONDS = 0.15
# Speech this far from the nearest word still counts as heard: word times are aligned
# to within a few hundred ms and the VAD pads speech by 0.1 s.
WORD_REACH_SECONDS = 1.0
# Speech unheard for this long in one stretch is a violation (a short one is a breath,
# a cough, or a word the alignment placed a little early).
UNCOVERED_MIN_SECONDS = 1.5
# An empty clip with less speech than this is not worth a second decoding.
EMPTY_MIN_SPEECH_SECONDS = 1.0
# Whisper's own no-speech probability: an empty clip it thought was speech is decoded
# again even without neighbours (faster-whisper's default threshold).
NO_SPEECH_THRESHOLD = 0.6

Seconds = tuple[float, float]
Quietest = Callable[[float, float], float]


@dataclass(frozen=True, slots=True, kw_only=True)
class Clip:
    start: float
    end: float

    @property
    def seconds(self) -> float:
        return self.end - self.start


def widened(regions: Sequence[Seconds], *, duration: float,
            pad: float = CLIP_PAD_SECONDS) -> list[Seconds]:
    """The regions (in order) widened by `pad` on each side inside [0, duration], those
    that then touch or overlap joined."""
    joined: list[Seconds] = []
    for start, end in regions:
        wide = (max(0.0, start - pad), min(duration, end + pad))
        if joined and wide[0] <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], wide[1]))
        else:
            joined.append(wide)
    return joined


def _cut(start: float, end: float, pauses: Sequence[Seconds], quietest: Quietest | None, *,
         max_seconds: float) -> float:
    """Where a stretch [start, end) longer than `max_seconds` is cut first: in the longest
    pause the VAD left between its regions in the search range (at the quietest point of
    that pause), else at the quietest point of the range, else at its end."""
    low = start + max_seconds * CUT_SEARCH_FROM
    high = start + max_seconds
    inside = [(b - a, a, b) for a, b in pauses if low <= (a + b) / 2 <= high]
    if inside:
        _, a, b = max(inside)
        # A pause narrower than a few frames (the VAD's padding can close it) is searched
        # a little around.
        middle = (a + b) / 2
        a, b = min(a, middle - PAUSE_SEARCH_SECONDS), max(b, middle + PAUSE_SEARCH_SECONDS)
        lo, hi = max(a, low), min(b, high)
    else:
        lo, hi = low, high
    point = quietest(lo, hi) if quietest is not None and hi > lo else (lo + hi) / 2
    if not inside and quietest is None:
        point = high
    return min(max(point, low), high)


def plan_clips(regions: Sequence[Seconds], *, duration: float,
               quietest: Quietest | None = None, max_seconds: float = CLIP_MAX_SECONDS,
               max_gap_seconds: float = CLIP_MAX_GAP_SECONDS,
               pad: float = CLIP_PAD_SECONDS) -> list[Clip]:
    """Pure: clips of at most `max_seconds`, in order, whose union holds every region.

    The regions (the VAD's, in order) are widened by `pad`; a stretch longer than a
    window is cut (`_cut`) into pieces that meet; pieces then join into clips while a
    clip stays within `max_seconds` and the gap before the next is at most
    `max_gap_seconds` (the pause is kept: without its pauses Whisper runs sentences
    together). `quietest(lo, hi)` gives the quietest moment in [lo, hi]."""
    ordered = sorted((max(0.0, a), min(duration, b)) for a, b in regions if b > a)
    pieces: list[Seconds] = []
    for first, end in widened(ordered, duration=duration, pad=pad):
        # The pauses between the VAD's own regions inside this stretch: cut there first.
        inner = [r for r in ordered if r[1] > first and r[0] < end]
        pauses = [(a[1], b[0]) for a, b in itertools.pairwise(inner) if b[0] >= a[1]]
        start = first
        while end - start > max_seconds:
            cut = _cut(start, end, pauses, quietest, max_seconds=max_seconds)
            pieces.append((start, cut))
            start = cut
        pieces.append((start, end))
    clips: list[list[float]] = []
    for start, end in pieces:
        if (clips and end - clips[-1][0] <= max_seconds
                and start - clips[-1][1] <= max_gap_seconds):
            clips[-1][1] = end
        else:
            clips.append([start, end])
    return [Clip(start=start, end=end) for start, end in clips]


def subtract(spans: Sequence[Seconds], holes: Sequence[Seconds]) -> list[Seconds]:
    """Pure: the parts of `spans` outside every hole (both in any order)."""
    left: list[Seconds] = []
    cuts = sorted(holes)
    for start, end in sorted(spans):
        at = start
        for a, b in cuts:
            if b <= at or a >= end:
                continue
            if a > at:
                left.append((at, a))
            at = max(at, b)
            if at >= end:
                break
        if at < end:
            left.append((at, end))
    return left


def seconds_of(spans: Sequence[Seconds]) -> float:
    return sum(end - start for start, end in spans)


def unclipped(regions: Sequence[Seconds], clips: Sequence[Clip]) -> list[Seconds]:
    """Pure: speech no clip holds (empty when the planning kept its promise)."""
    return subtract(regions, [(c.start, c.end) for c in clips])


@dataclass(frozen=True, slots=True, kw_only=True)
class Decoded:
    """What came back for one clip: its words' (start, end), whether it has text, and
    Whisper's probability that it holds no speech (None: not known)."""

    words: tuple[Seconds, ...]
    has_text: bool
    no_speech: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClipCoverage:
    clip: Clip
    speech_seconds: float
    uncovered: tuple[Seconds, ...]  # stretches of speech no word is near (long ones only)
    empty: bool  # speech came back with no text while a neighbour has words

    @property
    def uncovered_seconds(self) -> float:
        return seconds_of(self.uncovered)

    @property
    def violated(self) -> bool:
        return self.empty or bool(self.uncovered)


def _heard(regions: Sequence[Seconds], decoded: Decoded, clip: Clip) -> list[Seconds]:
    """The clip's speech that no word lies within `WORD_REACH_SECONDS` of, long stretches
    only."""
    speech = [(max(a, clip.start), min(b, clip.end)) for a, b in regions
              if b > clip.start and a < clip.end]
    reach = [(a - WORD_REACH_SECONDS, b + WORD_REACH_SECONDS) for a, b in decoded.words]
    return [(a, b) for a, b in subtract(speech, reach) if b - a >= UNCOVERED_MIN_SECONDS]


def coverage(regions: Sequence[Seconds], clips: Sequence[Clip],
             decoded: Sequence[Decoded]) -> list[ClipCoverage]:
    """Pure: clip by clip, the speech the decoded words do not cover.

    A clip with text but no word times (an answer without them) is taken as heard; a
    clip without text is empty when it holds `EMPTY_MIN_SPEECH_SECONDS` of speech and a
    neighbour came back with text or Whisper gave it a low no-speech probability (where
    every clip around it is empty and Whisper calls it no speech, the VAD took music or
    noise for speech)."""
    if len(clips) != len(decoded):
        raise ValueError("one decoded answer per clip")
    answers = list(decoded)
    found: list[ClipCoverage] = []
    for index, (clip, answer) in enumerate(zip(clips, answers, strict=True)):
        speech = seconds_of([(max(a, clip.start), min(b, clip.end)) for a, b in regions
                             if b > clip.start and a < clip.end])
        neighbours = answers[max(index - 1, 0):index] + answers[index + 1:index + 2]
        thought_speech = answer.no_speech is not None and answer.no_speech < NO_SPEECH_THRESHOLD
        empty = (not answer.has_text and speech >= EMPTY_MIN_SPEECH_SECONDS
                 and (thought_speech or any(other.has_text for other in neighbours)))
        if answer.has_text and answer.words:
            uncovered = tuple(_heard(regions, answer, clip))
        elif empty:
            uncovered = tuple((max(a, clip.start), min(b, clip.end)) for a, b in regions
                              if b > clip.start and a < clip.end)
        else:
            uncovered = ()
        found.append(ClipCoverage(clip=clip, speech_seconds=speech, uncovered=uncovered,
                                  empty=empty))
    return found


class Loudness:
    """The audio's level in 10-ms frames, smoothed over 50 ms: `quietest(lo, hi)` is the
    middle of the quietest frame in [lo, hi] (seconds)."""

    FRAME = 160  # samples of 16 kHz audio
    SMOOTH = 5  # frames

    BLOCK = 4096  # frames measured at once: no copy of the whole part is made

    def __init__(self, samples: np.ndarray, *, rate: int = 16_000) -> None:
        self._rate = rate
        count = samples.size // self.FRAME
        energy = np.zeros(max(count, 1))
        for first in range(0, count, self.BLOCK):
            last = min(first + self.BLOCK, count)
            block = np.asarray(samples[first * self.FRAME:last * self.FRAME],
                               dtype=np.float32).reshape(-1, self.FRAME)
            energy[first:last] = np.einsum("ij,ij->i", block, block) / self.FRAME
        kernel = np.ones(self.SMOOTH) / self.SMOOTH
        self._level = np.convolve(energy, kernel, mode="same")

    def quietest(self, lo: float, hi: float) -> float:
        per_second = self._rate / self.FRAME
        first = max(int(lo * per_second), 0)
        last = min(int(hi * per_second) + 1, self._level.size)
        if last <= first:
            return (lo + hi) / 2
        index = first + int(np.argmin(self._level[first:last]))
        return min(max((index + 0.5) / per_second, lo), hi)
