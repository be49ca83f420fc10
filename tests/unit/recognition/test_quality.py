"""The quality report: the pure verdict, its stored form, and the unclear spans placed
on the record's timeline from the parts' saved answers."""

from __future__ import annotations

import dataclasses

import orjson
import pytest

from transcriber.domain.quality import (
    MAX_SPANS,
    assess,
    low_confidence_share,
    merged,
    quality_from_json,
    verdict_of,
)
from transcriber.domain.transcripts import apply_corrections, dump_structure, load_structure
from transcriber.pipeline.assessment import repeats_of, report_of, unclear_of
from transcriber.pipeline.parts import PartPlan, join
from transcriber.pipeline.speakers import speech_of
from transcriber.ports import Answer, Span, Utterance, Word
from transcriber.providers.speechkit import read_results
from transcriber.providers.whisper_answer import parse_local_payload, read_local_payload


def _said(start: int, end: int, text: str = "words",
          probabilities: tuple[float | None, ...] = ()) -> Utterance:
    words = tuple(Word(start_ms=start, end_ms=end, text=f" w{i}", probability=p)
                  for i, p in enumerate(probabilities))
    return Utterance(start_ms=start, end_ms=end, channel=0, text=text, words=words)


@pytest.mark.parametrize(("numbers", "verdict", "reasons"), [
    ({"speech_ms": 60_000, "unclear_ms": 1_200}, "good", ()),           # 2 %: still good
    ({"speech_ms": 60_000, "unclear_ms": 1_300}, "check", ("unclear_speech",)),
    ({"speech_ms": 60_000, "unclear_ms": 29_000}, "check", ("unclear_speech",)),
    ({"speech_ms": 60_000, "unclear_ms": 30_000}, "poor", ("unclear_speech",)),  # 50 %
    ({"speech_ms": 60_000, "unclear_ms": 0, "low_share": 0.15}, "good", ()),
    ({"speech_ms": 60_000, "unclear_ms": 0, "low_share": 0.16}, "check", ("low_confidence",)),
    ({"speech_ms": 60_000, "unclear_ms": 0, "repeats_removed": 1}, "check",
     ("repeats_removed",)),
    ({"speech_ms": 10_000, "unclear_ms": 0, "has_text": False}, "poor", ("no_text",)),
    ({"speech_ms": 9_999, "unclear_ms": 0, "has_text": False}, "good", ()),  # a few words lost
    ({"speech_ms": 0, "unclear_ms": 0, "has_text": False}, "good", ()),      # silence
    ({"speech_ms": 20_000, "unclear_ms": 20_000, "has_text": False, "repeats_removed": 2,
      "low_share": 0.9}, "poor",
     ("no_text", "unclear_speech", "low_confidence", "repeats_removed")),
])
def test_the_verdict_follows_the_documented_thresholds(
        numbers: dict[str, object], verdict: str, reasons: tuple[str, ...]) -> None:
    given: dict[str, object] = {"has_text": True, "repeats_removed": 0, "low_share": None,
                                **numbers}
    assert verdict_of(**given) == (verdict, reasons)  # type: ignore[arg-type]


def test_low_confidence_share_counts_only_words_that_carry_a_probability() -> None:
    assert low_confidence_share([_said(0, 1000)]) is None  # SpeechKit: not known
    said = [_said(0, 1000, probabilities=(0.9, 0.2, None)), _said(1000, 2000,
                                                                 probabilities=(0.49, 0.5))]
    assert low_confidence_share(said) == 0.5


def test_without_the_vads_speech_the_utterances_time_stands_for_it() -> None:
    report = assess([_said(0, 4000), _said(3000, 6000), _said(8000, 9000, text=" ")],
                    speech=None, unclear=[], repeats_removed=0)
    assert (report.verdict, report.speech_ms, report.low_confidence_share) == ("good", 6000,
                                                                               None)


def test_mostly_unclear_speech_is_poor_and_says_why() -> None:
    report = assess([_said(0, 2000)], speech=[Span(start_ms=0, end_ms=20_000)],
                    unclear=[Span(start_ms=5000, end_ms=15_000),
                             Span(start_ms=15_500, end_ms=18_000)], repeats_removed=0)
    assert report.verdict == "poor"
    assert report.reasons == ("unclear_speech",)
    # Spans under a second apart are one stretch to listen to.
    assert report.unclear_spans == (Span(start_ms=5000, end_ms=18_000),)
    assert (report.speech_ms, report.unclear_ms) == (20_000, 12_500)


def test_unclear_speech_counts_as_speech_so_the_share_never_passes_one() -> None:
    report = assess([], speech=[], unclear=[Span(start_ms=0, end_ms=30_000)],
                    repeats_removed=0)
    assert (report.speech_ms, report.unclear_ms) == (30_000, 30_000)
    assert report.reasons == ("no_text", "unclear_speech")


def test_the_kept_spans_are_bounded_and_the_seconds_count_them_all() -> None:
    many = [Span(start_ms=k * 3000, end_ms=k * 3000 + 500) for k in range(MAX_SPANS + 10)]
    report = assess([], speech=None, unclear=many, repeats_removed=0)
    assert len(report.unclear_spans) == MAX_SPANS
    assert report.unclear_ms == 500 * (MAX_SPANS + 10)


def test_the_stored_report_reads_back_and_a_broken_one_reads_as_none() -> None:
    report = assess([_said(0, 1000, probabilities=(0.1, 0.9))],
                    speech=[Span(start_ms=0, end_ms=12_345)],
                    unclear=[Span(start_ms=2000, end_ms=2600)], repeats_removed=3)
    again = quality_from_json(report.to_json())
    assert again is not None
    assert again.as_dict() == report.as_dict()
    assert report.as_dict() == {
        "verdict": "check", "reasons": ["unclear_speech", "low_confidence", "repeats_removed"],
        "speech_seconds": 12.3, "unclear_seconds": 0.6,
        "unclear_spans": [{"start_ms": 2000, "end_ms": 2600}], "repeats_removed": 3,
        "low_confidence_share": 0.5, "model": None}
    named = quality_from_json(dataclasses.replace(report, model="gigaam-v3").to_json())
    assert named is not None
    assert named.model == "gigaam-v3"
    assert quality_from_json(None) is None
    assert quality_from_json('{"verdict": "great"}') is None
    assert quality_from_json("not json") is None


def test_merged_joins_overlaps_and_drops_empty_spans() -> None:
    spans = [Span(start_ms=5, end_ms=9), Span(start_ms=0, end_ms=6), Span(start_ms=20, end_ms=20)]
    assert merged(spans) == [Span(start_ms=0, end_ms=9)]


# --- placement on the record's timeline -------------------------------------------------

PARTS = [PartPlan(index=0, offset_ms=0, length_ms=60_000),
         PartPlan(index=1, offset_ms=60_000, length_ms=30_000)]


def _answer(**fields: object) -> bytes:
    return orjson.dumps({"provider": "local", "segments": [], **fields})


def _read(**fields: object) -> Answer:
    return read_local_payload(_answer(**fields))


def test_unclear_spans_move_with_their_part_and_stay_inside_it() -> None:
    answers = [(PARTS[0], _read(unclear=[[1000, 2000]], speech=[[0, 5000]],
                                repeats_removed=1)),
               (PARTS[1], _read(unclear=[[500, 1500], [29_000, 45_000], "junk"],
                                speech=[[0, 40_000]], repeats_removed=2))]
    assert unclear_of(answers) == [Span(start_ms=1000, end_ms=2000),
                                   Span(start_ms=60_500, end_ms=61_500),
                                   Span(start_ms=89_000, end_ms=90_000)]
    assert speech_of(answers) == [Span(start_ms=0, end_ms=5000),
                                 Span(start_ms=60_000, end_ms=90_000)]
    assert repeats_of(answers) == 3


def test_answers_that_do_not_say_are_not_known() -> None:
    old = [(PARTS[0], _read(speech=[[0, 5000]])), (PARTS[1], _read())]
    assert speech_of(old) is None  # a part without would look like silence
    assert unclear_of(old) == []
    # A recognizer whose answers keep none of these (SpeechKit's JSON lines).
    speechkit = [(PARTS[0], read_results(b'{"result": {"channelTag": "0"}}')),
                 (PARTS[1], read_results(b""))]
    assert (unclear_of(speechkit), speech_of(speechkit), repeats_of(speechkit)) == (
        [], None, 0)
    said = [_said(0, 4000)]
    report = report_of(speechkit, said)
    assert (report.verdict, report.speech_ms, report.unclear_spans) == ("good", 4000, ())


def test_words_keep_their_probability_through_the_parts_and_the_structure() -> None:
    segment = {"start_ms": 100, "end_ms": 900, "text": " Hello there",
               "words": [{"start_ms": 100, "end_ms": 400, "text": " Hello", "probability": 0.9},
                         {"start_ms": 400, "end_ms": 950, "text": " there",
                          "probability": 0.2}]}
    second = parse_local_payload(_answer(segments=[segment]))
    joined = join([(PARTS[0], []), (PARTS[1], second)])
    [utterance] = joined
    assert [(w.start_ms, w.end_ms, w.probability) for w in utterance.words] == [
        (60_100, 60_400, 0.9), (60_400, 60_950, 0.2)]
    assert load_structure(dump_structure(joined)) == joined
    # Old answers (no words) and old structures (no words) stay readable.
    assert parse_local_payload(_answer(segments=[{"start_ms": 0, "end_ms": 5, "text": "x"}]))[
        0].words == ()
    assert load_structure(b'{"version": 2, "utterances": [{"start_ms": 0, "end_ms": 1,'
                          b' "text": "x"}]}')[0].words == ()


def test_a_corrected_line_drops_the_words_of_its_old_text() -> None:

    said = [_said(0, 1000, text="helo", probabilities=(0.2,)),
            _said(1000, 2000, text="there", probabilities=(0.3,))]
    fixed = apply_corrections(said, [{"index": 0, "text": "hello"}, {"index": 1,
                                                                     "text": "there"}])
    assert [u.words for u in fixed] == [(), said[1].words]
