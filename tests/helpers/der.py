"""Diarization error rate, written here (the well-kept scorers pull torch or pyannote).

DER = (missed speech + false alarm + speaker confusion) / reference speech, on
10 ms frames, with the best one-to-one mapping of found speakers to reference
speakers, and `collar_ms` on each side of every reference boundary left
unscored (NIST md-eval's convention; 250 ms is the customary collar).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from transcriber.ports import Turn

FRAME_MS = 10


@dataclass(frozen=True, slots=True, kw_only=True)
class Segment:
    start_ms: int
    end_ms: int
    speaker: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Score:
    der: float
    missed: float
    false_alarm: float
    confusion: float
    found_speakers: int


def hypothesis_of(turns: Sequence[Turn]) -> list[Segment]:
    """The speaker engine's turns as segments to score, speakers named by their number."""
    return [Segment(start_ms=t.start_ms, end_ms=t.end_ms, speaker=str(t.speaker))
            for t in turns]


def _grid(segments: Sequence[Segment], names: list[str], frames: int) -> npt.NDArray[np.bool_]:
    grid = np.zeros((len(names), frames), dtype=bool)
    for s in segments:
        grid[names.index(s.speaker), s.start_ms // FRAME_MS : s.end_ms // FRAME_MS] = True
    return grid


def diarization_error(
    reference: Sequence[Segment], hypothesis: Sequence[Segment], *, collar_ms: int = 250
) -> Score:
    ref_names = sorted({s.speaker for s in reference})
    hyp_names = sorted({s.speaker for s in hypothesis})
    end = max([s.end_ms for s in [*reference, *hypothesis]], default=0)
    frames = end // FRAME_MS + 1
    ref = _grid(reference, ref_names, frames)
    hyp = _grid(hypothesis, hyp_names, frames)
    scored = np.ones(frames, dtype=bool)
    collar = collar_ms // FRAME_MS
    for s in reference:
        for edge in (s.start_ms // FRAME_MS, s.end_ms // FRAME_MS):
            scored[max(0, edge - collar) : edge + collar] = False
    ref, hyp = ref[:, scored], hyp[:, scored]
    n_ref, n_hyp = ref.sum(axis=0), hyp.sum(axis=0)
    total = float(n_ref.sum())
    overlap = (ref[:, None, :] & hyp[None, :, :]).sum(axis=2)  # (ref, hyp) co-active frames
    best = 0
    small, large = sorted((len(ref_names), len(hyp_names)))
    for chosen in itertools.permutations(range(large), small):
        if len(ref_names) <= len(hyp_names):
            value = sum(int(overlap[r, h]) for r, h in enumerate(chosen))
        else:
            value = sum(int(overlap[r, h]) for h, r in enumerate(chosen))
        best = max(best, value)
    missed = float(np.maximum(n_ref - n_hyp, 0).sum())
    false_alarm = float(np.maximum(n_hyp - n_ref, 0).sum())
    confusion = float(np.minimum(n_ref, n_hyp).sum()) - best
    if total == 0:
        return Score(
            der=0.0, missed=0.0, false_alarm=0.0, confusion=0.0, found_speakers=len(hyp_names)
        )
    return Score(
        der=(missed + false_alarm + confusion) / total,
        missed=missed / total,
        false_alarm=false_alarm / total,
        confusion=confusion / total,
        found_speakers=len(hyp_names),
    )
