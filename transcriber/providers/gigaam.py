"""GigaAM v3 (CTC or RNN-T, ONNX) from the operator's models folder, through onnx-asr.

GigaAM v3 (Sber's Russian recognizer, MIT) is loaded by `onnx-asr` on the onnxruntime
the service already has (numpy only, no torch); the folder is verified against its
manifest first (`model_folder.load_verified`), its one export told from its files
(`model_folder.gigaam_export`: CTC, RNN-T, their punctuated e2e forms, full or int8),
and onnx-asr is given the folder itself, so it never reaches a hub. A part is cut into
clips of speech (the service's one VAD, `speech_regions`, and `plan_clips`, at most
`CLIP_SECONDS` each: the model is trained on short utterances), the clips decoded one
by one, and each token's output frame turned into a time (`frame_words`): a word runs
from its first letter's frame to its last letter's frame plus one frame (40 ms). Both
decodings give one frame per token: CTC the first frame of a run of the token, RNN-T
the encoder frame the transducer emitted it at. The answer is the local recognizer's
saved JSON (`whisper_answer.read_local_payload` reads it), with `model` naming this
folder, so parts, speakers, search and subtitles run on it as on Whisper's.
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.domain.vocabulary import corrected, term_words
from transcriber.providers.clips import Loudness, plan_clips
from transcriber.providers.memory import release_free_memory
from transcriber.providers.model_folder import ModelRefused, gigaam_export, load_verified
from transcriber.providers.model_runs import ModelRuns
from transcriber.providers.onnx import quiet_onnxruntime
from transcriber.providers.recognizers import LOCAL

log = structlog.get_logger(__name__)

CLIP_SECONDS = 20.0
_RATE = 16_000
# A pause this long between two words starts a new utterance (the subtitles' cues and
# the speakers' segments are cut there).
UTTERANCE_PAUSE_SECONDS = 1.0


@dataclass(frozen=True, slots=True, kw_only=True)
class TimedWord:
    start: float
    end: float
    text: str
    probability: float | None


def frame_words(tokens: Sequence[str], times: Sequence[float],
                logprobs: Sequence[float] | None, *, offset: float,
                frame_seconds: float) -> list[TimedWord]:
    """Pure: CTC tokens (a leading space starts a word) with their frame times, as
    words on the part's timeline (`offset`: the clip's start)."""
    words: list[TimedWord] = []
    letters: list[str] = []
    first = last = 0.0
    score = 0.0

    def close() -> None:
        text = "".join(letters).strip()
        if text:
            words.append(TimedWord(start=round(offset + first, 3),
                                   end=round(offset + last + frame_seconds, 3), text=text,
                                   probability=None if logprobs is None
                                   else min(1.0, math.exp(score))))

    for i, token in enumerate(tokens):
        if token.startswith(" ") and letters:
            close()
            letters, score = [], 0.0
        if logprobs is not None:
            score += logprobs[i]  # the word's boundary token is part of its score
        if not token.strip():
            continue
        if not letters:
            first = times[i]
        letters.append(token)
        last = times[i]
    close()
    return words


def utterances_of(words: Sequence[TimedWord]) -> list[list[TimedWord]]:
    """Pure: words grouped into utterances at pauses of `UTTERANCE_PAUSE_SECONDS`."""
    groups: list[list[TimedWord]] = []
    for word in words:
        if groups and word.start - groups[-1][-1].end < UTTERANCE_PAUSE_SECONDS:
            groups[-1].append(word)
        else:
            groups.append([word])
    return groups


def segments_of(words: Sequence[TimedWord]) -> list[dict[str, Any]]:
    """The saved answer's segments (times in ms, as the local recognizer saves them)."""
    return [{
        "start_ms": round(group[0].start * 1000), "end_ms": round(group[-1].end * 1000),
        "text": " ".join(w.text for w in group),
        "words": [{"start_ms": round(w.start * 1000), "end_ms": round(w.end * 1000),
                   "text": w.text, "probability": w.probability} for w in group],
    } for group in utterances_of(words)]


class GigaamModel:
    """One verified GigaAM folder, loaded on first use (in the pool of model runs) and
    released with the other models; `recognize` answers a part's saved JSON."""

    def __init__(self, *, models_dir: Path, name: str, language: str,
                 model_runs: ModelRuns) -> None:
        self.name = name
        self._models_dir = models_dir
        self._language = language
        self._lock = threading.Lock()
        self._asr: Any = None
        model_runs.keep_releasable(self.release)

    def load(self) -> Any:
        """Verify the folder (every file's SHA-256) and load it; `ModelRefused` when a
        file does not match: nothing of the folder is read by onnx-asr then."""
        with self._lock:
            if self._asr is None:
                started = time.perf_counter()
                manifest = load_verified(self._models_dir, self.name)
                export = gigaam_export(manifest.files, folder=self.name)
                quiet_onnxruntime()  # telemetry off before onnx-asr makes its sessions
                import onnx_asr  # noqa: PLC0415 - heavy, loaded only by its users

                try:
                    self._asr = onnx_asr.load_model(
                        export.model, str(self._models_dir / self.name),
                        quantization=export.quantization,
                        providers=["CPUExecutionProvider"]).with_timestamps()
                except (onnx_asr.utils.ModelLoadingError, OSError, RuntimeError,
                        ValueError) as exc:
                    raise ModelRefused(f"{self.name} cannot be loaded by onnx-asr "
                                       f"({type(exc).__name__})") from None
                log.info("gigaam_model_loaded", model=self.name, export=export.model,
                         quantization=export.quantization,
                         seconds=round(time.perf_counter() - started, 2))
            return self._asr

    def release(self) -> bool:
        with self._lock:
            held = self._asr is not None
            self._asr = None
        if held:
            release_free_memory()
        return held

    def recognize(self, audio: Any, regions: list[tuple[float, float]],
                  cancel: threading.Event, terms: Sequence[str] = ()) -> bytes:
        """The part's answer from its samples and speech regions (seconds)."""
        try:
            asr = self.load()
        except ModelRefused as exc:
            log.error("model_refused", model=self.name, reason=type(exc).__name__)
            raise TransientFailure(str(exc)) from None
        duration = len(audio) / _RATE
        clips = plan_clips(regions, duration=duration, quietest=Loudness(audio).quietest,
                           max_seconds=CLIP_SECONDS)
        words: list[TimedWord] = []
        for clip in clips:
            if cancel.is_set():
                raise TransientFailure("recognition cancelled")
            samples = audio[round(clip.start * _RATE):round(clip.end * _RATE)]
            if len(samples) < _RATE // 10:
                continue
            try:
                result = asr.recognize(samples, sample_rate=_RATE)
            except (RuntimeError, ValueError) as exc:
                raise PermanentFailure(
                    f"audio cannot be recognized ({type(exc).__name__})") from None
            words.extend(frame_words(result.tokens or [], result.timestamps or [],
                                     result.logprobs, offset=clip.start,
                                     frame_seconds=FRAME_SECONDS))
        if terms:
            # GigaAM takes no prompt: its near misses of the owner's names and
            # terms are put right instead (`domain.vocabulary.corrected`).
            known = term_words(terms)
            words = [dataclasses.replace(w, text=corrected(w.text, known)) for w in words]
        return orjson.dumps({
            "provider": LOCAL, "model": self.name, "language": self._language,
            "language_probability": None, "duration_ms": round(duration * 1000),
            "segments": segments_of(words),
            "speech": [[round(a * 1000), round(b * 1000)] for a, b in regions],
            "unclear": [], "repeats_removed": 0, "redecoded": {},
        })


# onnx-asr's GigaAM output step: 10 ms feature frames, subsampled 4 times.
FRAME_SECONDS = 0.04
