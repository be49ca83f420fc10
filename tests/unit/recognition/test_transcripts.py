"""Utterance structure v1 and the transcript formats (txt, srt, vtt, json)."""

from __future__ import annotations

import orjson
import pytest

from transcriber.ports import Utterance
from transcriber.transcripts import (
    BadStructure,
    dump_structure,
    load_structure,
    plain_text,
    render,
)

UTTERANCES = [
    Utterance(start_ms=0, end_ms=1830, channel=0, text="Hello there."),
    Utterance(start_ms=3_723_004, end_ms=3_725_500, channel=1, text="General --> Kenobi"),
]


def test_structure_v1_round_trips() -> None:
    text = dump_structure(UTTERANCES)
    assert orjson.loads(text)["version"] == 1
    assert load_structure(text) == UTTERANCES


@pytest.mark.parametrize("bad", [b"nope", b'{"version": 2, "utterances": []}',
                                 b'{"version": 1, "utterances": [{"start_ms": 1}]}'])
def test_bad_structure_is_refused(bad: bytes) -> None:
    with pytest.raises(BadStructure):
        load_structure(bad)


def test_txt_is_one_utterance_per_line() -> None:
    assert plain_text(UTTERANCES) == "Hello there.\nGeneral --> Kenobi"
    assert render(UTTERANCES, "txt").endswith("Kenobi\n")
    assert render([], "txt") == ""


def test_srt_numbers_cues_and_uses_commas() -> None:
    srt = render(UTTERANCES, "srt")
    assert srt.startswith("1\n00:00:00,000 --> 00:00:01,830\nHello there.\n")
    assert "2\n01:02:03,004 --> 01:02:05,500\nGeneral -> Kenobi\n" in srt


def test_vtt_has_header_and_dots() -> None:
    vtt = render(UTTERANCES, "vtt")
    assert vtt.startswith("WEBVTT\n\n00:00:00.000 --> 00:00:01.830\nHello there.\n")
    assert "01:02:03.004 --> 01:02:05.500" in vtt


def test_json_format_is_the_structure() -> None:
    assert load_structure(render(UTTERANCES, "json")) == UTTERANCES


def test_empty_utterances_make_no_cues() -> None:
    blank = [Utterance(start_ms=0, end_ms=10, channel=0, text="  ")]
    assert render(blank, "srt") == ""
    assert render(blank, "vtt") == "WEBVTT\n"
