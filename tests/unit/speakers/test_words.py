"""Word-level speaker assignment, utterance splitting, labels and talk time."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from transcriber.ports import Segment, Turn, Word
from transcriber.providers.speakers.words import (
    LabelledUtterance,
    speaker_of,
    split_by_speaker,
    talk_time,
)


def _words(*spans: tuple[int, int, str]) -> tuple[Word, ...]:
    return tuple(Word(start_ms=s, end_ms=e, text=t) for s, e, t in spans)


def _bare(utterances: Sequence[LabelledUtterance]) -> list[LabelledUtterance]:
    """Without their words (carried along: `test_each_run_keeps_its_words`)."""
    return [dataclasses.replace(u, words=()) for u in utterances]


def _turns(*spans: tuple[int, int, int]) -> list[Turn]:
    return [Turn(start_ms=s, end_ms=e, speaker=k) for s, e, k in spans]


def test_a_word_takes_the_speaker_it_overlaps_most() -> None:
    turns = _turns((0, 1000, 4), (1000, 2000, 7))
    starts = [t.start_ms for t in turns]
    assert speaker_of(Word(start_ms=800, end_ms=1300, text=" a"), turns, starts) == 7
    assert speaker_of(Word(start_ms=700, end_ms=1100, text=" a"), turns, starts) == 4


def test_a_word_outside_every_turn_takes_the_nearest() -> None:
    turns = _turns((0, 1000, 0), (3000, 4000, 1))
    starts = [t.start_ms for t in turns]
    assert speaker_of(Word(start_ms=1200, end_ms=1400, text=" a"), turns, starts) == 0
    assert speaker_of(Word(start_ms=2600, end_ms=2800, text=" b"), turns, starts) == 1
    assert speaker_of(Word(start_ms=5000, end_ms=5100, text=" c"), turns, starts) == 1
    assert speaker_of(Word(start_ms=0, end_ms=1, text=" d"), [], []) is None


def test_a_segment_spanning_three_turns_is_split_in_three() -> None:
    # Whisper merged "Hello there. Hi. How are you?" of two people into one segment.
    segment = Segment(
        start_ms=0,
        end_ms=3000,
        text="",
        words=_words(
            (0, 400, " Hello"),
            (400, 900, " there."),
            (1100, 1400, " Hi."),
            (1700, 2000, " How"),
            (2000, 2300, " are"),
            (2300, 2900, " you?"),
        ),
    )
    turns = _turns((0, 1000, 1), (1000, 1600, 0), (1600, 3000, 1))
    assert _bare(split_by_speaker([segment], turns)) == [
        LabelledUtterance(start_ms=0, end_ms=900, text="Hello there.", speaker="S1"),
        LabelledUtterance(start_ms=1100, end_ms=1400, text="Hi.", speaker="S2"),
        LabelledUtterance(start_ms=1700, end_ms=3000, text="How are you?", speaker="S1"),
    ]


def test_a_segment_of_one_speaker_keeps_its_own_bounds() -> None:
    segment = Segment(
        start_ms=0, end_ms=1500, text="", words=_words((100, 600, " One"), (700, 1400, " two."))
    )
    assert _bare(split_by_speaker([segment], _turns((0, 2000, 3)))) == [
        LabelledUtterance(start_ms=0, end_ms=1500, text="One two.", speaker="S1")
    ]


def test_labels_follow_first_appearance_not_cluster_numbers() -> None:
    segments = [
        Segment(
            start_ms=i * 1000,
            end_ms=i * 1000 + 900,
            text="",
            words=_words((i * 1000, i * 1000 + 900, f" w{i}")),
        )
        for i in range(4)
    ]
    turns = _turns((0, 1000, 2), (1000, 2000, 0), (2000, 3000, 2), (3000, 4000, 1))
    assert [u.speaker for u in split_by_speaker(segments, turns)] == ["S1", "S2", "S1", "S3"]


def test_a_segment_without_words_takes_its_overlap_and_no_turns_means_one_speaker() -> None:
    bare = Segment(start_ms=1200, end_ms=1800, text=" No.")
    with_words = Segment(start_ms=0, end_ms=900, text=" Yes.", words=_words((0, 900, " Yes.")))
    turns = _turns((0, 1000, 0), (1000, 2000, 1))
    assert _bare(split_by_speaker([with_words, bare], turns)) == [
        LabelledUtterance(start_ms=0, end_ms=900, text="Yes.", speaker="S1"),
        LabelledUtterance(start_ms=1200, end_ms=1800, text="No.", speaker="S2"),
    ]
    assert [u.speaker for u in split_by_speaker([with_words, bare], [])] == ["S1", "S1"]


def test_empty_words_leave_no_empty_utterances() -> None:
    segment = Segment(
        start_ms=0, end_ms=2000, text="", words=_words((0, 500, " Ok."), (1200, 1300, " "))
    )
    result = split_by_speaker([segment], _turns((0, 1000, 0), (1000, 2000, 1)))
    assert [u.text for u in result] == ["Ok."]


def test_talk_time_sums_each_speakers_utterances_in_label_order() -> None:
    utterances = [
        LabelledUtterance(start_ms=0, end_ms=900, text="a", speaker="S1"),
        LabelledUtterance(start_ms=1000, end_ms=1300, text="b", speaker="S2"),
        LabelledUtterance(start_ms=1300, end_ms=2000, text="c", speaker="S10"),
        LabelledUtterance(start_ms=2000, end_ms=2500, text="d", speaker="S1"),
    ]
    assert talk_time(utterances) == {"S1": 1400, "S2": 300, "S10": 700}
    assert list(talk_time(utterances)) == ["S1", "S2", "S10"]
    assert talk_time([]) == {}


def test_each_run_keeps_its_words_with_their_probability() -> None:
    words = (Word(start_ms=0, end_ms=400, text=" Hello", probability=0.9),
             Word(start_ms=1100, end_ms=1400, text=" Hi.", probability=0.2))
    segment = Segment(start_ms=0, end_ms=1500, text="", words=words)
    bare = Segment(start_ms=2000, end_ms=2500, text=" No.")
    found = split_by_speaker([segment, bare], _turns((0, 1000, 0), (1000, 3000, 1)))
    assert [u.words for u in found] == [words[:1], words[1:], ()]
