"""Who spoke when: speech cut into windows, windows labelled, labels made into turns.

The windows of each speech region are embedded (`embedder`), clustered and
refined where neighbours disagree (`refine`); each stretch of a region then
takes the speaker of the window whose centre is nearest. Pure but for the
embedder it is given.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from transcriber.domain.voices import Floats
from transcriber.ports import Span, Turn
from transcriber.providers.speakers.clustering import DEFAULT_THRESHOLD
from transcriber.providers.speakers.embedder import EMBEDDING_DIM
from transcriber.providers.speakers.features import Features, log_mel
from transcriber.providers.speakers.refine import Embeds, SpanCache, label_windows
from transcriber.providers.speakers.vad import speech_regions


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowPlan:
    """How speech is cut for embedding: windows of `window_ms`, every `step_ms`."""

    window_ms: int = 1600
    step_ms: int = 800
    min_ms: int = 400
    # Embed every `every`-th window of a region first (`refine`); 1: all of them.
    every: int = 4


def plan_windows(speech: Sequence[Span], plan: WindowPlan = WindowPlan()) -> list[Span]:
    """Whole windows on a grid of `step_ms` from each region's start; a region shorter
    than a window is one window.

    A region's tail after its last whole window (less than a step) has no window of
    its own: the turns give it to the last window. An end-aligned window there cost
    one more embedder input in every region (a sixth of all inputs) and found the
    same turns on the conversations, with fewer confusions on 3 hours (docs/speakers.md).
    """
    windows: list[Span] = []
    for region in speech:
        length = region.end_ms - region.start_ms
        if length < plan.min_ms:
            continue
        if length <= plan.window_ms:
            windows.append(Span(start_ms=region.start_ms, end_ms=region.end_ms))
            continue
        start = region.start_ms
        while start + plan.window_ms <= region.end_ms:
            windows.append(Span(start_ms=start, end_ms=start + plan.window_ms))
            start += plan.step_ms
    return windows


def turns_from_windows(
    speech: Sequence[Span], windows: Sequence[Span], labels: Sequence[int]
) -> list[Turn]:
    """Cut each speech region between window centres and merge neighbours of one speaker.

    Each stretch of a region belongs to the window whose centre is nearest, so a
    change of speaker lands halfway between the centres of the windows that disagree.
    """
    centres = np.array([(w.start_ms + w.end_ms) / 2 for w in windows])
    turns: list[Turn] = []
    for region in speech:
        inside = np.flatnonzero((centres >= region.start_ms) & (centres <= region.end_ms))
        if inside.size == 0:
            continue
        cuts = [region.start_ms]
        cuts += [int((centres[i] + centres[j]) / 2) for i, j in itertools.pairwise(inside)]
        cuts.append(region.end_ms)
        for k, index in enumerate(inside):
            _append(turns, Turn(start_ms=cuts[k], end_ms=cuts[k + 1], speaker=labels[int(index)]))
    return turns


def _append(turns: list[Turn], turn: Turn) -> None:
    if turn.end_ms <= turn.start_ms:
        return
    if turns and turns[-1].speaker == turn.speaker and turn.start_ms - turns[-1].end_ms <= 1:
        turns[-1] = Turn(start_ms=turns[-1].start_ms, end_ms=turn.end_ms, speaker=turn.speaker)
    else:
        turns.append(turn)


def find_turns(
    samples: Floats,
    embedder: Embeds,
    *,
    speech: Sequence[Span] | None = None,
    num_speakers: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    plan: WindowPlan = WindowPlan(),
) -> list[Turn]:
    """Speaker turns of 16 kHz mono `samples`; `speech` defaults to the VAD's regions.

    Only every `plan.every`-th window of a region is embedded unless neighbours
    disagree (`refine`)."""
    regions = list(speech) if speech is not None else speech_regions(samples)
    return turns_from_features(log_mel(samples), regions, embedder, num_speakers=num_speakers,
                               threshold=threshold, plan=plan)


@dataclass(frozen=True, slots=True, kw_only=True)
class FoundTurns:
    """A recording's turns and the windows embedded to find them, with their embeddings
    (rows): the voices a record keeps (`domain.voices`)."""

    turns: list[Turn]
    windows: list[Span]
    vectors: Floats
    # The speech regions clustered: the same regions give the same turns, so turns found
    # over others (a job's own VAD) are not the record's (`separator.fits`).
    regions: tuple[Span, ...] = ()


def turns_from_features(
    features: Features,
    regions: Sequence[Span],
    embedder: Embeds,
    *,
    num_speakers: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    plan: WindowPlan = WindowPlan(),
    cache: SpanCache | None = None,
) -> list[Turn]:
    """`find_turns` from the log-mel `features` and speech `regions` already found (a long
    recording's come from `stream`, block by block); `cache`: `label_windows`'."""
    return found_from_features(features, regions, embedder, num_speakers=num_speakers,
                               threshold=threshold, plan=plan, cache=cache).turns


def found_from_features(
    features: Features,
    regions: Sequence[Span],
    embedder: Embeds,
    *,
    num_speakers: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    plan: WindowPlan = WindowPlan(),
    cache: SpanCache | None = None,
) -> FoundTurns:
    """`turns_from_features` with the windows it embedded and their embeddings."""
    groups = [group for group in (plan_windows([r], plan) for r in regions) if group]
    if not groups:
        return FoundTurns(turns=[], windows=[], vectors=np.zeros((0, EMBEDDING_DIM), np.float32),
                     regions=tuple(regions))
    refinement = label_windows(groups, features, embedder, every=plan.every,
                               num_speakers=num_speakers, threshold=threshold, cache=cache)
    windows = [window for group in groups for window in group]
    vectors = refinement.vectors if refinement.vectors is not None else \
        np.zeros((0, EMBEDDING_DIM), np.float32)
    return FoundTurns(turns=turns_from_windows(regions, windows, refinement.labels),
                 windows=[windows[i] for i in refinement.embedded], vectors=vectors,
                 regions=tuple(regions))
