"""Agglomerative clustering on cosine distance: the count found or given."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from transcriber.providers.speaker_clustering import agglomerate, first_appearance


def _speakers(
    counts: list[int], *, spread: float = 0.25, seed: int = 0
) -> tuple[npt.NDArray[np.float32], list[int]]:
    """Points around `len(counts)` random directions in 256 dims, interleaved in time."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(0, 1, (len(counts), 256))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    truth = [k for k, c in enumerate(counts) for _ in range(c)]
    rng.shuffle(truth)
    points = np.stack([centres[k] + rng.normal(0, spread / 16, 256) for k in truth])
    return points.astype(np.float32), truth


def _same_partition(a: list[int], b: list[int]) -> bool:
    return first_appearance(a) == first_appearance(b)


@pytest.mark.parametrize("counts", [[12], [10, 7], [9, 9, 4], [5, 5, 5, 5, 5]])
def test_the_number_of_speakers_is_found(counts: list[int]) -> None:
    points, truth = _speakers(counts)
    labels = agglomerate(points)
    assert len(set(labels)) == len(counts)
    assert _same_partition(labels, truth)


def test_a_given_count_is_kept_even_when_the_threshold_would_merge_more() -> None:
    points, truth = _speakers([8, 8], seed=3)
    assert len(set(agglomerate(points, threshold=2.0))) == 1
    labels = agglomerate(points, num_speakers=2, threshold=2.0)
    assert _same_partition(labels, truth)


def test_a_given_count_splits_what_the_threshold_would_keep_together() -> None:
    points, _ = _speakers([20], seed=5)
    assert len(set(agglomerate(points, num_speakers=3))) == 3


def test_labels_count_up_in_order_of_first_appearance() -> None:
    points, _ = _speakers([4, 4, 4], seed=7)
    labels = agglomerate(points)
    assert labels[0] == 0
    seen: list[int] = []
    for label in labels:
        if label not in seen:
            seen.append(label)
    assert seen == list(range(len(seen)))


def test_never_more_than_eight_speakers_are_found() -> None:
    points, _ = _speakers([2] * 12, seed=11)
    assert len(set(agglomerate(points))) == 8


def test_edge_cases() -> None:
    assert agglomerate(np.zeros((0, 256), dtype=np.float32)) == []
    one = np.ones((1, 256), dtype=np.float32)
    assert agglomerate(one) == [0]
    assert agglomerate(one, num_speakers=3) == [0]
    with pytest.raises(ValueError, match="num_speakers"):
        agglomerate(one, num_speakers=9)
    assert first_appearance([5, 5, 2, 9, 2]) == [0, 0, 1, 2, 1]
