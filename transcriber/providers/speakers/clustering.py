"""Grouping speaker embeddings: average-linkage agglomerative clustering on cosine distance.

Pure numpy, no scipy (not a dependency). `cluster` is the entry point: it
bounds the clustered count (`MAX_CLUSTERED`) so that memory and time do not
grow quadratically with the recording. The number of speakers is either
given (1-8, the uploader's `speakers` field) or found: merging stops when
the two closest clusters are further apart than `threshold` (the average
cosine distance between their members), and a cluster of fewer than
`MIN_SPEAKER_WINDOWS` windows then joins its nearest (`absorb_small`). The
default threshold is tuned on the speaker benchmarks and the integration tests'
real exchange (see docs/speakers.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

# The middle of the thresholds at which every benchmark comes out right (steps of
# 0.02, with `MIN_SPEAKER_WINDOWS`): the 17-s exchange of the integration tests and the
# real conversation from 0.40 up, the three voices 0.30-0.58, the long record of two
# voices up to 0.56 (docs/speakers.md).
DEFAULT_THRESHOLD: Final = 0.48
# A speaker found must hold this many of the clustered windows; a smaller cluster
# joins its nearest (`absorb_small`). Below the threshold's middle, a few odd windows
# of one voice formed a cluster of their own: the 17-s exchange found a third
# speaker under 0.50, which left the benchmarks a common window of 0.50-0.56 only.
MIN_SPEAKER_WINDOWS: Final = 3
MAX_SPEAKERS: Final = 8
# Embeddings clustered at most (see `cluster`): 2000^2 float64 distances are 32 MB
# and about 0.5 s of merging; a 60-minute recording has about 1200 (the sparse pass).
MAX_CLUSTERED: Final = 2000
ASSIGN_BLOCK: Final = 4096


def cosine_distances(embeddings: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    vectors = embeddings.astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
    distance = vectors @ vectors.T
    # In place: the n x n matrix is the clustering's memory, so it exists once.
    np.subtract(1.0, distance, out=distance)
    return np.clip(distance, 0.0, 2.0, out=distance)


def agglomerate(
    embeddings: npt.NDArray[np.float32],
    *,
    num_speakers: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    max_speakers: int = MAX_SPEAKERS,
) -> list[int]:
    """A cluster index per embedding, numbered in order of first appearance.

    With `num_speakers`, merge until exactly that many clusters remain (fewer
    only when there are fewer embeddings); otherwise merge while the closest
    pair is within `threshold`, and at least down to `max_speakers`. Quadratic
    in memory: long recordings go through `cluster`, which bounds the count.
    """
    count = int(embeddings.shape[0])
    if count == 0:
        return []
    if num_speakers is not None and not 1 <= num_speakers <= max_speakers:
        raise ValueError("num_speakers must be between 1 and max_speakers")
    distance = cosine_distances(embeddings)
    np.fill_diagonal(distance, np.inf)
    # Each row's nearest cluster, kept up to date: a merge rescans only the rows
    # that pointed at the merged pair, not the whole matrix (O(n^2) overall, not O(n^3)).
    nearest = np.argmin(distance, axis=1)
    nearest_distance = distance[np.arange(count), nearest]
    sizes = np.ones(count)
    alive = np.ones(count, dtype=bool)
    members: list[list[int]] = [[i] for i in range(count)]
    clusters = count
    while clusters > 1:
        a = int(np.argmin(nearest_distance))
        b = int(nearest[a])
        a, b = min(a, b), max(a, b)
        closest = float(distance[a, b])
        if num_speakers is not None:
            if clusters <= num_speakers:
                break
        elif closest > threshold and clusters <= max_speakers:
            break
        # Average linkage (UPGMA): the merged row is the size-weighted mean of the two rows.
        merged = (distance[a] * sizes[a] + distance[b] * sizes[b]) / (sizes[a] + sizes[b])
        distance[a, :] = merged
        distance[:, a] = merged
        distance[a, a] = np.inf
        distance[b, :] = np.inf
        distance[:, b] = np.inf
        sizes[a] += sizes[b]
        alive[b] = False
        nearest_distance[b] = np.inf
        members[a].extend(members[b])
        members[b] = []
        clusters -= 1
        stale = np.flatnonzero(alive & ((nearest == a) | (nearest == b)))
        stale = np.union1d(stale, [a])
        nearest[stale] = np.argmin(distance[stale], axis=1)
        nearest_distance[stale] = distance[stale, nearest[stale]]
        closer = alive & (merged < nearest_distance)
        closer[a] = False
        nearest[closer] = a
        nearest_distance[closer] = merged[closer]
    labels = np.empty(count, dtype=np.int64)
    for root in np.flatnonzero(alive):
        labels[members[int(root)]] = root
    return first_appearance(labels.tolist())


def cluster(
    embeddings: npt.NDArray[np.float32],
    *,
    num_speakers: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    max_speakers: int = MAX_SPEAKERS,
    limit: int = MAX_CLUSTERED,
) -> list[int]:
    """`agglomerate` with memory and time bounded by `limit`, whatever the length.

    Up to `limit` embeddings are clustered as they are. Beyond it, `limit` of
    them chosen evenly over the recording are clustered, and every other one
    takes the cluster whose centroid is nearest (cosine); the chosen keep their
    clusters, so a given count is never lost. Memory: `limit`^2 distances plus
    one row of `k` similarities per embedding.
    """
    def speakers_of(clustered: npt.NDArray[np.float32]) -> list[int]:
        labels = agglomerate(clustered, num_speakers=num_speakers, threshold=threshold,
                             max_speakers=max_speakers)
        return labels if num_speakers is not None else absorb_small(clustered, labels)

    count = int(embeddings.shape[0])
    if count <= limit:
        return speakers_of(embeddings)
    chosen = np.unique(np.linspace(0, count - 1, limit).round().astype(np.int64))
    picked = speakers_of(embeddings[chosen])
    centres = centroids(embeddings[chosen], picked)
    labels = np.empty(count, dtype=np.int64)
    for first in range(0, count, ASSIGN_BLOCK):
        block = embeddings[first:first + ASSIGN_BLOCK]
        labels[first:first + block.shape[0]] = np.argmax(block @ centres.T, axis=1)
    labels[chosen] = picked
    return first_appearance(labels.tolist())


def absorb_small(embeddings: npt.NDArray[np.float32], labels: Sequence[int], *,
                 min_size: int = MIN_SPEAKER_WINDOWS) -> list[int]:
    """Pure: each cluster of fewer than `min_size` embeddings joins, embedding by
    embedding, the nearest (by centroid) of the clusters that hold at least that many;
    unchanged when none does. Numbered again in order of first appearance.

    Only for a count found, never a given one: the uploader's count is kept whole.
    """
    if not labels:
        return []
    found = np.asarray(labels, dtype=np.int64)
    sizes = np.bincount(found)
    large = np.flatnonzero(sizes >= min_size)
    if large.size in (0, sizes.size):
        return list(labels)
    centres = centroids(embeddings, labels)[large]
    small = np.flatnonzero(sizes[found] < min_size)
    found[small] = large[np.argmax(embeddings[small] @ centres.T, axis=1)]
    return first_appearance(found.tolist())


def centroids(embeddings: npt.NDArray[np.float32],
              labels: Sequence[int]) -> npt.NDArray[np.float32]:
    """The L2-normalised mean direction of each label's embeddings (labels 0…k-1)."""
    found = max(labels) + 1
    centres = np.zeros((found, embeddings.shape[1]), dtype=np.float64)
    np.add.at(centres, np.asarray(labels), embeddings)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True) + 1e-12
    return centres.astype(np.float32)


def first_appearance(labels: list[int]) -> list[int]:
    """Renumber labels 0, 1, … in the order they first occur."""
    order: dict[int, int] = {}
    return [order.setdefault(label, len(order)) for label in labels]
