"""Subtitle cues (issue 38): the rules held over random utterances, and the cuts
the rules leave open (sentence ends, commas, pauses) shown by example."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from transcriber.domain.cues import (
    MAX_CUE_MS,
    MAX_LINE_CHARS,
    MAX_LINES,
    MIN_CUE_MS,
    Cue,
    Piece,
    lines_of,
    pieces_of,
    subtitle_cues,
)
from transcriber.ports import Utterance, Word

# --- the rules, over random utterances -------------------------------------------

_LETTERS = "abcdefghijklmnopqrstuvwxyzабвгдеж"


@st.composite
def _word_texts(draw: st.DrawFn) -> str:
    size = draw(st.one_of(st.integers(1, 12), st.integers(43, 60)))
    core = draw(st.text(alphabet=_LETTERS, min_size=size, max_size=size))
    mark = draw(st.sampled_from(["", "", "", "", ".", ",", "?", "…", ":", ".»", ")"]))
    space = draw(st.sampled_from([" ", " ", " ", " ", ""]))  # "" glues it to the one before
    return f"{space}{core}{mark}"


@st.composite
def _utterance(draw: st.DrawFn, start_ms: int, channel: int) -> Utterance:
    words = []
    at = start_ms + draw(st.integers(0, 400))
    for text in draw(st.lists(_word_texts(), min_size=1, max_size=60)):
        at += draw(st.integers(0, 2500))
        length = draw(st.one_of(st.integers(0, 1200), st.just(9000)))
        words.append(Word(start_ms=at, end_ms=at + length, text=text))
        at += length
    end = at + draw(st.integers(0, 500))
    text = "".join(word.text for word in words)
    how = draw(st.sampled_from(["words", "words", "no words", "corrected"]))
    if how == "corrected":  # a person's correction: the words stay as recognized
        said = text.split()
        k = draw(st.integers(0, len(said) - 1))
        edit = draw(st.sampled_from(["drop", "replace", "insert"]))
        if edit == "drop" and len(said) > 1:
            del said[k]
        elif edit == "replace":
            said[k] = "corrected"
        else:
            said.insert(k, "inserted words")
        text = " ".join(said)
    return Utterance(start_ms=start_ms, end_ms=end, channel=channel, text=text,
                     words=tuple(words) if how != "no words" else ())


@st.composite
def _utterances(draw: st.DrawFn) -> list[Utterance]:
    found: list[Utterance] = []
    for _ in range(draw(st.integers(1, 5))):
        overlap = draw(st.integers(0, 3)) == 0
        if found and overlap:
            # The other channel talking over the last utterance (or with it).
            last = found[-1]
            start = last.start_ms + draw(st.integers(0, max(last.end_ms - last.start_ms, 0)))
            found.append(draw(_utterance(start, 1 - last.channel)))
        else:
            start = (found[-1].end_ms if found else 0) + draw(st.integers(0, 3000))
            found.append(draw(_utterance(start, 0)))
    return found


_LEADS = st.sampled_from(["", "", "Anna:", "S2:",
                          "Anna Maria Konstantinovna Rimskaya-Korsakova:"])


def _tokens(cue: Cue, lead: str) -> list[str]:
    shown = " ".join(cue.lines)
    if lead and shown.startswith(lead):
        shown = shown[len(lead):]
    return shown.split()


def _check_rules(utterances: Sequence[Utterance], leads: Sequence[str],
                 cues: Sequence[Cue]) -> None:
    opened: set[int] = set()
    said: dict[int, list[str]] = {}
    for index, cue in enumerate(cues):
        lead = leads[cue.utterance] if cue.utterance not in opened else ""
        opened.add(cue.utterance)
        tokens = _tokens(cue, lead)
        said.setdefault(cue.utterance, []).extend(tokens)
        assert cue.end_ms > cue.start_ms, cue
        assert cue.end_ms - cue.start_ms <= MAX_CUE_MS or len(tokens) == 1, cue
        assert 1 <= len(cue.lines) <= MAX_LINES, cue
        for line in cue.lines:
            assert len(line) <= MAX_LINE_CHARS or " " not in line or line == lead, cue
        if index + 1 < len(cues):
            following = cues[index + 1]
            assert following.start_ms > cue.start_ms, (cue, following)  # time order
            assert following.start_ms >= cue.end_ms, (cue, following)  # no overlap
            assert cue.end_ms - cue.start_ms >= min(MIN_CUE_MS,
                                                    following.start_ms - cue.start_ms)
        else:
            assert cue.end_ms - cue.start_ms >= MIN_CUE_MS
    # Every word of every utterance exactly once, in order, never cut inside.
    assert said == {i: u.text.split() for i, u in enumerate(utterances) if u.text.split()}


@settings(max_examples=200, deadline=None)
@given(utterances=_utterances(), data=st.data())
def test_cues_keep_the_subtitle_rules(utterances: list[Utterance], data: st.DataObject) -> None:
    leads = [data.draw(_LEADS) for _ in utterances]
    _check_rules(utterances, leads, subtitle_cues(utterances, leads))


@settings(max_examples=100, deadline=None)
@given(utterances=_utterances())
def test_pieces_keep_the_text_and_run_forward_inside_their_utterance(
        utterances: list[Utterance]) -> None:
    for u in utterances:
        pieces = pieces_of(u)
        assert [p.text for p in pieces] == u.text.split()
        for before, after in pairwise(pieces):
            assert before.start_ms <= before.end_ms <= after.start_ms <= after.end_ms
        assert all(u.start_ms <= p.start_ms and p.end_ms <= u.end_ms for p in pieces)


# --- examples: where the cuts fall ------------------------------------------------

def _timed(text: str, *, start_ms: int = 0, word_ms: int = 300,
           pauses: dict[int, int] | None = None) -> Utterance:
    """`text` said word by word, `word_ms` each, with `pauses[i]` ms before word i."""
    words, at = [], start_ms
    for i, token in enumerate(text.split()):
        at += (pauses or {}).get(i, 0)
        words.append(Word(start_ms=at, end_ms=at + word_ms, text=f" {token}"))
        at += word_ms
    return Utterance(start_ms=start_ms, end_ms=at, channel=0, text=text, words=tuple(words))


def _shown(cues: Sequence[Cue]) -> list[str]:
    return [" ".join(cue.lines) for cue in cues]


def test_a_cut_falls_at_the_end_of_a_sentence() -> None:
    said = _timed("The budget is approved for next year. We will hire two more engineers "
                  "in the spring and open an office.")
    assert _shown(subtitle_cues([said])) == [
        "The budget is approved for next year.",
        "We will hire two more engineers in the spring and open an office."]


def test_a_cut_prefers_a_comma_to_a_plain_space() -> None:
    said = _timed("We looked at the numbers from last quarter, and the sales team "
                  "thinks that growth will continue next year too")
    assert _shown(subtitle_cues([said]))[0] == "We looked at the numbers from last quarter,"


def test_a_long_pause_is_cut_even_where_the_words_would_fit_one_cue() -> None:
    said = _timed("let me check that okay found it", pauses={4: 2000})
    cues = subtitle_cues([said])
    assert _shown(cues) == ["let me check that", "okay found it"]
    assert [(c.start_ms, c.end_ms) for c in cues] == [(0, 1200), (3200, 4200)]  # held a second
    short = _timed("let me check that okay found it", pauses={4: 200})
    assert _shown(subtitle_cues([short])) == ["let me check that okay found it"]


def test_seven_seconds_make_a_cut_where_the_lines_would_still_hold_more() -> None:
    said = _timed("one two three four five six seven eight nine ten", word_ms=1000)
    cues = subtitle_cues([said])
    assert all(c.end_ms - c.start_ms <= MAX_CUE_MS for c in cues)
    assert len(cues) == 2


def _units(text: str) -> list[str]:
    return text.split()


def test_two_lines_break_at_punctuation_and_evenly() -> None:
    assert lines_of(_units("Right, so the first thing we need to decide is the date")) == (
        "Right, so the first thing we", "need to decide is the date")
    assert lines_of(_units("We agreed on Tuesday. Then the team went home for the weekend")) == (
        "We agreed on Tuesday.", "Then the team went home for the weekend")
    assert lines_of(["Short", "enough."]) == ("Short enough.",)


def test_a_word_too_long_for_a_line_or_a_cue_stands_alone() -> None:
    long_word = "Donaudampfschifffahrtsgesellschaftskapitänsmütze"
    said = Utterance(start_ms=0, end_ms=11_000, channel=0, text=f"the {long_word} hat",
                     words=(Word(start_ms=0, end_ms=500, text=" the"),
                            Word(start_ms=500, end_ms=10_000, text=f" {long_word}"),
                            Word(start_ms=10_000, end_ms=11_000, text=" hat")))
    cues = subtitle_cues([said])
    assert [c.lines for c in cues] == [("the",), (long_word,), ("hat",)]
    assert (cues[1].start_ms, cues[1].end_ms) == (500, 10_000)


# --- examples: where the times come from ------------------------------------------

def test_without_words_the_text_shares_the_time_by_characters() -> None:
    said = Utterance(start_ms=1000, end_ms=2000, channel=0, text="ab cd  efgh")
    assert pieces_of(said) == [Piece(start_ms=1000, end_ms=1250, text="ab"),
                               Piece(start_ms=1250, end_ms=1500, text="cd"),
                               Piece(start_ms=1500, end_ms=2000, text="efgh")]


def test_a_correction_keeps_the_times_of_the_words_it_left_alone() -> None:
    words = (Word(start_ms=0, end_ms=500, text=" Hello"),
             Word(start_ms=600, end_ms=1000, text=" wrold"),
             Word(start_ms=1100, end_ms=1500, text=" again"))
    said = Utterance(start_ms=0, end_ms=1600, channel=0, text="Hello big world again",
                     words=words)
    assert [(p.start_ms, p.end_ms, p.text) for p in pieces_of(said)] == [
        (0, 500, "Hello"), (600, 750, "big"), (750, 1000, "world"), (1100, 1500, "again")]


def test_a_word_glued_to_the_one_before_is_never_cut_from_it() -> None:
    words = (Word(start_ms=0, end_ms=200, text=" I"), Word(start_ms=200, end_ms=500, text=" don"),
             Word(start_ms=500, end_ms=700, text="'t"), Word(start_ms=800, end_ms=1100,
                                                              text=" know"))
    said = Utterance(start_ms=0, end_ms=1100, channel=0, text="I don't know", words=words)
    assert [(p.start_ms, p.end_ms, p.text) for p in pieces_of(said)] == [
        (0, 200, "I"), (200, 700, "don't"), (800, 1100, "know")]


def test_words_outside_their_utterance_are_held_inside_it() -> None:
    words = (Word(start_ms=900, end_ms=1500, text=" early"),
             Word(start_ms=1400, end_ms=2600, text=" late"))
    said = Utterance(start_ms=1000, end_ms=2500, channel=0, text="early late", words=words)
    assert [(p.start_ms, p.end_ms) for p in pieces_of(said)] == [(1000, 1500), (1500, 2500)]


# --- examples: cues side by side -------------------------------------------------

def test_a_short_cue_is_held_a_second_but_never_over_the_next() -> None:
    cues = subtitle_cues([
        Utterance(start_ms=0, end_ms=300, channel=0, text="Yes."),
        Utterance(start_ms=600, end_ms=900, channel=0, text="No."),
        Utterance(start_ms=5000, end_ms=5200, channel=0, text="Maybe."),
    ])
    assert [(c.start_ms, c.end_ms) for c in cues] == [(0, 600), (600, 1600), (5000, 6000)]


def test_talk_over_another_channel_ends_the_earlier_cue() -> None:
    cues = subtitle_cues([
        Utterance(start_ms=0, end_ms=4000, channel=0, text="I was saying something long"),
        Utterance(start_ms=1000, end_ms=2000, channel=1, text="Sorry"),
        Utterance(start_ms=1000, end_ms=1500, channel=0, text="Same time"),
    ])
    assert [(c.start_ms, c.end_ms, c.utterance) for c in cues] == [
        (0, 1000, 0), (1000, 1001, 1), (1001, 2001, 2)]
