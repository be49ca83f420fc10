"""Speakers in every export: TXT and SRT `Name: text`, WebVTT voice tags, JSON names,
the bot's reply, and moving a line to another speaker."""

from __future__ import annotations

import orjson
import pytest

from transcriber.domain.transcripts import (
    BadCorrection,
    apply_corrections,
    plain_text,
    render,
    reply_text,
)
from transcriber.ports import Utterance

TWO = [
    Utterance(start_ms=0, end_ms=1000, channel=0, text="Hello.", speaker="S1"),
    Utterance(start_ms=1000, end_ms=2500, channel=0, text="Hi <there> & you", speaker="S2"),
    Utterance(start_ms=2500, end_ms=3000, channel=0, text="Bye.", speaker="S1"),
]
NAMES = {"S1": "Anna"}


def test_txt_names_each_line_and_labels_the_unnamed() -> None:
    assert render(TWO, "txt", NAMES) == "Anna: Hello.\nS2: Hi <there> & you\nAnna: Bye.\n"
    # The stored (indexed) text stays the words alone.
    assert plain_text(TWO) == "Hello.\nHi <there> & you\nBye."


def test_one_unnamed_speaker_is_not_prefixed_but_a_named_one_is() -> None:
    one = [Utterance(start_ms=0, end_ms=5, channel=0, text="Alone.", speaker="S1")]
    assert render(one, "txt") == "Alone.\n"
    assert render(one, "txt", {"S1": "Vera"}) == "Vera: Alone.\n"
    assert reply_text(one, {"S1": "Vera"}) == "Alone."


def test_srt_cues_are_prefixed_with_the_name() -> None:
    srt = render(TWO, "srt", NAMES)
    assert "1\n00:00:00,000 --> 00:00:01,000\nAnna: Hello.\n" in srt
    assert "2\n00:00:01,000 --> 00:00:02,500\nS2: Hi <there> & you\n" in srt


def test_vtt_uses_voice_tags_with_escaped_names() -> None:
    vtt = render(TWO, "vtt", {"S1": "Anna <A&B>", "S2": "Boris"})
    assert "00:00:00.000 --> 00:00:01.000\n<v Anna &lt;A&amp;B&gt;>Hello.\n" in vtt
    # The cue text is escaped as much as the name: `<there>` opens no tag.
    assert "<v Boris>Hi &lt;there&gt; &amp; you\n" in vtt


def test_json_carries_speaker_and_speaker_name() -> None:
    data = orjson.loads(render(TWO, "json", NAMES))
    assert data["version"] == 3
    assert [(u["speaker"], u["speaker_name"]) for u in data["utterances"]] == [
        ("S1", "Anna"), ("S2", ""), ("S1", "Anna")]
    plain = orjson.loads(render([Utterance(start_ms=0, end_ms=1, channel=0, text="x")], "json"))
    assert "speaker_name" not in plain["utterances"][0]


def test_reply_names_speakers_only_when_there_are_several() -> None:
    assert reply_text(TWO, {"S2": "Boris"}) == "S1: Hello.\nBoris: Hi <there> & you\nS1: Bye."
    no_speakers = [Utterance(start_ms=0, end_ms=1, channel=0, text="Plain.")]
    assert reply_text(no_speakers) == "Plain."


def test_a_line_moves_to_another_speaker_of_the_record() -> None:
    moved = apply_corrections(TWO, [{"index": 1, "speaker": "S1"}], speakers={"S1", "S2"})
    assert [u.speaker for u in moved] == ["S1", "S1", "S1"]
    assert moved[1].text == TWO[1].text
    assert moved[1].start_ms == TWO[1].start_ms


@pytest.mark.parametrize("correction", [{"index": 0, "speaker": "S3"},
                                        {"index": 0, "speaker": 2},
                                        {"index": 0, "channel": 1}])
def test_a_speaker_the_record_lacks_is_refused(correction: dict[str, object]) -> None:
    with pytest.raises(BadCorrection):
        apply_corrections(TWO, [correction], speakers={"S1", "S2"})


LONG_TURN = [
    Utterance(start_ms=0, end_ms=9000, channel=0, speaker="S1", text=(
        "The first thing is the budget for next year. The second thing is the plan "
        "for hiring in the spring.")),
    Utterance(start_ms=9000, end_ms=10_000, channel=0, speaker="S1", text="And that is all."),
    Utterance(start_ms=10_500, end_ms=11_000, channel=0, speaker="S2", text="Thanks."),
]


def test_srt_names_a_speaker_on_the_first_cue_of_the_turn_only() -> None:
    srt = render(LONG_TURN, "srt", NAMES)
    texts = [" ".join(block.split("\n")[2:]) for block in srt.strip("\n").split("\n\n")]
    assert texts == ["Anna: The first thing is the budget for next year.",
                     "The second thing is the plan for hiring in the spring.",
                     "And that is all.",
                     "S2: Thanks."]


def test_vtt_gives_every_cue_of_the_turn_its_voice() -> None:
    vtt = render(LONG_TURN, "vtt", NAMES)
    voices = [line.split(">")[0] for line in vtt.split("\n") if line.startswith("<v ")]
    assert voices == ["<v Anna", "<v Anna", "<v Anna", "<v S2"]
