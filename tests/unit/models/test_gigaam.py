"""GigaAM through onnx-asr: tiny models with GigaAM v3's inputs and outputs, CTC and
RNN-T (tests/helpers/gigaam_model.py), loaded by onnx-asr's real path from a verified
folder, their token frames turned into word times, a tampered folder refused, the one
export of a folder told from its files."""

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
from transcriber.providers.model_folder import GigaamExport, ModelRefused, gigaam_export
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


@pytest.mark.parametrize(("export", "suffix"), [("ctc", ""), ("rnnt", ""), ("ctc", ".int8"),
                                               ("rnnt", ".int8")])
def test_onnx_asr_loads_the_verified_folder_and_answers_word_times(
        tmp_path: Path, export: str, suffix: str) -> None:
    build_model(tmp_path / "gigaam-v3", WORDS, export=export, suffix=suffix)
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
    # The frame of each first letter (CTC: its run's first frame; RNN-T: the frame the
    # transducer emitted it at), 40 ms a frame, on the part's timeline.
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


@pytest.mark.parametrize("export", ["e2e-ctc", "e2e-rnnt"])
def test_an_e2e_export_keeps_its_capitals_and_punctuation(tmp_path: Path, export: str) -> None:
    build_model(tmp_path / "gigaam-v3", [("Привет,", 5), ("мир.", 20)], export=export)
    answer = read_local_payload(_gigaam(tmp_path).recognize(
        np.zeros(16_000 * 4, dtype=np.float32), [(0.5, 3.0)], threading.Event()))
    assert [u.text for u in answer.utterances] == ["Привет, мир."]
    clip_start = 0.5 - 0.3  # the clip's padding
    assert [(w.text, w.start_ms, w.end_ms) for u in answer.utterances for w in u.words] == [
        ("Привет,", round((clip_start + 6 * 0.04) * 1000), round((clip_start + 13 * 0.04) * 1000)),
        ("мир.", round((clip_start + 21 * 0.04) * 1000), round((clip_start + 25 * 0.04) * 1000))]


def test_a_tampered_rnnt_joint_is_refused_and_never_loaded(tmp_path: Path) -> None:
    folder = build_model(tmp_path / "gigaam-v3", WORDS, export="rnnt")
    with (folder / "v3_rnnt_joint.onnx").open("ab") as handle:
        handle.write(b"\0")
    model = _gigaam(tmp_path)
    with pytest.raises(TransientFailure, match=r"gigaam-v3/v3_rnnt_joint\.onnx does not match"):
        model.recognize(np.zeros(16_000 * 3, dtype=np.float32), [(0.5, 2.5)],
                        threading.Event())
    assert model.release() is False


RNNT = ["v3_rnnt_encoder.onnx", "v3_rnnt_decoder.onnx", "v3_rnnt_joint.onnx", "v3_vocab.txt"]


@pytest.mark.parametrize(("files", "export"), [
    (["v3_ctc.onnx", "v3_vocab.txt", "config.json"], GigaamExport(model="gigaam-v3-ctc",
                                                                  quantization=None)),
    ([*RNNT, "config.json"], GigaamExport(model="gigaam-v3-rnnt", quantization=None)),
    ([n.replace(".onnx", ".int8.onnx") for n in RNNT],
     GigaamExport(model="gigaam-v3-rnnt", quantization="int8")),
    (["v3_e2e_ctc.onnx", "v3_e2e_ctc_vocab.txt"],
     GigaamExport(model="gigaam-v3-e2e-ctc", quantization=None)),
    ([n.replace("v3_", "v3_e2e_") for n in RNNT[:3]] + ["v3_e2e_rnnt_vocab.txt"],
     GigaamExport(model="gigaam-v3-e2e-rnnt", quantization=None)),
])
def test_a_folder_s_export_is_told_from_its_files(files: list[str],
                                                  export: GigaamExport) -> None:
    assert gigaam_export(files, folder="gigaam-v3") == export


@pytest.mark.parametrize(("files", "message"), [
    (["v3_ctc.onnx"], "holds no GigaAM v3 export"),  # no vocabulary
    (RNNT[1:], "holds no GigaAM v3 export"),  # the encoder missing
    (["sub/v3_ctc.onnx", "v3_vocab.txt"], "holds no GigaAM v3 export"),  # not at the top
    ([*RNNT, "v3_ctc.onnx"], r"more than one GigaAM export \(gigaam-v3-ctc, gigaam-v3-rnnt\)"),
    (["v3_ctc.onnx", "v3_ctc.int8.onnx", "v3_vocab.txt"],
     r"more than one GigaAM export \(gigaam-v3-ctc, gigaam-v3-ctc int8\)"),
])
def test_a_folder_with_no_export_or_two_is_refused(files: list[str], message: str) -> None:
    with pytest.raises(ModelRefused, match=message):
        gigaam_export(files, folder="gigaam-v3")
