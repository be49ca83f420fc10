"""Voice prints (pure): summaries, profiles merged by talk time, one-to-one suggestions,
prints computed again from the kept windows after lines move, the byte formats."""

from __future__ import annotations

import numpy as np
import pytest

from transcriber.domain.transcripts import with_suggested_names
from transcriber.domain.voices import (
    DIM,
    SpokenLine,
    VoicePrint,
    VoiceWindows,
    assign,
    merge,
    similarity,
    speaker_prints,
    summarize,
)


def _unit(seed: int, around: np.ndarray | None = None, spread: float = 0.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    vector = rng.standard_normal(DIM) if around is None else \
        around + spread * rng.standard_normal(DIM)
    return (vector / np.linalg.norm(vector)).astype(np.float32)


A, B = _unit(1), _unit(2)


def _voice(centre: np.ndarray, count: int, seed: int) -> np.ndarray:
    return np.stack([_unit(seed + i, centre, 0.03) for i in range(count)])


def test_a_summary_is_a_unit_centroid_with_exemplars_of_stretches_in_time() -> None:
    vectors = np.concatenate([_voice(A, 6, 10), _voice(B, 6, 20)])
    found = summarize(vectors, talk_ms=9000, exemplars=2)
    assert found.exemplars.shape == (2, DIM)
    assert abs(float(np.linalg.norm(found.centroid)) - 1) < 1e-5
    # The first stretch sounds like A, the second like B: both kept.
    assert float(found.exemplars[0] @ A) > 0.9
    assert float(found.exemplars[1] @ B) > 0.9
    with pytest.raises(ValueError, match="at least one"):
        summarize(np.zeros((0, DIM), np.float32), talk_ms=0)


def test_a_profile_weighs_its_sources_by_talk_time() -> None:
    long_a = summarize(_voice(A, 4, 30), talk_ms=60_000)
    short_b = summarize(_voice(B, 4, 40), talk_ms=1_000)
    profile = merge([long_a, short_b])
    assert profile.talk_ms == 61_000
    assert float(profile.centroid @ A) > float(profile.centroid @ B) + 0.5
    assert profile.exemplars.shape[0] == 8
    # Farthest-first: the exemplars span both voices heard.
    assert max(float(e @ B) for e in profile.exemplars) > 0.9


def test_similarity_is_high_for_the_same_voice_and_low_for_another() -> None:
    profile = merge([summarize(_voice(A, 5, 50), talk_ms=5000)])
    same = summarize(_voice(A, 5, 60), talk_ms=5000)
    other = summarize(_voice(B, 5, 70), talk_ms=5000)
    assert similarity(same, profile) > 0.9 > 0.3 > similarity(other, profile)


def test_assign_gives_one_profile_a_speaker_and_one_speaker_a_profile() -> None:
    scores = {("S1", "anna"): 0.9, ("S2", "anna"): 0.8, ("S2", "boris"): 0.7,
              ("S3", "anna"): 0.85, ("S3", "boris"): 0.65}
    matches = assign(scores, threshold=0.6)
    assert [(m.speaker, m.profile_id) for m in matches] == [("S1", "anna"), ("S2", "boris")]
    # More speakers than profiles: the rest stay unnamed (S3 above); below the threshold
    # nothing; a refused pair or a profile already a name on the record is never taken.
    assert assign(scores, threshold=0.95) == []
    refused = assign(scores, threshold=0.6, refused={("S1", "anna")})
    assert [(m.speaker, m.profile_id) for m in refused] == [("S2", "boris"), ("S3", "anna")]
    assert [(m.speaker, m.profile_id) for m in assign(scores, threshold=0.6,
                                                      taken={"anna"})] == [("S2", "boris")]


def _windows() -> VoiceWindows:
    # A at 0-10 s, B at 10-20 s: a 1.6-s window every 0.8 s.
    rows, vectors = [], []
    for n, start in enumerate(range(0, 20_000 - 1600, 800)):
        rows.append((start, start + 1600, 0))
        vectors.append(_unit(100 + n, A if start + 800 < 10_000 else B, 0.03))
    return VoiceWindows.of(rows, np.stack(vectors))


def test_prints_follow_the_lines_when_a_line_moves() -> None:
    windows = _windows()
    lines = [SpokenLine(speaker="S1", channel=0, start_ms=0, end_ms=10_000),
             SpokenLine(speaker="S2", channel=0, start_ms=10_000, end_ms=15_000),
             SpokenLine(speaker="S2", channel=0, start_ms=15_000, end_ms=20_000)]
    prints = speaker_prints(windows, lines)
    assert float(prints["S1"].centroid @ A) > 0.95
    assert float(prints["S2"].centroid @ B) > 0.95
    assert prints["S1"].talk_ms == 10_000
    # S2's last line moves to S1: S1's print now holds some of B.
    moved = [lines[0], lines[1], SpokenLine(speaker="S1", channel=0, start_ms=15_000,
                                            end_ms=20_000)]
    again = speaker_prints(windows, moved)
    assert again["S1"].talk_ms == 15_000
    assert float(again["S1"].centroid @ B) > float(prints["S1"].centroid @ B) + 0.2
    # All of S2's lines moved: S2 has no print left.
    everything = [SpokenLine(speaker="S1", channel=0, start_ms=0, end_ms=20_000)]
    assert set(speaker_prints(windows, everything)) == {"S1"}
    # A speaker with too little talk, or on another channel, has none.
    assert speaker_prints(windows, [SpokenLine(speaker="S1", channel=1, start_ms=0,
                                               end_ms=20_000)]) == {}
    assert speaker_prints(windows, [SpokenLine(speaker="S1", channel=0, start_ms=0,
                                               end_ms=1500)]) == {}


def test_the_byte_formats_round_trip_and_the_windows_are_bounded() -> None:
    windows = _windows()
    back = VoiceWindows.from_bytes(windows.to_bytes())
    assert np.array_equal(back.starts_ms, windows.starts_ms)
    assert np.array_equal(back.channels, windows.channels)
    assert np.abs(back.vectors - windows.vectors).max() < 1e-3  # float16
    bounded = windows.bounded(5)
    assert len(bounded) == 5
    assert bounded.starts_ms[0] == 0
    assert bounded.starts_ms[-1] == windows.starts_ms[-1]
    found = summarize(windows.vectors, talk_ms=20_000)
    again = VoicePrint.from_bytes(found.centroid_bytes(), found.exemplar_bytes(), 20_000)
    assert np.array_equal(again.centroid, found.centroid)
    assert np.array_equal(again.exemplars, found.exemplars)


def test_exports_mark_a_suggested_name_and_prefer_a_given_one() -> None:
    assert with_suggested_names({"S1": "Anna", "S3": " "}, {"S1": "Boris", "S2": "Clara",
                                                            "S3": "Dan"}) == {
        "S1": "Anna", "S2": "Clara (?)", "S3": "Dan (?)"}
