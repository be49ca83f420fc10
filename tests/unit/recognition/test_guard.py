"""No loops, no invented text: the guard of every decoded clip, on synthetic segments."""

from __future__ import annotations

from typing import Any

import pytest

from transcriber.providers.whisper_decoding import by_clip
from transcriber.providers.whisper_guard import cut, failed, guard, merged
from transcriber.providers.whisper_repeats import (
    Loop,
    compression_ratio,
    heard_again,
    invented,
    loops,
    pauses_of,
    said_again,
)

Seg = dict[str, Any]


def _segment(*words: tuple[float, float, str], logprob: float = -0.3) -> Seg:
    """A segment with its words at (start, end) seconds."""
    return {"start_ms": round(words[0][0] * 1000), "end_ms": round(words[-1][1] * 1000),
            "text": "".join(w for _, _, w in words).strip(), "avg_logprob": logprob,
            "words": [{"start_ms": round(a * 1000), "end_ms": round(b * 1000), "text": w,
                       "probability": 0.9} for a, b, w in words]}


def _said(text: str, start: float, per_word: float = 0.3) -> list[tuple[float, float, str]]:
    return [(start + i * per_word, start + (i + 1) * per_word, f" {w}")
            for i, w in enumerate(text.split())]


def test_compression_ratio_is_whispers() -> None:
    assert compression_ratio("") == 0.0
    varied = "Сегодня утром я проснулся раньше обычного и долго смотрел в окно."
    assert compression_ratio(varied) < 1.5
    assert compression_ratio(" ".join(["я не пойду"] * 23)) > 2.4


def test_loops_find_a_phrase_not_only_a_whole_segment() -> None:
    tokens = ["ну", "я", "не", "пойду", "я", "не", "пойду", "я", "не", "пойду", "домой"]
    assert loops(tokens) == [Loop(first=1, size=3, copies=3)]
    assert loops(["a", "a", "a", "a", "b"]) == [Loop(first=0, size=1, copies=4)]
    # twice is not a loop, and speech that comes back later is not either
    assert loops(["yes", "yes", "no", "yes", "yes", "no", "yes"]) == []
    assert loops(["a", "b", "a", "b"]) == []


def test_a_copy_cut_short_at_the_end_belongs_to_the_loop() -> None:
    tokens = ["и", "прохожу", "и", "прохожу", "и", "прохожу", "и", "про"]
    assert loops(tokens) == [Loop(first=0, size=2, copies=3, tail=2)]
    # a word that merely begins like the phrase, with speech after it, is kept
    assert loops(["и", "прохожу"] * 3 + ["и", "потом", "домой"])[0].tail == 0


def test_copies_each_with_their_own_speech_are_said_not_invented() -> None:
    regions = [(0.0, 2.0), (2.6, 4.6), (5.2, 7.2)]
    pauses = pauses_of(regions)
    said = [(0.1, 1.9), (2.7, 4.5), (5.3, 7.1)]
    assert not invented(said, pauses, size=4)
    # the same three copies packed into one stretch of speech
    assert invented([(0.1, 0.7), (0.7, 1.3), (1.3, 1.9)], pauses, size=4)
    # word times collapsed to nothing
    assert invented([(7.0, 7.0), (7.0, 7.0), (7.0, 7.0)], [(7.0, 7.0)] * 3, size=3)


def test_an_invented_loop_keeps_two_copies_and_its_speech_is_unclear() -> None:
    regions = [(0.0, 20.0)]  # one stretch of speech: the copies share it
    words = _said("сегодня утром", 0.0) + _said(" ".join(["я не пойду"] * 10), 1.0, 0.5)
    words += _said("конец", 18.0)
    found = cut([_segment(*words)], clip=(0.0, 20.0), regions=regions)
    text = found.segments[0]["text"]
    assert text == "сегодня утром я не пойду я не пойду конец"
    assert found.repeats_removed == 8
    # from the end of the second copy (1.0 + 6 × 0.5) to the next kept word (18.0)
    assert found.unclear == [(4.0, 18.0)]
    assert failed([_segment(*words)], found) == ("compression", "repeats")


def test_a_phrase_a_person_repeats_stays() -> None:
    # five copies, each its own stretch of speech with a pause between
    regions = [(i * 3.0, i * 3.0 + 2.2) for i in range(5)]
    words = [w for i in range(5) for w in _said("he was not an ill disposed young man",
                                                  i * 3.0 + 0.05, 0.26)]
    found = cut([_segment(*words)], clip=(0.0, 15.0), regions=regions)
    assert found.repeats_removed == 0
    assert found.unclear == []
    assert found.segments[0]["text"].count("young man") == 5


def test_words_over_non_speech_and_outside_the_clip_are_left_out() -> None:
    regions = [(0.0, 3.0), (30.0, 33.0)]
    speech = _said("hello there", 0.5)
    invented_words = _said("thank you for watching", 15.0)
    past = _said("bye", 34.0)
    found = cut([_segment(*speech), _segment(*invented_words), _segment(*past)],
                clip=(0.0, 33.3), regions=regions)
    assert [s["text"] for s in found.segments] == ["hello there"]
    assert found.dropped == {"non_speech": 4, "outside_clip": 1}
    assert found.unclear == []  # no speech was there to lose
    assert set(failed([], found)) == {"non_speech", "outside_clip"}


def test_a_hyphenated_stutter_is_cut_inside_the_word() -> None:
    regions = [(0.0, 5.0)]
    found = cut([_segment((0.0, 1.0, " башами-ки-ки-ки-ки-ки"), (1.0, 1.5, " дом"))],
                clip=(0.0, 5.0), regions=regions)
    assert found.segments[0]["text"] == "башами-ки-ки дом"
    assert found.repeats_removed == 3


def test_low_log_probability_is_a_reason_to_decode_again() -> None:
    segments = [_segment(*_said("мы пошли домой", 0.0), logprob=-1.4)]
    found = cut(segments, clip=(0.0, 2.0), regions=[(0.0, 2.0)])
    assert failed(segments, found) == ("logprob",)


def test_merged_spans_are_sorted_and_joined() -> None:
    assert merged([(5.0, 6.0), (1.0, 2.0), (1.5, 3.0), (4.0, 4.0)]) == [(1.0, 3.0), (5.0, 6.0)]


def _looped_clip() -> list[Seg]:
    return [_segment(*_said(" ".join(["я не пойду"] * 12), 0.0, 0.5))]


def test_a_failing_clip_is_decoded_again_and_the_better_decoding_kept() -> None:
    regions = [(0.0, 18.0)]
    good = [_segment(*_said(" ".join(f"слово{i}" for i in range(30)), 0.2, 0.55))]
    asked: list[tuple[float, float]] = []

    def redecode(span: tuple[float, float]) -> list[Seg]:
        asked.append(span)
        return good

    clean = [_segment(*_said("всё хорошо", 20.0))]
    result = guard([(0.0, 18.0), (19.8, 21.0)], [_looped_clip(), clean],
                   regions=[*regions, (19.9, 20.9)], redecode=redecode)
    assert asked == [(0.0, 18.0)]  # the clean clip is not decoded again
    assert result.redecoded == {"compression": 1, "repeats": 1}
    assert [s["text"] for s in result.segments] == [good[0]["text"], "всё хорошо"]
    assert result.unclear == []
    assert result.repeats_removed == 0


def test_a_clip_that_still_loops_keeps_what_passes_and_the_rest_is_unclear() -> None:
    regions = [(0.0, 18.0)]
    calls: list[tuple[float, float]] = []

    def redecode(span: tuple[float, float]) -> list[Seg]:
        calls.append(span)
        return _looped_clip() if span == (0.0, 18.0) else []

    result = guard([(0.0, 18.0)], [_looped_clip()], regions=regions, redecode=redecode)
    assert result.segments[0]["text"] == "я не пойду я не пойду"
    assert result.repeats_removed == 10
    # the speech after the second copy: the stretch decoded again gave nothing
    assert calls[1:]
    assert all(a >= 3.0 for a, _ in calls[1:])
    assert result.unclear == [(4.0, 18.0)]
    assert result.unclear_seconds == pytest.approx(14.0)


def test_a_clip_already_decoded_the_safe_way_is_not_decoded_again() -> None:
    def redecode(span: tuple[float, float]) -> list[Seg]:
        raise AssertionError("decoded again")

    regions = [(0.0, 1.0), (10.0, 11.0)]
    result = guard([(0.0, 11.0)], [[_segment(*_said("hi", 0.2)), _segment(*_said("oh", 5.0))]],
                   regions=regions, redecode=redecode, safe={0})
    assert [s["text"] for s in result.segments] == ["hi"]
    assert result.dropped == {"non_speech": 1}
    assert result.redecoded == {}


def test_a_loop_across_two_clips_is_cut_over_the_part() -> None:
    regions = [(0.0, 12.0)]
    first = [_segment(*_said("я не пойду я не пойду", 0.0, 0.5))]
    second = [_segment(*_said("я не пойду я не пойду", 6.0, 0.5))]
    result = guard([(0.0, 6.0), (6.0, 12.0)], [first, second], regions=regions,
                   redecode=lambda span: [])
    assert " ".join(s["text"] for s in result.segments) == "я не пойду я не пойду"
    assert result.repeats_removed == 2


def test_segments_without_word_times_are_kept() -> None:
    plain = {"start_ms": 0, "end_ms": 1000, "text": "hello"}
    assert cut([plain], clip=(0.0, 1.0), regions=[(0.0, 1.0)]).segments == [plain]


def test_a_segment_across_two_clips_is_split_between_them() -> None:
    across = _segment(*_said("is to be", 10.0), *_said("he was not", 32.0))
    alone = _segment(*_said("had he", 36.0))
    groups = by_clip([across, alone], [(0.0, 12.4), (32.2, 44.0)])
    assert [[s["text"] for s in group] for group in groups] == [
        ["is to be"], ["he was not", "had he"]]
    assert groups[1][0]["start_ms"] == 32_000
    assert by_clip([alone], []) == []


def test_the_part_counts_and_logs_what_the_guard_did_without_text() -> None:
    from prometheus_client import REGISTRY  # noqa: PLC0415
    from structlog.testing import capture_logs  # noqa: PLC0415

    from transcriber.providers.whisper_answer import report_guard  # noqa: PLC0415
    from transcriber.providers.whisper_guard import Guarded  # noqa: PLC0415

    def value(name: str, labels: dict[str, str] | None = None) -> float:
        return REGISTRY.get_sample_value(name, labels or {}) or 0.0

    before = (value("transcriber_recognition_redecoded_total", {"reason": "repeats"}),
              value("transcriber_recognition_unclear_seconds_total"))
    guarded = Guarded(segments=[{"start_ms": 0, "end_ms": 900, "text": "secret words"}],
                      unclear=[(4.0, 18.0)], repeats_removed=10,
                      redecoded={"repeats": 1, "compression": 1}, dropped={}, clips=3)
    with capture_logs() as logs:
        report_guard(guarded)
    assert value("transcriber_recognition_redecoded_total", {"reason": "repeats"}) == \
        before[0] + 1
    assert value("transcriber_recognition_unclear_seconds_total") == \
        pytest.approx(before[1] + 14.0)
    assert [e["event"] for e in logs] == ["recognition_guarded"]
    assert "secret" not in repr(logs)
    with capture_logs() as quiet:
        report_guard(Guarded(segments=[], unclear=[], repeats_removed=0, redecoded={},
                             dropped={}, clips=1))
    assert quiet == []


def test_a_letter_looping_inside_a_word_is_cut() -> None:
    found = cut([_segment((0.0, 1.0, " Posīt"), (1.0, 2.0, " īļļļļļļļļļļļ"), (2.0, 2.5, " ааа"))],
                clip=(0.0, 3.0), regions=[(0.0, 3.0)])
    assert found.segments[0]["text"] == "Posīt īļļļ ааа"
    assert found.repeats_removed == 1


def test_identical_copies_aligned_loosely_are_still_said_when_each_has_a_pause() -> None:
    # six copies, five pauses between them, the word times drifted off the pauses
    regions = [(i * 3.0, i * 3.0 + 2.2) for i in range(6)]
    drifted = [(i * 2.9 + 0.6, i * 2.9 + 2.6) for i in range(6)]
    assert not invented(drifted, pauses_of(regions), size=8)
    # the same six copies over three stretches of speech: invented
    assert invented(drifted, pauses_of([*regions[:3], (9.0, 20.0)]), size=8)




_SENTENCE = "had he married a more amiable woman he might have been made still more " \
            "respectable than he was"
_APART = [(0.0, 5.6), (6.0, 11.6), (12.0, 17.6)]


def _thrice() -> list[Seg]:
    return [_segment(*[w for k in range(3) for w in _said(_SENTENCE, k * 6.0)])]


def test_a_sentence_said_again_is_heard_again_copy_by_copy_not_decoded_whole() -> None:
    segments = _thrice()
    assert compression_ratio(segments[0]["text"]) > 2.4
    assert failed(segments, cut(segments, clip=(0.0, 18.0), regions=_APART)) == (
        "compression",)
    copies = said_again(segments, _APART)
    assert [c.span for c in copies] == [(6.0, 11.4), (12.0, 17.4)]
    asked: list[tuple[float, float]] = []

    def redecode(span: tuple[float, float]) -> list[Seg]:
        asked.append(span)  # each copy's own stretch says the sentence again
        return [_segment(*_said("so " + _SENTENCE, span[0]))]

    result = guard([(0.0, 18.0)], [segments], regions=_APART, redecode=redecode)
    assert asked == [pytest.approx((5.7, 11.7)), pytest.approx((11.7, 17.7))]  # not whole
    assert result.redecoded == {}
    assert result.copies_heard == 2
    assert result.segments == segments


def test_a_copy_that_its_own_stretch_does_not_say_sends_the_clip_whole() -> None:
    asked: list[tuple[float, float]] = []
    other = "the rain had stopped before the carriage reached the gate of the park"

    def redecode(span: tuple[float, float]) -> list[Seg]:
        asked.append(span)  # Whisper had repeated the sentence over new speech
        return [_segment(*_said(other, span[0]))]

    result = guard([(0.0, 18.0)], [_thrice()], regions=_APART, redecode=redecode)
    assert asked[-1] == (0.0, 18.0)
    assert result.redecoded == {"compression": 1}
    assert result.copies_heard == 0
    copy = said_again(_thrice(), _APART)[0]
    assert heard_again(copy, [_segment(*_said("and " + _SENTENCE + " yes", 5.8))])
    # the sentence inside a longer stretch of other words is not this copy heard again
    assert not heard_again(copy, [_segment(*_said(
        "then " + _SENTENCE + " and the rain had stopped at last", 5.8))])
    assert not heard_again(copy, [_segment(*_said(_SENTENCE.replace("woman", "man"), 5.8))])


def test_copies_in_one_stretch_of_speech_are_not_said_again() -> None:
    # two copies (not yet a loop the cut removes) with no pause between them
    words = [w for k in range(2) for w in _said(_SENTENCE + " indeed", k * 5.7)]
    segments = [_segment(*words)]
    assert said_again(segments, [(0.0, 12.0)]) == []
    # pauses, but each copy's word times collapsed to nothing
    collapsed = [_segment(*[(k * 6.0, k * 6.0, f" {w}") for k in range(2)
                            for w in (_SENTENCE + " indeed").split()])]
    assert said_again(collapsed, [(0.0, 0.5), (6.0, 6.5)]) == []
    # no word times: nothing tells the copies apart
    text = " ".join([_SENTENCE] * 3)
    bare = [{"start_ms": 0, "end_ms": 18000, "text": text, "avg_logprob": -0.3}]
    assert said_again(bare, _APART) == []
    # a ratio that the copies do not explain
    noisy = [_segment(*(_said(" ".join(["ла"] * 30), 0.0, 0.05) + [
        w for k in range(2) for w in _said(_SENTENCE, 2.0 + k * 6.0)]))]
    assert said_again(noisy, [(0.0, 1.6), (2.0, 7.6), (8.0, 13.6)]) == []
