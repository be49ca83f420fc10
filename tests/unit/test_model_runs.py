"""Recognition and the speaker engine share one pool of model runs (`providers.model_runs`)."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from transcriber.providers.model_runs import ModelRuns, threads_per_run
from transcriber.providers.speakers.separator import LocalSpeakerSeparator
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.service.providers import speaker_separator
from transcriber.settings import RecognizerSettings
from transcriber.testing.recognizer import FakeRecognizer


@pytest.mark.parametrize(("cpu_threads", "cpu_count", "expected"), [
    (3, 64, 3),     # the owner's setting, as the recognizer takes it
    (0, 64, 4),     # ctranslate2's default: four at most
    (0, 2, 2),
    (0, 1, 1),
    (0, None, 1),   # the count unknown
])
def test_a_run_takes_a_recognitions_threads(cpu_threads: int, cpu_count: int | None,
                                             expected: int) -> None:
    assert threads_per_run(cpu_threads, cpu_count) == expected


async def test_runs_beyond_the_concurrency_wait_for_the_one_going() -> None:
    runs = ModelRuns(concurrency=1, threads=2)
    first_started, release, second_started = (threading.Event() for _ in range(3))
    order: list[str] = []

    def first() -> str:
        order.append("first started")
        first_started.set()
        release.wait(10)
        order.append("first ended")
        return threading.current_thread().name

    def second() -> str:
        order.append("second started")
        second_started.set()
        return "second"

    try:
        going = asyncio.ensure_future(runs.run(first))
        waiting = asyncio.ensure_future(runs.run(second))
        assert await asyncio.to_thread(first_started.wait, 10)
        # A pool of two would start the second now; this one must not.
        assert not await asyncio.to_thread(second_started.wait, 0.05)
        release.set()
        name, other = await asyncio.gather(going, waiting)
    finally:
        release.set()
        runs.close()
    assert order == ["first started", "first ended", "second started"]
    assert name.startswith("model-run")
    assert other == "second"


async def test_the_service_separates_in_the_local_recognizers_pool(tmp_path: Path) -> None:
    recognizer = WhisperRecognizer(RecognizerSettings(cpu_threads=3), cache_dir=tmp_path,
                                   default_time_limit_seconds=60)
    try:
        separator = speaker_separator(recognizer)
        assert isinstance(separator, LocalSpeakerSeparator)
        assert separator._runs is recognizer.model_runs
        assert recognizer.model_runs.threads == 3
        assert separator._ahead is not None  # its turns are found beside the recognition
        await separator.close()
    finally:
        await recognizer.close()
    # Another recognizer has no pool: the separator runs in a thread of its own.
    alone = speaker_separator(FakeRecognizer())
    assert isinstance(alone, LocalSpeakerSeparator)
    assert alone._runs is None
    assert alone._ahead is None


async def test_models_are_let_go_only_by_the_one_run_going() -> None:
    runs = ModelRuns(concurrency=2, threads=1)
    released: list[int] = []

    def release() -> bool:
        released.append(1)
        return True

    runs.keep_releasable(release)
    busy, done = threading.Event(), threading.Event()

    def other() -> None:
        busy.set()
        done.wait(10)

    try:
        beside = asyncio.ensure_future(runs.run(other))
        assert await asyncio.to_thread(busy.wait, 10)
        assert await runs.run(runs.release_models) is False  # another run may use them
        done.set()
        await beside
        assert await runs.run(runs.release_models) is True
    finally:
        done.set()
        runs.close()
    assert released == [1]


def test_the_recognizer_lets_its_model_go_and_loads_it_again(tmp_path: Path) -> None:
    recognizer = WhisperRecognizer(RecognizerSettings(), cache_dir=tmp_path,
                                   default_time_limit_seconds=60)
    assert recognizer.release_model() is False  # nothing loaded yet
    recognizer._model = object()  # as `load` leaves it
    assert recognizer.model_runs.release_models() is True
    assert recognizer._model is None
