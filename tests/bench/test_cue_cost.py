"""What cutting subtitle cues costs: an hour of speech rendered as SRT and WebVTT.

An hour of made-up talk (two speakers taking turns, utterances of 5 to 80
words at 3 words a second, pauses of 0.2-2 s between them), rendered with
word times and without (the characters' share of each utterance), the best
of five runs printed for docs/recognition.md, "Subtitle cues". The export
tests check the rules; this one times them, and also checks that every cue
keeps them.

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s -p no:cacheprovider
tests/bench/test_cue_cost.py`.
"""

from __future__ import annotations

import random
import time

import pytest

from tests.helpers.subtitles import check_subtitle_rules
from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.domain.transcripts import render
from transcriber.ports import Utterance, Word

pytestmark = pytest.mark.bench

VOCABULARY = ("the", "budget", "plan", "team", "spring", "office", "we", "will", "hire",
              "two", "more", "engineers", "and", "open", "a", "new", "archive", "for",
              "the", "records,", "today.", "yes")


def _an_hour(rng: random.Random, *, words: bool) -> list[Utterance]:
    found: list[Utterance] = []
    at = 0
    while at < 3_600_000:
        said, t = [], at
        for _ in range(rng.randint(5, 80)):
            said.append(Word(start_ms=t, end_ms=t + 250, text=" " + rng.choice(VOCABULARY)))
            t += 330
        found.append(Utterance(start_ms=at, end_ms=t, channel=0, speaker=f"S{len(found) % 2 + 1}",
                               text="".join(w.text for w in said).strip(),
                               words=tuple(said) if words else ()))
        at = t + rng.randint(200, 2000)
    return found


@pytest.mark.parametrize("fmt", ["srt", "vtt"])
@pytest.mark.parametrize("words", [True, False], ids=["word times", "no words"])
def test_an_hour_of_speech_cut_into_cues(fmt: TranscriptFormat, words: bool) -> None:
    utterances = _an_hour(random.Random(1), words=words)
    best = float("inf")
    for _ in range(5):
        started = time.perf_counter()
        text = render(utterances, fmt)
        best = min(best, time.perf_counter() - started)
    cues = check_subtitle_rules(text, fmt)
    spoken = sum(len(u.text.split()) for u in utterances)
    print(f"\n{fmt}, {'word times' if words else 'no words'}: {len(utterances)} utterances, "
          f"{spoken} words, {len(cues)} cues in {best:.2f} s")
