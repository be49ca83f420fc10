"""Utterance structure (v2, v1 still read) and the transcript formats (txt, srt, vtt, json)."""

from __future__ import annotations

from dataclasses import replace

import orjson
import pytest

from transcriber.domain.transcripts import (
    BadStructure,
    card_speakers,
    dump_structure,
    load_structure,
    plain_text,
    render,
    talk_ms,
)
from transcriber.ports import Utterance

UTTERANCES = [
    Utterance(start_ms=0, end_ms=1830, channel=0, text="Hello there."),
    Utterance(start_ms=3_723_004, end_ms=3_725_500, channel=1, text="General --> Kenobi"),
]


def test_structure_v2_round_trips() -> None:
    text = dump_structure(UTTERANCES)
    assert orjson.loads(text)["version"] == 3
    assert load_structure(text) == UTTERANCES
    labelled = [replace(u, speaker=f"S{i + 1}") for i, u in enumerate(UTTERANCES)]
    text = dump_structure(labelled)
    assert [u["speaker"] for u in orjson.loads(text)["utterances"]] == ["S1", "S2"]
    assert load_structure(text) == labelled


def test_version_1_structure_stays_readable() -> None:
    stored = (b'{"version": 1, "utterances": [{"start_ms": 0, "end_ms": 5, "channel": 0,'
              b' "text": "old"}]}')
    assert load_structure(stored) == [Utterance(start_ms=0, end_ms=5, channel=0, text="old")]


def test_talk_time_and_card_speakers() -> None:
    labelled = [
        Utterance(start_ms=0, end_ms=1000, channel=0, text="a", speaker="S2"),
        Utterance(start_ms=1000, end_ms=1500, channel=0, text="b", speaker="S10"),
        Utterance(start_ms=1500, end_ms=4000, channel=0, text="c", speaker="S2"),
        Utterance(start_ms=4000, end_ms=4100, channel=0, text="d"),
    ]
    assert talk_ms(labelled) == {"S2": 3500, "S10": 500}
    assert card_speakers(labelled, {"S10": "Anna", "S7": "gone"}) == {
        "S2": {"name": "", "talk_ms": 3500}, "S10": {"name": "Anna", "talk_ms": 500}}
    assert card_speakers(UTTERANCES, {}) == {}
    assert card_speakers(labelled[:1], {}, also=["S1", "S2"]) == {
        "S1": {"name": "", "talk_ms": 0}, "S2": {"name": "", "talk_ms": 1000}}


@pytest.mark.parametrize("bad", [b"nope", b'{"version": 4, "utterances": []}',
                                 b'{"version": 1, "utterances": [{"start_ms": 1}]}',
                                 b'{"version": 2, "utterances": [{"start_ms": 1, "end_ms": 2,'
                                 b' "text": "x", "speaker": "Anna"}]}'])
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
