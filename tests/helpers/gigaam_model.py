"""Tiny ONNX models with GigaAM v3's inputs and outputs (the CTC export and the RNN-T
one), built with `onnx`'s helper API.

GigaAM's CTC export (what onnx-asr loads as `gigaam-v3-ctc`) takes `features`
[batch, 64, frames] (log-mel, 10 ms a frame) and `feature_lengths` [batch], and answers
`log_probs` [batch, frames', vocabulary] with frames' = (frames - 1) // 4 + 1 (40 ms an
output frame). This one ignores the sound and answers a hand-set table of log
probabilities cut to the input's length, so it emits a known token sequence at known
output frames: the real onnx-asr loading path, its preprocessor and CTC decoding, and
our alignment of frames to word times run on it and can be checked to the millisecond.

The RNN-T export is three models: the encoder (`audio_signal` [batch, 64, frames],
`length` → `encoded` [batch, dims, frames'], `encoded_len` int32), the prediction
network (`x` the last token, `h.1`, `c.1` [1, 1, 320] → `dec`, `h`, `c`) and the joint
(`enc` [1, dims, 1], `dec` → `joint`, the token logits), decoded greedily by onnx-asr
(up to 3 tokens a frame). This one's encoder answers, per output frame, which token
positions are due there (a hand-set table); its prediction network counts the tokens
emitted in `h`; its joint emits the next token when its position is due at this frame,
else the blank. So it emits a known token sequence at known frames too, through
onnx-asr's real transducer decoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from transcriber.providers.model_folder import GIGAAM_ONNX, manifest_of

if TYPE_CHECKING:
    from onnx import GraphProto
    from onnx import TensorProto as Tensor

BLANK = "<blk>"
ALPHABET = "абвгдеёжзийклмнопрстуфхцчшщъыьэюя"
# Capitals and punctuation for the e2e exports (their own vocabulary file).
VOCAB: tuple[str, ...] = ("\u2581", *ALPHABET, *ALPHABET.upper(), ",", ".", BLANK)
FRAME_SECONDS = 0.04
MAX_FRAMES = 4000  # 160 s of sound: more than any part a test sends


def schedule(words: Sequence[tuple[str, int]]) -> list[tuple[str, int]]:
    """`(token, output frame)` for `words` as `frames_for` lays them out, in order."""
    return [(token, frame) for frame, token in enumerate(frames_for(words))
            if token is not None]


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
                name: str = "gigaam-v3", languages: tuple[str, ...] = ("ru",),
                export: str = "ctc", suffix: str = "") -> Path:
    """Write the model (`export` "ctc", "rnnt", "e2e-ctc" or "e2e-rnnt", named as
    GigaAM's; `suffix` ".int8" names its files as the quantized export), its vocabulary,
    config and manifest into `folder`; return it."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = "v3_" + export.replace("-", "_")
    if export.endswith("rnnt"):
        _rnnt(folder, words, stem, suffix)
    else:
        _ctc(folder, words, stem, suffix)
    vocab = f"{stem}_vocab.txt" if export.startswith("e2e") else "v3_vocab.txt"
    (folder / vocab).write_text(
        "".join(f"{token} {i}\n" for i, token in enumerate(VOCAB)), encoding="utf-8")
    (folder / "config.json").write_text(
        '{"model_type": "gigaam", "version": "v3", "features_size": 64, '
        '"subsampling_factor": 4}\n', encoding="utf-8")
    manifest = manifest_of(folder, name=name, kind=GIGAAM_ONNX, languages=languages)
    (folder / "manifest.json").write_bytes(manifest.to_json())
    return folder


def _ctc(folder: Path, words: Sequence[tuple[str, int]], stem: str, suffix: str) -> None:
    import onnx  # noqa: PLC0415 - a test-only package
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415

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
    onnx.save(model, str(folder / f"{stem}{suffix}.onnx"))


PRED_HIDDEN = 320  # onnx-asr's state size for GigaAM's prediction network
DUE_LOGIT, BLANK_LOGIT = 20.0, 10.0


def _save(graph: GraphProto, path: Path) -> None:
    import onnx  # noqa: PLC0415 - a test-only package
    from onnx import helper  # noqa: PLC0415

    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def _rnnt(folder: Path, words: Sequence[tuple[str, int]], stem: str, suffix: str) -> None:
    from onnx import TensorProto, helper, numpy_helper  # noqa: PLC0415 - test-only

    due = schedule(words)
    positions = len(due)
    index = {token: i for i, token in enumerate(VOCAB)}
    int64, floats = TensorProto.INT64, TensorProto.FLOAT

    def const(name: str, value: object, dtype: npt.DTypeLike = np.int64) -> Tensor:
        return numpy_helper.from_array(np.asarray(value, dtype=dtype), name)

    # Encoder: `encoded[0, k, t]` is 1 where token k is due at output frame t.
    table = np.zeros((1, positions, MAX_FRAMES), dtype=np.float32)
    for k, (_, frame) in enumerate(due):
        table[0, k, frame] = 1.0
    _save(helper.make_graph(
        [helper.make_node("Shape", ["audio_signal"], ["shape"]),
         helper.make_node("Gather", ["shape", "axis0"], ["batch"], axis=0),
         helper.make_node("Gather", ["shape", "axis2"], ["frames"], axis=0),
         helper.make_node("Sub", ["frames", "one"], ["less"]),
         helper.make_node("Div", ["less", "four"], ["quarter"]),
         helper.make_node("Add", ["quarter", "one"], ["out_frames"]),
         helper.make_node("Slice", ["table", "zero", "out_frames", "axis2"], ["cut"]),
         helper.make_node("Concat", ["batch", "dims", "out_frames"], ["out_shape"], axis=0),
         helper.make_node("Expand", ["cut", "out_shape"], ["encoded"]),
         helper.make_node("Sub", ["length", "one"], ["length_less"]),
         helper.make_node("Div", ["length_less", "four"], ["length_quarter"]),
         helper.make_node("Add", ["length_quarter", "one"], ["length_out"]),
         helper.make_node("Cast", ["length_out"], ["encoded_len"], to=TensorProto.INT32)],
        "gigaam_v3_rnnt_encoder_tiny",
        [helper.make_tensor_value_info("audio_signal", floats, ["batch", 64, "frames"]),
         helper.make_tensor_value_info("length", int64, ["batch"])],
        [helper.make_tensor_value_info("encoded", floats, ["batch", positions, "out_frames"]),
         helper.make_tensor_value_info("encoded_len", TensorProto.INT32, ["batch"])],
        [numpy_helper.from_array(table, "table"), const("axis0", [0]), const("axis2", [2]),
         const("one", [1]), const("four", [4]), const("zero", [0]),
         const("dims", [positions])]),
        folder / f"{stem}_encoder{suffix}.onnx")
    # Prediction network: `h[0, 0, 0]` counts its runs (one per token emitted, and the
    # first); `x` is read (times 0) so the input stays the model's.
    first = np.zeros((1, 1, PRED_HIDDEN), dtype=np.float32)
    first[0, 0, 0] = 1.0
    state = [1, 1, PRED_HIDDEN]
    _save(helper.make_graph(
        [helper.make_node("Cast", ["x"], ["x_float"], to=floats),
         helper.make_node("Mul", ["x_float", "nothing"], ["x_zero"]),
         helper.make_node("Add", ["h.1", "step"], ["counted"]),
         helper.make_node("Add", ["counted", "x_zero"], ["h"]),
         helper.make_node("Identity", ["h"], ["dec"]),
         helper.make_node("Identity", ["c.1"], ["c"])],
        "gigaam_v3_rnnt_decoder_tiny",
        [helper.make_tensor_value_info("x", int64, [1, 1]),
         helper.make_tensor_value_info("h.1", floats, state),
         helper.make_tensor_value_info("c.1", floats, state)],
        [helper.make_tensor_value_info("dec", floats, state),
         helper.make_tensor_value_info("h", floats, state),
         helper.make_tensor_value_info("c", floats, state)],
        [numpy_helper.from_array(first, "step"), const("nothing", 0.0, np.float32)]),
        folder / f"{stem}_decoder{suffix}.onnx")
    # Joint: the position due next (the count less one) scored against the frame's
    # due positions; a due one gives its token's logit, else the blank wins.
    tokens = np.zeros((positions, len(VOCAB)), dtype=np.float32)
    for k, (token, _) in enumerate(due):
        tokens[k, index[token]] = DUE_LOGIT
    bias = np.zeros(len(VOCAB), dtype=np.float32)
    bias[index[BLANK]] = BLANK_LOGIT
    numbers = np.arange(1, positions + 1, dtype=np.float32).reshape(1, positions, 1)
    _save(helper.make_graph(
        [helper.make_node("Slice", ["dec", "zero", "one", "axis1"], ["count"]),
         helper.make_node("Equal", ["numbers", "count"], ["next_mask"]),
         helper.make_node("Cast", ["next_mask"], ["next"], to=floats),
         helper.make_node("Mul", ["enc", "next"], ["scored"]),
         helper.make_node("Reshape", ["scored", "flat"], ["row"]),
         helper.make_node("MatMul", ["row", "tokens"], ["logits"]),
         helper.make_node("Add", ["logits", "bias"], ["joint"])],
        "gigaam_v3_rnnt_joint_tiny",
        [helper.make_tensor_value_info("enc", floats, [1, positions, 1]),
         helper.make_tensor_value_info("dec", floats, [1, PRED_HIDDEN, 1])],
        [helper.make_tensor_value_info("joint", floats, [1, len(VOCAB)])],
        [const("zero", [0]), const("one", [1]), const("axis1", [1]),
         const("flat", [1, positions]), numpy_helper.from_array(numbers, "numbers"),
         numpy_helper.from_array(tokens, "tokens"), numpy_helper.from_array(bias, "bias")]),
        folder / f"{stem}_joint{suffix}.onnx")
