"""SpeechKit's speaker labeling: what the request carries, how the answer's tags map."""

from __future__ import annotations

import orjson
import pytest

from transcriber.core.errors import PermanentFailure
from transcriber.ports import Utterance
from transcriber.providers.quota import CallBudget
from transcriber.providers.speechkit import (
    LabelingRefused,
    SpeechkitRecognizer,
    classify_http_error,
    parse_results,
    with_tag_speakers,
)
from transcriber.settings import Secret, SpeechkitSettings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_speechkit import opus_channels


def _recognizer() -> SpeechkitRecognizer:
    return SpeechkitRecognizer(SpeechkitSettings(api_key=Secret("k")),
                               budget=CallBudget(limit=10, window_seconds=3600,
                                                 clock=FakeClock()))


def test_the_request_asks_for_speaker_labeling_only_when_speakers_are_wanted() -> None:
    recognizer = _recognizer()
    wanted = recognizer.request_body("s3://b/k", "ru", speakers=True)
    assert wanted["speakerLabeling"] == {"speakerLabeling": "SPEAKER_LABELING_ENABLED"}
    # Labeling is offered in FULL_DATA mode only: the request keeps it.
    assert wanted["recognitionModel"]["audioProcessingType"] == "FULL_DATA"
    assert "speakerLabeling" not in recognizer.request_body("s3://b/k", "ru")


def _line(tag: str, index: int, text: str, start: int, end: int) -> dict[str, object]:
    alternative = {"text": text, "startTimeMs": str(start), "endTimeMs": str(end)}
    return {"result": {"channelTag": tag, "audioCursors": {"finalIndex": str(index)},
                       "final": {"alternatives": [alternative], "channelTag": tag}}}


def test_labelled_answer_gives_each_tag_its_speaker() -> None:
    payload = b"\n".join(orjson.dumps(line) for line in [
        _line("1", 0, "second voice speaks first", 0, 900),
        _line("0", 0, "first voice", 1000, 2000),
        _line("1", 1, "second again", 2100, 3000),
    ])
    assert [(u.speaker, u.text) for u in parse_results(payload)] == [
        ("S2", "second voice speaks first"), ("S1", "first voice"), ("S2", "second again")]


def test_one_tag_only_tells_no_speakers_apart() -> None:
    payload = b"\n".join(orjson.dumps(line) for line in [
        _line("0", 0, "one", 0, 900), _line("0", 1, "voice", 1000, 2000)])
    assert [u.speaker for u in parse_results(payload)] == [None, None]
    assert with_tag_speakers([]) == []


def test_tags_map_to_speakers_in_pure_form() -> None:
    utterances = [Utterance(start_ms=0, end_ms=1, channel=0, text="a"),
                  Utterance(start_ms=2, end_ms=3, channel=1, text="b")]
    assert [u.speaker for u in with_tag_speakers(utterances)] == ["S1", "S2"]


@pytest.mark.parametrize("message", [
    "speaker labeling is only for mono-channel audio files",
    "Speaker labeling is not supported for this model",
])
def test_a_refused_labeling_is_its_own_kind(message: str) -> None:
    body = orjson.dumps({"error": {"code": 3, "message": message}})
    failure = classify_http_error(400, body, call="recognizeFileAsync")
    assert isinstance(failure, LabelingRefused)
    assert message not in failure.reason  # SpeechKit's prose is never kept


def test_other_invalid_arguments_are_not_a_labeling_refusal() -> None:
    body = orjson.dumps({"error": {"code": 3, "message": "audio is not OggOpus"}})
    failure = classify_http_error(400, body, call="recognizeFileAsync")
    assert isinstance(failure, PermanentFailure)
    assert not isinstance(failure, LabelingRefused)


def test_the_fake_reads_the_channel_count_from_opus_head() -> None:
    head = b"OggS" + b"\0" * 24 + b"OpusHead\x01\x02\x38\x01"
    assert opus_channels(head) == 2
    assert opus_channels(head.replace(b"\x01\x02", b"\x01\x01")) == 1
    assert opus_channels(b"OggS no head") is None
