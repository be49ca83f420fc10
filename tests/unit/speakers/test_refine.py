"""The sparse first pass and the refinement at changes (a fake embedder, known voices)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest

from transcriber.ports import Span
from transcriber.providers.speakers.refine import SpanCache, label_windows, sparse_positions
from transcriber.providers.speakers.turns import WindowPlan, plan_windows, turns_from_windows


class VoiceEmbedder:
    """Embeds a window as the one-hot vector of the voice speaking most of it."""

    def __init__(self, turns: Sequence[tuple[int, int, int]]) -> None:
        self.turns = turns
        self.embedded: list[Span] = []

    def _voice(self, window: Span) -> int:
        def shared(turn: tuple[int, int, int]) -> int:
            return min(window.end_ms, turn[1]) - max(window.start_ms, turn[0])
        return max(self.turns, key=shared)[2]

    def embed(self, features: object, windows: Sequence[Span], *,
              cache: SpanCache | None = None) -> np.ndarray:
        self.embedded.extend(windows)
        vectors = np.zeros((len(windows), 4), dtype=np.float32)
        for row, window in enumerate(windows):
            vectors[row, self._voice(window)] = 1.0
        return vectors


@pytest.mark.parametrize(("count", "every", "expected"), [
    (0, 4, []), (1, 4, [0]), (2, 4, [0]), (2, 1, [0, 1]), (3, 4, [0, 2]), (4, 4, [0, 3]),
    (5, 4, [0, 4]), (9, 4, [0, 4, 8]),
    (10, 4, [0, 4, 8, 9]), (3, 1, [0, 1, 2]),
])
def test_sparse_positions_keep_the_first_and_last(count: int, every: int,
                                                  expected: list[int]) -> None:
    assert sparse_positions(count, every) == expected


def _groups(regions: Sequence[Span]) -> list[list[Span]]:
    return [plan_windows([region], WindowPlan()) for region in regions]


def test_a_change_inside_a_region_is_found_with_fewer_embeddings() -> None:
    # One long region (0-20 s): voice 0 until 9.3 s, then voice 1; then a short
    # region of voice 0 again.
    regions = [Span(start_ms=0, end_ms=20_000), Span(start_ms=21_000, end_ms=22_500)]
    embedder = VoiceEmbedder([(0, 9_300, 0), (9_300, 20_000, 1), (21_000, 22_500, 0)])
    groups = _groups(regions)
    result = label_windows(groups, np.zeros((0, 40), dtype=np.float32), embedder,
                           every=4, num_speakers=None, threshold=0.55)
    windows = [w for group in groups for w in group]
    dense = [embedder._voice(w) for w in windows]
    assert result.labels == dense  # the same labels as embedding every window
    assert result.coarse + result.refined < len(windows)
    assert len(embedder.embedded) == result.coarse + result.refined
    turns = turns_from_windows(regions, windows, result.labels)
    assert [(t.speaker, t.start_ms) for t in turns][:2] == [(0, 0), (1, 9_200)]


def test_agreeing_neighbours_give_their_speaker_unembedded() -> None:
    regions = [Span(start_ms=0, end_ms=12_000)]
    embedder = VoiceEmbedder([(0, 12_000, 2)])
    groups = _groups(regions)
    result = label_windows(groups, np.zeros((0, 40), dtype=np.float32), embedder,
                           every=4, num_speakers=None, threshold=0.55)
    assert set(result.labels) == {0}
    assert result.refined == 0
    assert result.coarse == len(sparse_positions(len(groups[0]), 4))


def test_a_region_of_two_windows_takes_its_first_windows_speaker() -> None:
    regions = [Span(start_ms=0, end_ms=2_800), Span(start_ms=4_000, end_ms=6_900)]
    embedder = VoiceEmbedder([(0, 2_800, 0), (4_000, 6_900, 1)])
    groups = _groups(regions)
    assert [len(g) for g in groups] == [2, 2]
    result = label_windows(groups, np.zeros((0, 40), dtype=np.float32), embedder,
                           every=4, num_speakers=None, threshold=0.55)
    assert result.labels == [0, 0, 1, 1]
    assert embedder.embedded == [groups[0][0], groups[1][0]]


def test_every_one_embeds_every_window() -> None:
    regions = [Span(start_ms=0, end_ms=6_000)]
    embedder = VoiceEmbedder([(0, 3_000, 0), (3_000, 6_000, 1)])
    groups = _groups(regions)
    result = label_windows(groups, np.zeros((0, 40), dtype=np.float32), embedder,
                           every=1, num_speakers=2, threshold=0.55)
    assert result.coarse == len(groups[0])
    assert result.refined == 0
    assert result.labels[0] == 0
    assert result.labels[-1] == 1
