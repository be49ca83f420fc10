"""Fewer embeddings for the same turns: cluster a sparse set of windows, refine at changes.

The embedder's cost is all in its LSTM (onnxruntime's `DynamicQuantizeLSTM`,
99 % of a run), about 14 ms for each 0.8 s input on one core, so the time
follows the number of inputs and nothing else does much. Inside one speech
region the speaker rarely changes, and most changes fall in the pauses between
regions anyway. So only every `every`-th window of a region (and its last one)
is embedded and clustered; the windows between two of them that agree take
their speaker unembedded; only the windows between two that disagree are
embedded too, each given the nearer of the two neighbours' speakers. The turns
are then built from all windows, as before: a change still lands halfway
between the centres of two windows that disagree.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from transcriber.domain.voices import Floats
from transcriber.providers.speakers.clustering import centroids, cluster
from transcriber.providers.speakers.features import Features

SpanCache = dict[tuple[int, int], Floats]


class Embeds(Protocol):
    def embed(self, features: Features, windows: Sequence[Any], *,
              cache: SpanCache | None = None) -> Floats: ...


@dataclass(frozen=True, slots=True, kw_only=True)
class Refinement:
    """Which windows were embedded: the sparse first pass and the refined ones."""

    labels: list[int]
    coarse: int
    refined: int
    # The windows embedded (their positions in the flat order of `groups`' windows) and
    # their embeddings, rows in that order: what a record keeps of its voices.
    embedded: tuple[int, ...] = ()
    vectors: Floats | None = None


def sparse_positions(count: int, every: int) -> list[int]:
    """Pure: positions 0, every, 2·every, … of a region's `count` windows, and its last;
    the first alone of a region of two (they share half their audio: the second
    adds an input, seldom a speaker).

    Not the middle window alone of every short region: that halved a conversation's
    inputs, but on 3 hours of two voices the closest clusters then came within the
    threshold and one speaker was found (docs/speakers.md).
    """
    if count <= 0:
        return []
    if count == 2 and every > 1:
        return [0]
    picked = list(range(0, count, max(every, 1)))
    if picked[-1] != count - 1:
        picked.append(count - 1)
    return picked


def label_windows(
    groups: Sequence[Sequence[Any]],
    features: Features,
    embedder: Embeds,
    *,
    every: int,
    num_speakers: int | None,
    threshold: float,
    cache: SpanCache | None = None,
) -> Refinement:
    """A speaker per window (in region order, as `groups` lists them), numbered from 0
    in order of first appearance; `every=1` embeds every window. `cache` holds inputs
    already embedded over these features (a job of `ahead` taken over half done)."""
    positions = [sparse_positions(len(group), every) for group in groups]
    flat = [(g, p) for g, picked in enumerate(positions) for p in picked]
    cache = {} if cache is None else cache
    coarse = embedder.embed(features, [groups[g][p] for g, p in flat], cache=cache)
    coarse_labels = cluster(coarse, num_speakers=num_speakers, threshold=threshold)
    label_at = {key: coarse_labels[i] for i, key in enumerate(flat)}
    pending: list[tuple[int, int, int, int]] = []  # group, position, left label, right label
    for g, picked in enumerate(positions):
        for left, right in itertools.pairwise(picked):
            a, b = label_at[(g, left)], label_at[(g, right)]
            for p in range(left + 1, right):
                if a == b:
                    label_at[(g, p)] = a
                else:
                    pending.append((g, p, a, b))
        for p in range(picked[-1] + 1, len(groups[g])):
            label_at[(g, p)] = label_at[(g, picked[-1])]
    kept = [coarse]
    embedded_keys = list(flat)
    if pending:
        centres = centroids(coarse, coarse_labels)
        refined = embedder.embed(features, [groups[g][p] for g, p, _, _ in pending],
                                 cache=cache)
        kept.append(refined)
        embedded_keys += [(g, p) for g, p, _, _ in pending]
        for vector, (g, p, a, b) in zip(refined, pending, strict=True):
            label_at[(g, p)] = a if float(vector @ centres[a]) >= float(vector @ centres[b]) \
                else b
    labels = [label_at[(g, p)] for g, group in enumerate(groups) for p in range(len(group))]
    order: dict[int, int] = {}
    numbered = [order.setdefault(label, len(order)) for label in labels]
    starts = list(itertools.accumulate((len(group) for group in groups), initial=0))
    return Refinement(labels=numbered, coarse=len(flat), refined=len(pending),
                      embedded=tuple(starts[g] + p for g, p in embedded_keys),
                      vectors=np.concatenate(kept))
