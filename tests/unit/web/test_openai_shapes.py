"""OpenAI's speech-to-text shapes: the form's fields, and the answers as OpenAI words them."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from transcriber.domain.languages import LANGUAGE_NAMES, language_name
from transcriber.domain.shapes import plain
from transcriber.ports import Utterance, Word
from transcriber.providers.recognizers import WHISPER_LANGUAGES
from transcriber.web.errors import ApiError, openai_error_body
from transcriber.web.openai_shapes import (
    Transcribed,
    TranscriptionRequest,
    parse_form,
    transcription_body,
)

DONE = Transcribed(
    utterances=(Utterance(start_ms=0, end_ms=1500, channel=0, text="Hello there.", speaker="S1"),
                Utterance(start_ms=1500, end_ms=3250, channel=0, text="Line\nbreak",
                          speaker="S2")),
    speaker_names={"S1": "Anna"}, language="ru", duration_ms=3300)


def _json(answer: tuple[str, object]) -> tuple[str, Any]:
    """The answer as its JSON reads (a shape as JSON values; text as it is)."""
    content_type, body = answer
    return content_type, body if isinstance(body, str) else plain(body)


def _request(fmt: str = "json", granularities: tuple[str, ...] = ()) -> TranscriptionRequest:
    return parse_form({"response_format": [fmt],
                       "timestamp_granularities[]": list(granularities)})


def test_the_defaults_and_what_is_accepted_whatever_it_says() -> None:
    parsed = parse_form({"model": ["whisper-1"], "prompt": ["ignored"], "temperature": ["0.2"]})
    assert parsed == TranscriptionRequest(model="whisper-1", language=None,
                                          response_format="json", granularities=())
    assert parse_form({"language": [" ru "], "stream": ["false"]}).language == "ru"
    assert parse_form({"timestamp_granularities": ["word"]}).granularities == ("word",)
    assert parse_form({"stream": ["true"]}).stream
    assert parse_form({"stream": ["true"], "response_format": ["text"]}).stream


@pytest.mark.parametrize(("fields", "param"), [
    ({"response_format": ["docx"]}, "response_format"),
    ({"timestamp_granularities[]": ["char"]}, "timestamp_granularities"),
    ({"stream": ["true"], "response_format": ["srt"]}, "stream"),
    ({"language": ["en", "ru"]}, "language"),
])
def test_refusals_name_the_field(fields: dict[str, list[str]], param: str) -> None:
    with pytest.raises(ApiError) as refused:
        parse_form(fields)
    assert (refused.value.status, refused.value.param) == (400, param)


def test_json_is_the_text_in_one_paragraph() -> None:
    assert _json(transcription_body(DONE, _request())) == (
        "application/json", {"text": "Hello there. Line break"})
    assert transcription_body(DONE, _request("text")) == (
        "text/plain", "Hello there. Line break\n")


def test_verbose_json_fills_what_is_not_known_with_neutral_values() -> None:
    _, body = _json(transcription_body(DONE, _request("verbose_json")))
    assert body == {
        "task": "transcribe", "language": "russian", "duration": 3.3,
        "text": "Hello there. Line break",
        "segments": [
            {"id": 0, "seek": 0, "start": 0.0, "end": 1.5, "text": "Hello there.",
             "tokens": [], "temperature": 0.0, "avg_logprob": 0.0, "compression_ratio": 0.0,
             "no_speech_prob": 0.0},
            {"id": 1, "seek": 0, "start": 1.5, "end": 3.25, "text": "Line break",
             "tokens": [], "temperature": 0.0, "avg_logprob": 0.0, "compression_ratio": 0.0,
             "no_speech_prob": 0.0},
        ],
        "quality": None,
    }
    _, with_words = _json(transcription_body(DONE, _request("verbose_json", ("word",))))
    assert isinstance(with_words, dict)
    assert with_words["words"] == []  # never invented from the utterances' times


def test_verbose_json_carries_the_stored_words_and_the_quality_report() -> None:
    words = (Word(start_ms=0, end_ms=500, text=" Hello", probability=0.9),
             Word(start_ms=500, end_ms=1500, text=" there.", probability=0.3))
    report = {"verdict": "check", "reasons": ["low_confidence"], "speech_seconds": 1.5,
              "unclear_seconds": 0.0, "unclear_spans": [], "repeats_removed": 0,
              "low_confidence_share": 0.5, "model": "whisper-base"}
    done = dataclasses.replace(DONE, utterances=(
        dataclasses.replace(DONE.utterances[0], words=words), *DONE.utterances[1:]),
        quality=report)
    _, body = _json(transcription_body(done, _request("verbose_json", ("word",))))
    assert isinstance(body, dict)
    assert body["words"] == [{"word": " Hello", "start": 0.0, "end": 0.5},
                             {"word": " there.", "start": 0.5, "end": 1.5}]
    assert body["quality"] == report


def test_subtitles_are_the_archives_exports_with_speakers_named() -> None:
    _, srt = transcription_body(DONE, _request("srt"))
    assert isinstance(srt, str)
    assert srt.startswith("1\n00:00:00,000 --> 00:00:01,500\nAnna: Hello there.\n")
    _, vtt = transcription_body(DONE, _request("vtt"))
    assert isinstance(vtt, str)
    assert vtt.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:01.500\n<v Anna>Hello there.")


def test_subtitles_are_cut_into_subtitle_grade_cues() -> None:
    said = ("We met on Monday to talk about the budget. Then we went through the plan "
            "for the spring, one team at a time, and agreed on the dates.")
    long = Transcribed(utterances=(Utterance(start_ms=0, end_ms=20_000, channel=0,
                                             text=said),),
                       speaker_names={}, language="en", duration_ms=20_000)
    _, srt = transcription_body(long, _request("srt"))
    assert isinstance(srt, str)
    blocks = srt.strip("\n").split("\n\n")
    assert blocks[0] == ("1\n00:00:00,000 --> 00:00:06,415\n"
                         "We met on Monday to talk about the budget.")
    assert len(blocks) == 3
    _, vtt = transcription_body(long, _request("vtt"))
    assert isinstance(vtt, str)
    assert vtt.count(" --> ") == 3


def test_language_names_are_whispers_for_every_code() -> None:
    assert set(LANGUAGE_NAMES) == set(WHISPER_LANGUAGES)
    assert (language_name("en"), language_name("RU"), language_name("auto")) == (
        "english", "russian", "auto")


def test_errors_take_openais_shape() -> None:
    assert plain(openai_error_body(401, "unauthorized", "no")) == {"error": {
        "message": "no", "type": "invalid_request_error", "param": None,
        "code": "invalid_api_key"}}
    assert plain(openai_error_body(504, "timeout", "later", record_id="r")) == {
        "error": {"message": "later", "type": "server_error", "param": None,
                  "code": "timeout", "record_id": "r"}}


def test_txt_is_text_and_an_empty_language_is_none() -> None:
    """LocalAI spells the text format `txt`; some clients send `language=""` (a peer
    crashed on it): detected, as when no language is sent."""
    assert parse_form({"response_format": ["txt"]}).response_format == "text"
    assert parse_form({"language": [""]}).language is None
    assert parse_form({"language": ["  "]}).language is None
    assert _json(transcription_body(DONE, _request("txt"))) == (
        "text/plain", "Hello there. Line break\n")


def test_diarized_json_names_the_speakers_as_the_card_does() -> None:
    assert _json(transcription_body(DONE, _request("diarized_json"))) == (
        "application/json", {
            "task": "transcribe", "duration": 3.3, "text": "Hello there. Line break",
            "segments": [
                {"type": "transcript.text.segment", "id": "seg_0", "start": 0.0, "end": 1.5,
                 "text": "Hello there.", "speaker": "Anna"},
                {"type": "transcript.text.segment", "id": "seg_1", "start": 1.5,
                 "end": 3.25, "text": "Line break", "speaker": "S2"}]})
    unnamed = dataclasses.replace(DONE, utterances=tuple(
        dataclasses.replace(u, speaker=None) for u in DONE.utterances))
    _, body = _json(transcription_body(unnamed, _request("diarized_json")))
    assert [s["speaker"] for s in body["segments"]] == ["S1", "S1"]
