"""What four people searching six-hour transcripts cost a bystander (issue 39 row 4).

The whole app over real HTTP on loopback (aiohttp's test server). Four people
each own a six-hour transcript (60 000 words, 3 000 utterances) and ask for
the heaviest query the caps let through — four two-letter prefixes, in the
card's find box and in the list — at the rate limit's pace (2 requests a
second each). A fifth person asks `GET /app/me` every 20 ms. The phases run
side by side in one run: idle, searching (the matching in the pool's worker
processes, as served), and for comparison searching with the matching on a
thread of the service's own interpreter (how it ran before). Medians and
tails of the bystander's latency are printed for docs/api.md; the searching
phase must keep the median within 2x of idle.

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s -p no:cacheprovider
tests/bench/test_search_bystander.py`.
"""

from __future__ import annotations

import asyncio
import random
import statistics
import time
from collections.abc import Sequence

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.helpers.factories import make_record, make_user
from tests.helpers.settings import SettingsFactory
from tests.helpers.web import advance, transcribe
from transcriber.domain.search import Query
from transcriber.ports import Utterance
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock
from transcriber.web import keys
from transcriber.web.match_pool import MATCH_POOL, MatchPool
from transcriber.web.matches import FoundMatches, structure_matches

pytestmark = pytest.mark.bench

SEARCHERS = 4
PHASE_SECONDS = 8.0
BYSTANDER_PAUSE = 0.02
SEARCH_PAUSE = 0.5  # 120 requests a minute: the default rate limit
QUERY = "по* ко* на* ра*"
_SYLLABLES = [
    "ба", "ва", "га", "да", "жа", "за", "ка", "ла", "ма", "на", "па", "ра", "са",
    "та", "ко", "по", "но", "ро", "то", "ле", "не", "ре", "те", "ми", "ни", "ри",
]


def _six_hours(seed: int) -> list[Utterance]:
    rng = random.Random(seed)
    vocabulary = ["".join(rng.choices(_SYLLABLES, k=rng.randint(1, 4))) for _ in range(6000)]
    return [Utterance(start_ms=n * 7200, end_ms=n * 7200 + 7000, channel=0,
                      text=" ".join(rng.choices(vocabulary, k=20)))
            for n in range(3000)]


def _on_a_thread(pool: MatchPool) -> None:
    """The matching as it ran before: a thread of the service's own interpreter."""

    async def matches(contents: Sequence[str | bytes | None], query: Query, *,
                      limit: int) -> list[FoundMatches]:
        return await asyncio.to_thread(structure_matches, list(contents), query, limit=limit,
                                       budget=pool.budget_seconds)

    pool.matches = matches  # type: ignore[method-assign]


async def _bystander(client: TestClient, until: float) -> list[float]:  # type: ignore[type-arg]
    samples = []
    while time.perf_counter() < until:
        started = time.perf_counter()
        async with client.get("/app/me", headers={"Remote-User": "bystander"}) as response:
            assert response.status == 200
            await response.read()
        samples.append((time.perf_counter() - started) * 1000)
        await asyncio.sleep(BYSTANDER_PAUSE)
    return samples


async def _searcher(client: TestClient, login: str, record_id: str,  # type: ignore[type-arg]
                    until: float) -> list[float]:
    seconds = []
    turn = 0
    while time.perf_counter() < until:
        started = time.perf_counter()
        path = f"/app/audiorecords/{record_id}/matches" if turn % 2 == 0 \
            else "/app/audiorecords"
        async with client.get(path, params={"q": QUERY},
                              headers={"Remote-User": login}) as response:
            assert response.status == 200, await response.text()
            await response.read()
        seconds.append(time.perf_counter() - started)
        turn += 1
        await asyncio.sleep(max(0.0, SEARCH_PAUSE - (time.perf_counter() - started)))
    return seconds


def _row(name: str, samples: list[float]) -> str:
    ordered = sorted(samples)
    p90 = ordered[int(len(ordered) * 0.9)]
    return (f"| {name} | {len(samples)} | {statistics.median(samples):.2f} ms | "
            f"{p90:.2f} ms | {max(samples):.1f} ms |")


async def test_a_bystander_under_four_searching_people(make_settings: SettingsFactory) -> None:
    # The bystander asks 50 times a second (no limit, to measure); the searchers pace
    # themselves to the default limit, 120 a minute.
    settings = make_settings(pipeline={"workers": 0}, server={"rate_limit_requests": 10**9})
    app = build_app(settings, clock=FakeClock())
    async with TestClient(TestServer(app)) as client:
        writer = app[keys.WRITER]
        await make_user(writer, "bystander")
        owned = []
        for n in range(SEARCHERS):
            login = f"searcher{n}"
            record_id = await make_record(writer, await make_user(writer, login))
            await transcribe(client, record_id, _six_hours(n))
            await advance(client, record_id)  # done: the next record is the one claimable
            owned.append((login, record_id))
        served = app[MATCH_POOL]
        await client.get(f"/app/audiorecords/{owned[0][1]}/matches", params={"q": "по*"},
                         headers={"Remote-User": owned[0][0]})  # the pool started

        async def phase(searching: bool) -> tuple[list[float], list[float]]:
            until = time.perf_counter() + PHASE_SECONDS
            searches = [asyncio.create_task(_searcher(client, login, record_id, until))
                        for login, record_id in owned] if searching else []
            bystander = await _bystander(client, until)
            waits = [s for task in searches for s in await task]
            return bystander, waits

        idle, _ = await phase(searching=False)
        pooled, pooled_waits = await phase(searching=True)
        _on_a_thread(served)
        threaded, threaded_waits = await phase(searching=True)
        del served.matches  # the pool's own again
        idle_after, _ = await phase(searching=False)
    print()
    print("| bystander's `GET /app/me` | requests | median | p90 | max |")
    print("|---|---|---|---|---|")
    print(_row("idle", idle + idle_after))
    print(_row("4 searching, matching in the pool's processes", pooled))
    print(_row("4 searching, matching on a thread (before)", threaded))
    for name, waits in (("pool", pooled_waits), ("thread", threaded_waits)):
        print(f"searches ({name}): {len(waits)}, median {statistics.median(waits):.3f} s, "
              f"max {max(waits):.3f} s")
    assert statistics.median(pooled) <= 2 * statistics.median(idle + idle_after)
