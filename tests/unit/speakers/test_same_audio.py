"""Same audio, same transcript: the pure steps that make the labels and the turns
the audio's own, whatever engine, order or timing produced them (docs/speakers.md)."""

from __future__ import annotations

from transcriber.pipeline.speakers import by_first_appearance
from transcriber.ports import Span, Utterance
from transcriber.providers.speakers.separator import fits


def _u(start: int, speaker: str | None, text: str = "x", channel: int = 0) -> Utterance:
    return Utterance(start_ms=start, end_ms=start + 500, channel=channel, text=text,
                     speaker=speaker)


def test_the_speaker_of_the_earliest_utterance_is_s1_and_new_ones_follow() -> None:
    # A cluster numbered 2 spoke first, then 1, then 3 (as another run may number them).
    given = [_u(0, "S2", "a"), _u(600, "S1", "b"), _u(1200, "S2", "c"), _u(1800, "S3", "d")]
    assert [(u.text, u.speaker) for u in by_first_appearance(given)] == [
        ("a", "S1"), ("b", "S2"), ("c", "S1"), ("d", "S3")]


def test_two_numberings_of_the_same_voices_come_out_equal() -> None:
    one = [_u(0, "S1"), _u(700, "S2"), _u(1400, "S1"), _u(2100, "S2")]
    swapped = [_u(0, "S2"), _u(700, "S1"), _u(1400, "S2"), _u(2100, "S1")]
    assert by_first_appearance(one) == by_first_appearance(swapped) == one


def test_first_appearance_is_by_time_not_by_place_in_the_list() -> None:
    # A stereo call merged by channel before time would list channel 0 first.
    given = [_u(900, "S1", "late", channel=0), _u(100, "S2", "early", channel=1)]
    assert [(u.text, u.speaker) for u in by_first_appearance(given)] == [
        ("late", "S2"), ("early", "S1")]
    # Two utterances starting together: the one listed first names its speaker first.
    tied = [_u(0, "S2", "first"), _u(0, "S1", "second")]
    assert [u.speaker for u in by_first_appearance(tied)] == ["S1", "S2"]


def test_an_utterance_without_a_speaker_stays_without_and_takes_no_number() -> None:
    given = [_u(0, None), _u(500, "S7"), _u(1000, None), _u(1500, "S3")]
    assert [u.speaker for u in by_first_appearance(given)] == [None, "S1", None, "S2"]
    assert by_first_appearance([]) == []


def test_labels_already_by_first_appearance_are_kept_as_they_are() -> None:
    given = [_u(0, "S1"), _u(500, "S2"), _u(1000, "S1")]
    result = by_first_appearance(given)
    assert result == given
    assert all(a is b for a, b in zip(result, given, strict=True))


REGIONS = [Span(start_ms=0, end_ms=2000), Span(start_ms=2500, end_ms=4000)]


def test_turns_are_the_records_only_over_the_regions_its_answer_keeps() -> None:
    assert fits(REGIONS, own_vad=False, speech=list(REGIONS))
    # The job's own VAD happened to find the same regions: the same turns.
    assert fits(REGIONS, own_vad=True, speech=tuple(REGIONS))
    # Its own VAD (the recognizer's regions never came) found others: not the record's.
    assert not fits(REGIONS[:1], own_vad=True, speech=REGIONS)
    assert not fits([Span(start_ms=0, end_ms=2010), REGIONS[1]], own_vad=True, speech=REGIONS)


def test_without_regions_in_the_answer_only_the_engines_own_vad_fits() -> None:
    assert fits(REGIONS, own_vad=True, speech=None)
    assert not fits(REGIONS, own_vad=False, speech=None)
