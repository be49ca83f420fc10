"""The card's utterances and words written as response shapes, against plain dicts.

`python -m tests.bench.card_shapes` builds and writes (orjson) the utterances of a
card of 1 000 utterances of 20 words three ways — dicts as the view wrote them before
the shapes, the `TypedDict` shapes `transcriber.followups.card.record_card` builds now, and frozen
dataclasses of the same fields — and prints the median milliseconds of each
(docs/api.md, "Shapes": why the bulk of an answer is a `TypedDict`).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import orjson

from transcriber.domain.shapes import UtteranceBody, to_json
from transcriber.ports import Utterance, Word

WORDS = tuple(Word(start_ms=i, end_ms=i + 1, text=" word", probability=0.5)
              for i in range(20))
UTTERANCES = [Utterance(start_ms=0, end_ms=1, channel=0, text="hello " * 20, speaker="S1",
                        words=WORDS) for _ in range(1000)]


@dataclass(frozen=True, slots=True, kw_only=True)
class _FrozenWord:
    start_ms: int
    end_ms: int
    text: str
    probability: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class _FrozenUtterance:
    index: int
    start_ms: int
    end_ms: int
    channel: int
    speaker: str | None
    text: str
    words: list[_FrozenWord]


def dicts() -> bytes:
    return orjson.dumps([
        {"index": i, "start_ms": u.start_ms, "end_ms": u.end_ms, "channel": u.channel,
         "speaker": u.speaker, "text": u.text,
         "words": [{"start_ms": w.start_ms, "end_ms": w.end_ms, "text": w.text,
                    "probability": w.probability} for w in u.words]}
        for i, u in enumerate(UTTERANCES)])


def typed_dicts() -> bytes:
    utterances: list[UtteranceBody] = [
        {"index": i, "start_ms": u.start_ms, "end_ms": u.end_ms, "channel": u.channel,
         "speaker": u.speaker, "text": u.text,
         "words": [{"start_ms": w.start_ms, "end_ms": w.end_ms, "text": w.text,
                    "probability": w.probability} for w in u.words]}
        for i, u in enumerate(UTTERANCES)]
    return to_json(utterances)


def dataclasses() -> bytes:
    return to_json([
        _FrozenUtterance(index=i, start_ms=u.start_ms, end_ms=u.end_ms, channel=u.channel,
                         speaker=u.speaker, text=u.text,
                         words=[_FrozenWord(start_ms=w.start_ms, end_ms=w.end_ms,
                                            text=w.text, probability=w.probability)
                                for w in u.words])
        for i, u in enumerate(UTTERANCES)])


def _median_ms(run: Callable[[], bytes], times: int = 31) -> float:
    taken = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        taken.append(time.perf_counter() - started)
    return statistics.median(taken) * 1000


def main() -> int:
    assert dicts() == typed_dicts() == dataclasses()
    for run in (dicts, typed_dicts, dataclasses):
        print(f"{run.__name__}: {_median_ms(run):.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
