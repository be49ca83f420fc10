"""`stream=true`'s deltas in the final transcript's order: a stereo call's spans, each
channel's part on the record's timeline, both channels merged by time."""

from __future__ import annotations

from transcriber.db.reads.recognitions import Recognition
from transcriber.domain.transcripts import Utterance
from transcriber.web.openai_stream import in_time_order, spans


def _row(index: int, offset_ms: int, channel: int | None) -> Recognition:
    return Recognition(id=f"r{index}", record_id="rec", part_index=index, offset_ms=offset_ms,
                       provider="fake", model="fake", external_id=None, source_uri=None,
                       payload_file=None, started_at=None, finished_at=None, channel=channel)


def _said(start_ms: int, end_ms: int, text: str) -> Utterance:
    return Utterance(start_ms=start_ms, end_ms=end_ms, channel=0, text=text)


def test_a_stereo_calls_parts_group_into_spans_in_time_order() -> None:
    rows = [_row(3, 5000, 1), _row(0, 0, 0), _row(2, 5000, 0), _row(1, 0, 1)]
    assert [[r.part_index for r in span] for span in spans(rows)] == [[0, 1], [2, 3]]
    mono = [_row(1, 4000, None), _row(0, 0, None)]
    assert [[r.part_index for r in span] for span in spans(mono)] == [[0], [1]]


def test_both_channels_merge_by_time_each_with_its_channel() -> None:
    left, right = _row(2, 5000, 0), _row(3, 5000, 1)
    merged = in_time_order([(left, [_said(0, 900, "a"), _said(2000, 2500, "c")]),
                            (right, [_said(1000, 1800, "b")])], high_ms=None)
    assert [(u.text, u.channel, u.start_ms) for u in merged] == [
        ("a", 0, 5000), ("b", 1, 6000), ("c", 0, 7000)]


def test_times_past_the_span_hold_at_its_end_and_ties_go_channel_first() -> None:
    left, right = _row(0, 0, 0), _row(1, 0, 1)
    merged = in_time_order([(right, [_said(300, 600, "right")]),
                            (left, [_said(100, 200, "left"), _said(900, 1200, "late")])],
                           high_ms=300)
    # "late" and "right" both hold at 300 ms: the left channel first, as the
    # transcript's merge orders a tie.
    assert [(u.text, u.start_ms) for u in merged] == [("left", 100), ("late", 300),
                                                       ("right", 300)]


def test_speechkits_stereo_keeps_the_channel_its_answer_names() -> None:
    whole = _row(0, 0, None)
    merged = in_time_order([(whole, [Utterance(start_ms=500, end_ms=900, channel=1, text="b"),
                                     Utterance(start_ms=0, end_ms=400, channel=0, text="a")])],
                           high_ms=None)
    assert [(u.text, u.channel) for u in merged] == [("a", 0), ("b", 1)]
