"""SpeechKit polling holds its delay per operation (docs/recognition.md): a record split
into parts whose operations started at different times (each part's upload takes its
time) is checked part by part, and no operation is asked again sooner than
`poll_delay_seconds` after its last check. It was 0.46 s apart for 2 of 6 operations
with `poll_delay_seconds = 2`: a run woken for one part checked every part.

The fake clock moves only when the test moves it (0.77 s per submit, as an upload
would; 0.1 s per idle run), and the fake SpeechKit stamps each check with it."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace
from itertools import pairwise
from pathlib import Path

import pytest

from tests.helpers.pipeline import MakeActor
from tests.helpers.silence import CopyTranscoder, silence_minutes
from tests.helpers.steps import AddRecord, record_row, sk_table
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.pipeline.steps.poll import poll_wait
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.quota import CallBudget
from transcriber.providers.speechkit import SpeechkitRecognizer
from transcriber.settings import Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.fake_speechkit import FakeSpeechkit

DELAY = 2.0


@pytest.fixture(scope="module")
def six_minutes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return silence_minutes(tmp_path_factory.mktemp("six"), 6)


async def test_each_operations_checks_are_at_least_the_delay_apart(
    add_record: AddRecord, make_actor: MakeActor, sk_settings: Settings, clock: FakeClock,
    readers: ReaderPool, store: S3ObjectStore, speechkit: FakeSpeechkit,
    six_minutes: Path,
) -> None:
    settings = replace(
        sk_settings, speechkit=replace(sk_settings.speechkit, max_part_seconds=60),
        pipeline=replace(sk_settings.pipeline, poll_delay_seconds=DELAY))
    speechkit.pending_polls = 3
    speechkit.clock = lambda: clock.now().timestamp()
    speechkit.after_submit = lambda: clock.advance(0.77)
    recognizer = SpeechkitRecognizer(settings.speechkit, budget=CallBudget(
        limit=settings.speechkit.status_checks_per_hour, window_seconds=3600, clock=clock))
    try:
        record_id = await add_record(six_minutes)
        actor = make_actor(sk_table(recognizer, store, transcoder=CopyTranscoder()), settings)
        for _ in range(3000):
            row = await record_row(readers, record_id)
            if row["state"] == Stage.DONE.value or row["halted_at"] is not None:
                break
            report = await actor.run_once()
            if report.outcome in ("empty", "deferred", "failure"):
                clock.advance(0.1)
    finally:
        await recognizer.close()
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    parts = await readers.fetch_all(q.recognition.SELECT_RECOGNITIONS, {"record_id": record_id})
    assert len(parts) >= 6
    checks: dict[str, list[float]] = defaultdict(list)
    for operation, at in speechkit.poll_times:
        checks[operation].append(at)
    assert len(checks) == len(parts)
    for times in checks.values():
        assert len(times) == 4  # three answers "running", then done: no extra checks
        gaps = [later - earlier for earlier, later in pairwise(times)]
        assert min(gaps) >= DELAY - 1e-6, gaps


def test_the_wait_is_the_later_of_the_first_delay_and_the_own_delay() -> None:
    started = "2026-01-01T00:00:00Z"
    start = 1767225600.0
    assert poll_wait(started, None, now_seconds=start + 3, first_delay_seconds=10,
                     delay_seconds=2) == pytest.approx(7)
    assert poll_wait(started, start + 10.5, now_seconds=start + 11, first_delay_seconds=10,
                     delay_seconds=2) == pytest.approx(1.5)
    assert poll_wait(started, start + 10, now_seconds=start + 13, first_delay_seconds=10,
                     delay_seconds=2) <= 0
    assert poll_wait(None, None, now_seconds=start, first_delay_seconds=10,
                     delay_seconds=2) == 0
