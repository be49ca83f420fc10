"""Same audio, same transcript: one real two-speaker recording through the real pipeline
(ffmpeg, Whisper with word times, the speaker engine with its turns found ahead), once
on one worker and one model run at a time, then uploaded twice at once on two workers
and two model runs: the three stored structures are the same bytes, and so are the
voices kept (the embedder's outputs, whichever path found the turns: ahead, taken
over or in the pool), and the speaker of the earliest utterance is S1
(docs/speakers.md, "Same audio, same transcript")."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Sequence
from pathlib import Path

import pytest
import structlog

from tests.helpers.pipeline import MakeActor
from tests.helpers.speaker_audio import real_two_speakers, write_wav
from tests.helpers.steps import AddRecord, record_row
from tests.helpers.whisper import MakeWhisper
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.domain.transcripts import STRUCTURE_ROW, load_structure
from transcriber.pipeline.actor import StepActor
from transcriber.pipeline.steps import build_step_table
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.speakers.ahead import Ahead, TurnsAhead
from transcriber.providers.speakers.separator import LocalSpeakerSeparator
from transcriber.settings import FfmpegSettings, RecognizerSettings, Settings
from transcriber.testing.clock import FakeClock

IDLE = ("empty", "deferred", "failure")


async def _finished(readers: ReaderPool, record_ids: Sequence[str]) -> bool:
    rows = [await record_row(readers, r) for r in record_ids]
    return all(row["state"] == Stage.DONE.value or row["halted_at"] is not None
               for row in rows)


async def _drive_together(actors: Sequence[StepActor], clock: FakeClock, readers: ReaderPool,
                          record_ids: Sequence[str], *, max_rounds: int = 80) -> None:
    """Every worker runs a step at once, round after round; the fake clock moves on only
    when none of them had work (a lease never runs out under a running recognition)."""
    for _ in range(max_rounds):
        if await _finished(readers, record_ids):
            return
        reports = await asyncio.gather(*(actor.run_once() for actor in actors))
        if all(report.outcome in IDLE for report in reports):
            clock.advance(5.0)
    raise AssertionError(f"records not done in {max_rounds} rounds")


async def _stored(readers: ReaderPool, record_id: str) -> tuple[bytes, list[tuple[object, ...]]]:
    """The record's structure as stored, and its voices (each speaker's print and the
    windows embedded: the embedder's outputs, as bytes)."""
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": STRUCTURE_ROW})
    assert structure is not None
    contents = structure["contents"]
    voices = await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": record_id})
    windows = await readers.fetch_one(q.voices.RECORD_WINDOWS, {"record_id": record_id})
    assert voices
    assert windows is not None
    kept = sorted((v["speaker"], v["talk_ms"], bytes(v["centroid"]), bytes(v["exemplars"]))
                  for v in voices)
    return (contents if isinstance(contents, bytes) else str(contents).encode(),
            [*kept, (bytes(windows["windows"]),)])


_take = TurnsAhead.take


def _take_when_finished(ahead: TurnsAhead, audio: Path, *,
                        num_speakers: int | None) -> Ahead | None:
    """`TurnsAhead.take` once the job is over (blocking, at most 120 s): its thread runs
    at the lowest priority, which a busy machine may not give it before the poll step."""
    job = _take(ahead, audio, num_speakers=num_speakers)
    deadline = time.monotonic() + 120
    while job is not None and not job.future.done() and time.monotonic() < deadline:
        time.sleep(0.05)
    return job


@pytest.mark.slow
async def test_the_same_file_gives_the_same_structure_on_one_worker_or_two_at_once(
    tmp_path: Path, add_record: AddRecord, make_actor: MakeActor, settings: Settings,
    clock: FakeClock, readers: ReaderPool, make_whisper: MakeWhisper,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    made = real_two_speakers(target_seconds=30.0, seed=21)
    if made is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    audio, reference = made
    source = write_wav(audio, tmp_path / "conversation.wav")
    structures: list[tuple[bytes, list[tuple[object, ...]]]] = []
    paths: list[str] = []
    for workers, concurrency, uploads in ((1, 1, 1), (2, 2, 2)):
        chosen = dataclasses.replace(
            settings, pipeline=dataclasses.replace(settings.pipeline, workers=workers),
            recognizer=dataclasses.replace(settings.recognizer, concurrency=concurrency))
        # As the service builds them: the separation in the recognizer's pool of model
        # runs, its turns found ahead beside the recognition at the lowest priority.
        whisper = make_whisper(RecognizerSettings(concurrency=concurrency))
        separator = LocalSpeakerSeparator.in_pool(whisper.model_runs)
        ffmpeg = FfmpegTranscoder(FfmpegSettings())
        steps = build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=whisper,
                                 store=None, separator=separator)
        try:
            record_ids = [await add_record(source) for _ in range(uploads)]
            actors = [make_actor(steps, chosen, name=f"step-actor-{n}") for n in range(workers)]
            with monkeypatch.context() as patch, structlog.testing.capture_logs() as logs:
                if workers == 1:
                    # The first time the turns are found ahead, whole; the second time the
                    # jobs at the lowest priority are taken over or left to the pool.
                    patch.setattr(TurnsAhead, "take", _take_when_finished)
                await _drive_together(actors, clock, readers, record_ids)
            paths += [e["found"] for e in logs if e["event"] == "speaker_turns_taken"]
            structures += [await _stored(readers, r) for r in record_ids]
        finally:
            await separator.close()
            await whisper.close()
    assert len(structures) == 3
    assert paths[0] == "ahead"  # the others: "taken_over", or none (the pool's own)
    assert structures[1] == structures[0]
    assert structures[2] == structures[0]
    utterances = load_structure(structures[0][0])
    speakers = [u.speaker for u in utterances]
    assert set(speakers) == {"S1", "S2"}
    # Numbered by first appearance: the earliest utterance's speaker is S1, and the
    # recording's first voice (the reader, "A") is the one labelled S1.
    assert utterances[0].speaker == "S1"
    assert reference[0].speaker == "A"
    first_b = next(s for s in reference if s.speaker == "B")
    inside = [u.speaker for u in utterances
              if first_b.start_ms <= (u.start_ms + u.end_ms) // 2 <= first_b.end_ms]
    assert inside
    assert set(inside) == {"S2"}
