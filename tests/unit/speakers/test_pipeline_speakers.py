"""When a record's speakers are told apart (by the recognizer's `SpeakerLabels`); the
answers' words and speech on the record's timeline."""

from __future__ import annotations

import orjson
import pytest

from transcriber.core.errors import PermanentFailure
from transcriber.pipeline.parts import PartPlan, join
from transcriber.pipeline.speakers import (
    segments_of,
    speakers_apply,
    speakers_found_locally,
    speech_of,
)
from transcriber.ports import Answer, Segment, Span, SpeakerLabels, Word
from transcriber.providers.whisper_answer import read_local_payload
from transcriber.providers.whisper_decoding import segment_dict

WORDS, OWN, NONE = SpeakerLabels.WORDS, SpeakerLabels.OWN, SpeakerLabels.NONE


@pytest.mark.parametrize(("mode", "speakers", "duration_ms", "labels", "applies"), [
    ("auto", None, 60_000, WORDS, True),
    ("auto", None, 9_999, WORDS, False),   # a short voice note: one person
    ("on", None, 2_000, WORDS, True),
    ("on", 1, 60_000, WORDS, False),       # the uploader said one speaker
    ("auto", 3, 60_000, WORDS, True),
    ("off", 2, 60_000, WORDS, False),
    ("on", None, 60_000, OWN, True),       # the recognizer's own speaker labeling
    ("auto", 1, 60_000, OWN, False),
    ("auto", None, 5_000, OWN, False),
    ("on", None, 60_000, NONE, False),     # a recognizer that cannot tell speakers apart
])
def test_speakers_apply(mode: str, speakers: int | None, duration_ms: int,
                        labels: SpeakerLabels, applies: bool) -> None:
    assert speakers_apply(mode, speakers=speakers, duration_ms=duration_ms,
                          labels=labels) is applies


@pytest.mark.parametrize(("channels", "labels", "overlap_ms", "speakers", "found"), [
    (1, {WORDS}, 0, None, True),
    (1, {WORDS}, 0, 3, True),
    (2, {WORDS}, 0, None, False),        # a stereo call: its channels are its speakers
    (1, {WORDS}, 5_000, None, False),    # overlapping parts: words stitched, not joined
    (1, {WORDS, OWN}, 0, None, False),   # parts answered by another recognizer
    (1, {OWN}, 0, None, False),          # a recognizer that labels its own speakers
    (1, {NONE}, 0, None, False),
    (1, {WORDS}, 0, 1, False),           # the uploader said one speaker
])
def test_speakers_found_locally(channels: int, labels: set[SpeakerLabels], overlap_ms: int,
                                speakers: int | None, found: bool) -> None:
    assert speakers_found_locally("auto", speakers=speakers, duration_ms=60_000,
                                  channels=channels, labels=labels,
                                  overlap_ms=overlap_ms) is found
    assert not speakers_found_locally("off", speakers=speakers, duration_ms=60_000,
                                      channels=channels, labels=labels,
                                      overlap_ms=overlap_ms)


def _answer(*segments: dict[str, object]) -> bytes:
    return orjson.dumps({"segments": list(segments)})


def test_segments_are_the_joined_utterances_with_their_words() -> None:
    first = PartPlan(index=0, offset_ms=0, length_ms=10_000)
    second = PartPlan(index=1, offset_ms=10_000, length_ms=5_000)
    parts = [
        (second, _answer({"start_ms": 100, "end_ms": 9_000, "text": " late ",
                          "words": [{"start_ms": 100, "end_ms": 600, "text": " late"}]})),
        (first, _answer({"start_ms": 0, "end_ms": 900, "text": "Hi there",
                         "words": [{"start_ms": 0, "end_ms": 400, "text": " Hi"},
                                   {"start_ms": 400, "end_ms": 900, "text": " there"}]},
                        {"start_ms": 950, "end_ms": 990, "text": "  "})),
    ]
    joined = join([(plan, read_local_payload(payload).utterances) for plan, payload in parts])
    assert segments_of(joined) == [
        Segment(start_ms=0, end_ms=900, text="Hi there",
                words=(Word(start_ms=0, end_ms=400, text=" Hi"),
                       Word(start_ms=400, end_ms=900, text=" there"))),
        # Held inside its part's span, as `parts.join` holds the utterance.
        Segment(start_ms=10_100, end_ms=15_000, text="late",
                words=(Word(start_ms=10_100, end_ms=10_600, text=" late"),)),
    ]


def test_an_answer_without_words_gives_wordless_segments() -> None:
    plan = PartPlan(index=0, offset_ms=0, length_ms=5_000)
    answer = read_local_payload(_answer({"start_ms": 1, "end_ms": 2, "text": "x"}))
    assert segments_of(join([(plan, answer.utterances)])) == [
        Segment(start_ms=1, end_ms=2, text="x")]
    with pytest.raises(PermanentFailure, match="malformed"):
        read_local_payload(b'{"no": 1}')


def _speech(*pairs: object) -> Answer:
    return read_local_payload(orjson.dumps({"segments": [], "speech": list(pairs)}))


def test_speech_regions_move_with_their_part_and_stay_inside_it() -> None:
    first = PartPlan(index=0, offset_ms=0, length_ms=10_000)
    second = PartPlan(index=1, offset_ms=10_000, length_ms=5_000)
    parts = [
        (second, _speech([0, 1_200], [4_000, 6_500])),
        (first, _speech([300, 2_000], [9_900, 9_900])),
    ]
    assert speech_of(parts) == [
        Span(start_ms=300, end_ms=2_000),           # the empty one is dropped
        Span(start_ms=10_000, end_ms=11_200),
        Span(start_ms=14_000, end_ms=15_000),       # held inside its part's span
    ]


def test_speech_regions_are_missing_when_any_part_lacks_them() -> None:
    plan = PartPlan(index=0, offset_ms=0, length_ms=5_000)
    later = PartPlan(index=1, offset_ms=5_000, length_ms=5_000)
    # Sequential decoding, another recognizer, or an answer saved before the regions
    # were kept: the speaker engine runs its own VAD over the whole record.
    assert speech_of([(plan, _speech([0, 10])),
                      (later, read_local_payload(_answer()))]) is None
    assert speech_of([(plan, _speech())]) == []
    # One malformed pair is skipped, the rest kept.
    assert speech_of([(plan, _speech([1], [0, 10]))]) == [Span(start_ms=0, end_ms=10)]
    with pytest.raises(PermanentFailure, match="malformed"):
        read_local_payload(b"[]")


class _W:
    def __init__(self, start: float, end: float, word: str) -> None:
        self.start, self.end, self.word = start, end, word


class _S:
    def __init__(self, words: list[_W] | None) -> None:
        self.start, self.end, self.text, self.words = 0.5, 1.25, " Hello you ", words


def test_whisper_segment_keeps_word_times_only_when_asked() -> None:
    assert segment_dict(_S(None)) == {"start_ms": 500, "end_ms": 1250, "text": "Hello you"}
    assert segment_dict(_S([_W(0.5, 0.8, " Hello"), _W(0.8, 1.25, " you")]))["words"] == [
        {"start_ms": 500, "end_ms": 800, "text": " Hello"},
        {"start_ms": 800, "end_ms": 1250, "text": " you"}]
