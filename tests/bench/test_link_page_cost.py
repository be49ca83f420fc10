"""What a link for people outside costs a request: its page (one lookup by the secret's
hash, the record and its transcript read, the opening counted through the writer), its
TXT download, and a secret that opens nothing, against the owner's own card.

The whole app over real HTTP on loopback (aiohttp's test server, one client), a
record of an hour's meeting (900 utterances, two speakers). Rounds alternate
between the requests; the medians per request are printed for docs/sharing.md.

Run: `PYTHONPATH=$PWD python -m pytest -m bench -s -p no:cacheprovider
tests/bench/test_link_page_cost.py`.
"""

from __future__ import annotations

import statistics
import time

import pytest
from aiohttp.test_utils import TestClient, TestServer

from tests.helpers.settings import SettingsFactory
from tests.helpers.web import transcribe, upload
from transcriber.ports import Utterance
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys

pytestmark = pytest.mark.bench

ROUNDS = 7
PER_ROUND = 40
MEETING = tuple(
    Utterance(start_ms=n * 4000, end_ms=n * 4000 + 3800, channel=0, speaker=f"S{n % 2 + 1}",
              text=f"Sentence number {n} of the meeting, with a few more words in it.")
    for n in range(900))


async def test_a_link_page_against_the_owners_card(make_settings: SettingsFactory) -> None:
    settings = make_settings(pipeline={"workers": 0},
                             server={"rate_limit_requests": 10**9},
                             links={"requests_per_minute": 10**9})
    app = build_app(settings, clock=FakeClock())
    app[keys.TRANSCODER] = FakeTranscoder(duration_ms=3_600_000)
    async with TestClient(TestServer(app)) as client:
        record_id = str((await upload(client))["id"])
        await transcribe(client, record_id, MEETING)
        made = await (await client.post(f"/app/audiorecords/{record_id}/links",
                                        json={})).json()
        url = made["url"]
        ways = {"the owner's card (JSON)": f"/app/audiorecords/{record_id}",
                "the link's page (HTML, counted)": url,
                "the link's TXT": f"{url}/transcript?format=txt",
                "a secret that opens nothing (404)": "/s/" + "A" * 32}
        samples: dict[str, list[float]] = {name: [] for name in ways}
        for _ in range(ROUNDS):
            for name, path in ways.items():
                started = time.perf_counter()
                for _ in range(PER_ROUND):
                    async with client.get(path) as response:
                        assert response.status in (200, 404)
                        await response.read()
                samples[name].append((time.perf_counter() - started) * 1000 / PER_ROUND)
    print()
    for name, values in samples.items():
        print(f"| {name} | {statistics.median(values):.2f} ms |")
