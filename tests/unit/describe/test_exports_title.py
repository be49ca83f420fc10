"""Exports carry the record's title, each as its format has a place for one; the Telegram
reply's heading."""

from __future__ import annotations

import orjson

from transcriber.bot import rules
from transcriber.domain.transcripts import load_structure, render
from transcriber.ports import Utterance

SAID = [Utterance(start_ms=1500, end_ms=3000, channel=0, text="We ship on Tuesday."),
        Utterance(start_ms=3100, end_ms=4000, channel=0, text="Agreed.")]


def test_txt_starts_with_the_title_and_a_blank_line() -> None:
    assert render(SAID, "txt", title="Release plan") == (
        "Release plan\n\nWe ship on Tuesday.\nAgreed.\n")
    assert render(SAID, "txt") == "We ship on Tuesday.\nAgreed.\n"


def test_srt_has_no_title_cue() -> None:
    # SRT has no comments, and a title cue is shown as if said (issue 38).
    srt = render(SAID, "srt", title="Release --> plan")
    assert srt == render(SAID, "srt")
    assert srt.startswith("1\n00:00:01,500 --> 00:00:03,000\nWe ship on Tuesday.\n")
    assert "Release" not in srt


def test_vtt_keeps_the_title_in_a_note() -> None:
    vtt = render(SAID, "vtt", title="Release --> plan")
    assert vtt.startswith("WEBVTT\n\nNOTE Release -> plan\n\n00:00:01.500 --> ")
    assert "NOTE" not in render(SAID, "vtt")


def test_json_has_a_title_and_stays_a_readable_structure() -> None:
    body = render(SAID, "json", title="Release plan")
    assert orjson.loads(body)["title"] == "Release plan"
    assert load_structure(body) == SAID
    assert orjson.loads(render(SAID, "json"))["title"] == ""


def test_a_reply_starts_with_its_heading_and_a_caption_fits() -> None:
    head = rules.heading("Release plan", "We ship on Tuesday.")
    assert rules.with_heading(head, "transcript") == (
        "Release plan\nWe ship on Tuesday.\n\ntranscript")
    assert rules.with_heading("", "transcript") == "transcript"
    caption = rules.caption("T" * 2000, "attached as a file")
    assert rules.utf16_units(caption) <= rules.CAPTION_MAX_UNITS
    assert caption.endswith("attached as a file")
