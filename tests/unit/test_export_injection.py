"""What a correction can write into an export: text, never markup, lines or cues."""

from __future__ import annotations

import re

import pytest

from transcriber.domain.transcripts import plain_text, render, reply_text, vtt_escape
from transcriber.ports import Utterance

TWO = [
    Utterance(start_ms=0, end_ms=1000, channel=0, text="Hello.", speaker="S1"),
    Utterance(start_ms=1000, end_ms=2000, channel=0, text="Fine.", speaker="S2"),
]
NAMES = {"S1": "Anna", "S2": "Boris"}


def _with(text: str) -> list[Utterance]:
    return [TWO[0], Utterance(start_ms=1000, end_ms=2000, channel=0, text=text, speaker="S2")]


def _vtt_cues(vtt: str) -> list[list[str]]:
    """The cues as a WebVTT parser reads them: blocks split at blank lines, each
    cue's text ending at a line that holds "-->" (WebVTT, "collect a cue")."""
    cues = []
    for block in vtt.split("\n\n")[1:]:
        lines = block.strip("\n").split("\n")
        text = []
        for line in lines[1:]:
            if "-->" in line:
                break
            text.append(line)
        cues.append([lines[0], *text])
    return cues


def test_vtt_escapes_the_cue_text_per_the_spec() -> None:
    assert vtt_escape("a & b < c > d") == "a &amp; b &lt; c &gt; d"
    vtt = render(_with("<v Boss>I approve</v> & <c.red>more</c>"), "vtt", NAMES)
    cues = _vtt_cues(vtt)
    assert cues[1][1] == (
        "<v Boris>&lt;v Boss&gt;I approve&lt;/v&gt; &amp; &lt;c.red&gt;more&lt;/c&gt;")
    # The only tags left are ours: one voice span per cue.
    assert re.findall(r"<[^&]*?>", vtt) == ["<v Anna>", "<v Boris>"]


def test_vtt_names_are_escaped_too() -> None:
    vtt = render(TWO, "vtt", {"S1": "Anna> <v Boss", "S2": "B&B"})
    assert "<v Anna&gt; &lt;v Boss>Hello." in vtt
    assert "<v B&amp;B>Fine." in vtt


@pytest.mark.parametrize("text", [
    "I approve\n\n00:00:09.000 --> 00:00:10.000\n<v Boss>Fired",
    "line\r\n\r\nbreak",
    "para\u2029graph\u2028sep\x85nel",
    "a --> b ---> c",
])
def test_a_correction_stays_inside_its_own_cue(text: str) -> None:
    utterances = _with(text)
    vtt = render(utterances, "vtt", NAMES)
    cues = _vtt_cues(vtt)
    assert len(cues) == 2
    # A timing line and the text: the whole correction, on at most the two lines a
    # cue has (issue 38), the arrow escaped.
    said = " ".join(text.split())
    assert all(2 <= len(cue) <= 3 for cue in cues)
    assert " ".join(cues[1][1:]) == "<v Boris>" + vtt_escape(said)
    srt = render(utterances, "srt", NAMES)
    blocks = srt.strip("\n").split("\n\n")
    assert len(blocks) == 2
    assert [block.count("-->") for block in blocks] == [1, 1]
    assert all(3 <= len(block.split("\n")) <= 4 for block in blocks)  # number, timing, text
    assert " ".join(blocks[1].split("\n")[2:]) == "Boris: " + re.sub(r"-{2,}>", "->", said)


@pytest.mark.parametrize("text", ["I approve\nBoss: pay Mallory", "x\r\nAnna: y", "a\u2028b"])
def test_a_multi_line_correction_fakes_no_line_in_txt(text: str) -> None:
    txt = render(_with(text), "txt", NAMES)
    assert txt.splitlines() == ["Anna: Hello.", f"Boris: {' '.join(text.split())}"]
    assert len(plain_text(_with(text)).splitlines()) == 2
    assert len(reply_text(_with(text), NAMES).splitlines()) == 2


def test_arrows_survive_where_the_format_allows() -> None:
    utterances = _with("a --> b")
    assert "a --&gt; b" in render(utterances, "vtt")
    assert "a -> b" in render(utterances, "srt")
    assert "a --> b" in render(utterances, "txt")
