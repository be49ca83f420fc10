"""A long recording's speech and features block by block: the same as all at once."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from transcriber.ports import Span
from transcriber.providers.speakers.features import log_mel
from transcriber.providers.speakers.stream import (
    SAMPLE_RATE,
    join_regions,
    pcm_blocks,
    speech_and_features,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "audio"


def _no_speech(_: object) -> list[Span]:
    return []


@pytest.mark.parametrize("block", [700, 16_000, 16_001, 48_017])
def test_features_of_blocks_are_the_features_of_the_whole(block: int) -> None:
    rng = np.random.default_rng(block)
    samples = (0.1 * rng.standard_normal(SAMPLE_RATE * 7 + 333)).astype(np.float32)
    blocks = [samples[i:i + block] for i in range(0, samples.shape[0], block)]
    regions, features = speech_and_features(blocks, None)
    whole = log_mel(samples)
    assert regions == []
    assert features.shape == whole.shape
    # Kept as float16: equal to the whole's to float16's precision (2**-10 relative).
    assert features.dtype == np.float16
    np.testing.assert_allclose(features.astype(np.float32), whole, rtol=2**-10, atol=1e-4)


def test_regions_move_to_the_recording_timeline_and_rejoin_at_an_edge() -> None:
    second = SAMPLE_RATE

    def vad(block: object) -> list[Span]:
        assert isinstance(block, np.ndarray)
        if block[0] == 0:  # the first block: speech from 1 s to its end (2 s)
            return [Span(start_ms=1000, end_ms=1990)]
        return [Span(start_ms=5, end_ms=500), Span(start_ms=1200, end_ms=1500)]

    blocks = [np.zeros(2 * second, dtype=np.float32), np.ones(2 * second, dtype=np.float32)]
    regions, _ = speech_and_features(blocks, vad)
    assert regions == [Span(start_ms=1000, end_ms=2500), Span(start_ms=3200, end_ms=3500)]


def test_regions_apart_from_the_edge_stay_apart() -> None:
    first = [Span(start_ms=0, end_ms=1000)]
    second = [Span(start_ms=2400, end_ms=3000)]
    assert join_regions(first, second, 2000) == first + second
    assert join_regions([], second, 2000) == second
    assert join_regions(first, [], 2000) == first
    near = [Span(start_ms=2100, end_ms=3000)]
    assert join_regions([Span(start_ms=0, end_ms=1800)], near, 2000) == [
        Span(start_ms=0, end_ms=3000)]


@pytest.mark.parametrize("fixture", ["espeak_en.ogg", "librivox_0880.mp3"])
def test_decoded_blocks_are_decode_audio_cut_in_pieces(fixture: str) -> None:
    from faster_whisper.audio import decode_audio  # noqa: PLC0415 - heavy import

    path = FIXTURES / fixture
    blocks = list(pcm_blocks(path, block_samples=10_007))
    assert all(b.shape[0] == 10_007 for b in blocks[:-1])
    assert 0 < blocks[-1].shape[0] <= 10_007
    whole = decode_audio(str(path), sampling_rate=SAMPLE_RATE)
    np.testing.assert_array_equal(np.concatenate(blocks), whole)
