"""GigaAM through onnx-asr: a tiny model with GigaAM v3 CTC's inputs and outputs
(tests/helpers/gigaam_model.py) loaded by onnx-asr's real path from a verified folder,
its CTC frames turned into word times, a tampered folder refused."""

from __future__ import annotations

import threading
from pathlib import Path

import numpy as np
import orjson
import pytest

from tests.helpers.gigaam_model import FRAME_SECONDS, build_model
from transcriber.core.errors import TransientFailure
from transcriber.providers.clips import Loudness, plan_clips
from transcriber.providers.gigaam import GigaamModel, TimedWord, frame_words, utterances_of
from transcriber.providers.model_runs import ModelRuns
from transcriber.providers.whisper_answer import read_local_payload

WORDS = [("привет", 5), ("мир", 20)]


def test_frame_words_put_each_word_from_its_first_to_its_last_letter() -> None:
    tokens = [" ", "п", "р", "и", " ", "м", "и", "р"]
    times = [0.2, 0.24, 0.28, 0.32, 0.8, 0.84, 0.88, 0.92]
    words = frame_words(tokens, times, [-0.1] * 8, offset=10.0, frame_seconds=0.04)
    assert [(w.text, w.start, w.end) for w in words] == [
        ("при", 10.24, 10.36), ("мир", 10.84, 10.96)]
    assert words[0].probability == pytest.approx(np.exp(-0.4))
    assert frame_words([], [], None, offset=0.0, frame_seconds=0.04) == []


def test_a_long_pause_starts_a_new_utterance() -> None:
    def word(start: float) -> TimedWord:
        return TimedWord(start=start, end=start + 0.3, text="да", probability=None)

    groups = utterances_of([word(0.0), word(0.5), word(2.0), word(2.4)])
    assert [len(g) for g in groups] == [2, 2]


def _gigaam(models: Path) -> GigaamModel:
    return GigaamModel(models_dir=models, name="gigaam-v3", language="ru",
                       model_runs=ModelRuns(concurrency=1, threads=1))


def test_onnx_asr_loads_the_verified_folder_and_answers_word_times(tmp_path: Path) -> None:
    build_model(tmp_path / "gigaam-v3", WORDS)
    model = _gigaam(tmp_path)
    audio = np.random.default_rng(7).normal(0, 0.05, 16_000 * 30).astype(np.float32)
    regions = [(1.0, 3.0), (25.0, 27.0)]  # two clips: each emits the model's words
    payload = model.recognize(audio, regions, threading.Event())
    answer = read_local_payload(payload)
    clips = plan_clips(regions, duration=30.0, quietest=Loudness(audio).quietest,
                       max_seconds=20.0)
    assert len(clips) == 2
    words = [w for u in answer.utterances for w in u.words]
    assert [w.text for w in words] == ["привет", "мир"] * 2
    # The CTC frame of each first letter, 40 ms a frame, on the part's timeline.
    expected = [clip.start + frame * FRAME_SECONDS for clip in clips
                for frame in (WORDS[0][1] + 1, WORDS[1][1] + 1)]
    assert [w.start_ms for w in words] == [round(t * 1000) for t in expected]
    assert words[0].end_ms == round((clips[0].start + 11 * FRAME_SECONDS + 0.04) * 1000)
    assert (answer.model, answer.language) == ("gigaam-v3", "ru")
    assert answer.speech is not None
    assert len(answer.speech) == 2
    assert orjson.loads(payload)["provider"] == "local"
    assert all(w.probability is not None and w.probability > 0.9 for w in words)


def test_a_tampered_folder_is_refused_and_never_loaded(tmp_path: Path) -> None:
    folder = build_model(tmp_path / "gigaam-v3", WORDS)
    vocab = folder / "v3_vocab.txt"
    vocab.write_text(vocab.read_text(encoding="utf-8").replace("п 17", "р 17"),
                     encoding="utf-8")
    model = _gigaam(tmp_path)
    audio = np.zeros(16_000 * 3, dtype=np.float32)
    with pytest.raises(TransientFailure, match=r"gigaam-v3/v3_vocab\.txt does not match"):
        model.recognize(audio, [(0.5, 2.5)], threading.Event())
    assert model.release() is False  # nothing was loaded


def test_the_vocabulary_puts_a_near_miss_right(tmp_path: Path) -> None:
    build_model(tmp_path / "gigaam-v3", [("тимафей", 5), ("пришёл", 20)])
    model = _gigaam(tmp_path)
    audio = np.zeros(16_000 * 4, dtype=np.float32)
    plain = read_local_payload(model.recognize(audio, [(0.5, 3.0)], threading.Event()))
    told = read_local_payload(model.recognize(audio, [(0.5, 3.0)], threading.Event(),
                                              ("Тимофей", "GitLab")))
    assert [u.text for u in plain.utterances] == ["тимафей пришёл"]
    assert [w.text for u in told.utterances for w in u.words] == ["Тимофей", "пришёл"]
    assert [u.text for u in told.utterances] == ["Тимофей пришёл"]
