"""A tiny ONNX model with GigaAM v3 CTC's inputs and outputs, built with `onnx`'s helper API.

GigaAM's CTC export (what onnx-asr loads as `gigaam-v3-ctc`) takes `features`
[batch, 64, frames] (log-mel, 10 ms a frame) and `feature_lengths` [batch], and answers
`log_probs` [batch, frames', vocabulary] with frames' = (frames - 1) // 4 + 1 (40 ms an
output frame). This one ignores the sound and answers a hand-set table of log
probabilities cut to the input's length, so it emits a known token sequence at known
output frames: the real onnx-asr loading path, its preprocessor and CTC decoding, and
our alignment of frames to word times run on it and can be checked to the millisecond.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from transcriber.providers.model_folder import GIGAAM_ONNX, manifest_of

BLANK = "<blk>"
ALPHABET = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
VOCAB: tuple[str, ...] = ("\u2581", *ALPHABET, BLANK)
FRAME_SECONDS = 0.04
MAX_FRAMES = 4000  # 160 s of sound: more than any part a test sends


def frames_for(words: Sequence[tuple[str, int]], total: int = MAX_FRAMES) -> list[str | None]:
    """The token emitted at each output frame (None: blank) for `words`, each
    `(word, first frame)`, its letters on consecutive frames after a word-boundary token."""
    frames: list[str | None] = [None] * total
    for word, first in words:
        frames[first] = "\u2581"
        for offset, letter in enumerate(word, start=1):
            frames[first + offset] = letter
    return frames


def build_model(folder: Path, words: Sequence[tuple[str, int]], *,
                name: str = "gigaam-v3", languages: tuple[str, ...] = ("ru",)) -> Path:
    """Write the model, its vocabulary, config and manifest into `folder`; return it."""
    import onnx  # noqa: PLC0415 - a test-only package
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415

    folder.mkdir(parents=True, exist_ok=True)
    index = {token: i for i, token in enumerate(VOCAB)}
    table = np.full((1, MAX_FRAMES, len(VOCAB)), -20.0, dtype=np.float32)
    for frame, token in enumerate(frames_for(words)):
        table[0, frame, index[token if token is not None else BLANK]] = -0.01
    int64 = TensorProto.INT64
    nodes = [
        helper.make_node("Shape", ["features"], ["shape"]),
        helper.make_node("Gather", ["shape", "axis0"], ["batch"], axis=0),
        helper.make_node("Gather", ["shape", "axis2"], ["frames"], axis=0),
        helper.make_node("Sub", ["frames", "one"], ["less"]),
        helper.make_node("Div", ["less", "four"], ["quarter"]),
        helper.make_node("Add", ["quarter", "one"], ["out_frames"]),
        helper.make_node("Slice", ["table", "zero", "out_frames", "axis1"], ["cut"]),
        helper.make_node("Concat", ["batch", "out_frames", "vocab"], ["out_shape"], axis=0),
        helper.make_node("Expand", ["cut", "out_shape"], ["log_probs"]),
    ]
    inits = [
        numpy_helper.from_array(table, "table"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "axis0"),
        numpy_helper.from_array(np.array([2], dtype=np.int64), "axis2"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "one"),
        numpy_helper.from_array(np.array([4], dtype=np.int64), "four"),
        numpy_helper.from_array(np.array([0], dtype=np.int64), "zero"),
        numpy_helper.from_array(np.array([1], dtype=np.int64), "axis1"),
        numpy_helper.from_array(np.array([len(VOCAB)], dtype=np.int64), "vocab"),
    ]
    graph = helper.make_graph(
        nodes, "gigaam_v3_ctc_tiny",
        [helper.make_tensor_value_info("features", TensorProto.FLOAT, ["batch", 64, "frames"]),
         helper.make_tensor_value_info("feature_lengths", int64, ["batch"])],
        [helper.make_tensor_value_info("log_probs", TensorProto.FLOAT,
                                       ["batch", "out_frames", len(VOCAB)])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(folder / "v3_ctc.onnx"))
    (folder / "v3_vocab.txt").write_text(
        "".join(f"{token} {i}\n" for i, token in enumerate(VOCAB)), encoding="utf-8")
    (folder / "config.json").write_text(
        '{"model_type": "gigaam", "version": "v3", "features_size": 64, '
        '"subsampling_factor": 4}\n', encoding="utf-8")
    manifest = manifest_of(folder, name=name, kind=GIGAAM_ONNX, languages=languages)
    (folder / "manifest.json").write_bytes(manifest.to_json())
    return folder
