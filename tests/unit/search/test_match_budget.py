"""The find-in-transcript's caps (issue 39 row 4): a CPU budget that stops the scan and
says so, read on a fake clock; and the pool's workers are processes of their own."""

from __future__ import annotations

import os

import orjson

from transcriber.domain.search import parse
from transcriber.web.match_pool import MatchPool
from transcriber.web.matches import structure_matches


class _Ticks:
    """A clock that moves `step` seconds each time it is read."""

    def __init__(self, step: float) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _structure(texts: list[str]) -> str:
    return orjson.dumps({"version": 2, "utterances": [
        {"start_ms": n * 1000, "end_ms": n * 1000 + 900, "text": text}
        for n, text in enumerate(texts)]}).decode()


def test_the_budget_stops_the_scan_and_the_answer_says_partial() -> None:
    contents = [_structure(["отчёт готов"] * 10), _structure(["отчёт"] * 10)]
    query = parse("отчет")
    # One tick a read: the deadline is 5 ticks after its own read, one read an utterance.
    first, second = structure_matches(contents, query, limit=1000, budget=5.0,
                                      clock=_Ticks(1.0))
    assert first.partial
    assert [m["utterance_index"] for m in first.matches] == [0, 1, 2, 3, 4]
    assert second.partial  # the budget is the request's, shared
    assert second.matches == []
    whole = structure_matches(contents, query, limit=1000, budget=1000.0, clock=_Ticks(1.0))
    assert [(len(one.matches), one.partial) for one in whole] == [(10, False), (10, False)]


def test_no_transcript_and_an_unreadable_one_are_told_apart() -> None:
    found = structure_matches([None, "{not json", _structure(["план"])], parse("план"),
                              limit=3, budget=1.0)
    assert [(one.matches, one.unreadable) for one in found[:2]] == [([], False), ([], True)]
    assert found[2].matches[0]["snippet"] == "план"


async def test_the_matching_runs_in_a_worker_process_not_the_loops() -> None:
    pool = MatchPool(workers=1, budget_seconds=1.0)
    try:
        executor = await pool._running()
        assert executor.submit(os.getpid).result() != os.getpid()
        (found,) = await pool.matches([_structure(["недели две"])], parse("неделя"), limit=3)
        assert found.matches[0]["marks"] == [[0, 6]]
    finally:
        await pool.close()
