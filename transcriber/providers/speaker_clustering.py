"""Grouping speaker embeddings: average-linkage agglomerative clustering on cosine distance.

Pure numpy, no scipy (not a dependency). The number of speakers is either
given (1-8, the uploader's `speakers` field) or found: merging stops when
the two closest clusters are further apart than `threshold` (the average
cosine distance between their members). The default threshold is tuned on
the benchmarks in tests/bench/test_speakers.py (see docs/recognition.md).
"""

from __future__ import annotations

from typing import Final

import numpy as np
import numpy.typing as npt

DEFAULT_THRESHOLD: Final = 0.55
MAX_SPEAKERS: Final = 8


def cosine_distances(embeddings: npt.NDArray[np.float32]) -> npt.NDArray[np.float64]:
    vectors = embeddings.astype(np.float64)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-12
    return np.clip(1.0 - vectors @ vectors.T, 0.0, 2.0)


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
    pair is within `threshold`, and at least down to `max_speakers`.
    """
    count = int(embeddings.shape[0])
    if count == 0:
        return []
    if num_speakers is not None and not 1 <= num_speakers <= max_speakers:
        raise ValueError("num_speakers must be between 1 and max_speakers")
    distance = cosine_distances(embeddings)
    np.fill_diagonal(distance, np.inf)
    sizes = np.ones(count)
    alive = np.ones(count, dtype=bool)
    members: list[list[int]] = [[i] for i in range(count)]
    clusters = count
    while clusters > 1:
        flat = int(np.argmin(distance))
        a, b = divmod(flat, count)
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
        members[a].extend(members[b])
        members[b] = []
        clusters -= 1
    labels = np.empty(count, dtype=np.int64)
    for root in np.flatnonzero(alive):
        labels[members[int(root)]] = root
    return first_appearance(labels.tolist())


def first_appearance(labels: list[int]) -> list[int]:
    """Renumber labels 0, 1, … in the order they first occur."""
    order: dict[int, int] = {}
    return [order.setdefault(label, len(order)) for label in labels]
