"""Agglomerative clustering on cosine distance: the count found or given."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest

from transcriber.providers.speakers.clustering import (
    MIN_SPEAKER_WINDOWS,
    absorb_small,
    agglomerate,
    cluster,
    first_appearance,
)


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


def _with_odd_windows(odd: int, *, seed: int) -> tuple[npt.NDArray[np.float32], list[int]]:
    """Two speakers of ten windows, and `odd` windows of the first that sound unlike
    the rest of it (about 0.5 from it: beyond the threshold, far nearer it than the other)."""
    points, truth = _speakers([10, 10], seed=seed)
    first = points[[i for i, k in enumerate(truth) if k == truth[0]]].mean(axis=0)
    first /= np.linalg.norm(first)
    rng = np.random.default_rng(seed + 100)
    away = rng.normal(0, 1, 256)
    away -= (away @ first) * first
    away /= np.linalg.norm(away)
    odd_points = [first + 1.8 * away + rng.normal(0, 0.01, 256) for _ in range(odd)]
    return (np.concatenate([points, np.stack(odd_points).astype(np.float32)]),
            truth + [truth[0]] * odd)


def test_a_few_odd_windows_of_a_voice_join_its_speaker() -> None:
    points, truth = _with_odd_windows(MIN_SPEAKER_WINDOWS - 1, seed=21)
    assert len(set(agglomerate(points))) == 3  # the odd ones alone, under the threshold
    labels = cluster(points)
    assert len(set(labels)) == 2
    assert _same_partition(labels, truth)


def test_a_speaker_with_enough_windows_is_kept() -> None:
    points, _ = _with_odd_windows(MIN_SPEAKER_WINDOWS, seed=22)
    assert len(set(cluster(points))) == 3


def test_a_given_count_is_never_absorbed() -> None:
    points, _ = _with_odd_windows(MIN_SPEAKER_WINDOWS - 1, seed=23)
    assert len(set(cluster(points, num_speakers=3))) == 3


def test_absorbing_needs_a_large_cluster_to_join() -> None:
    points, _ = _speakers([2, 2, 1], seed=24)
    labels = agglomerate(points)
    assert len(set(labels)) == 3
    assert absorb_small(points, labels) == labels  # none is large: nothing to join
    assert absorb_small(points, []) == []
    assert absorb_small(points, [0, 0, 1, 1, 0], min_size=2) == [0, 0, 1, 1, 0]
