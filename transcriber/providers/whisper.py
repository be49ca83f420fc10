"""The local recognizer: faster-whisper (Whisper base, int8, CPU), the embedded default.

The bundled model's folder is joined and hashed by `whisper_bundle`; `[recognizer]
model_dir` points at any other faster-whisper model folder instead (no hash check: the
owner chose it). Each part's answer is saved as JSON (`whisper_answer` reads it back).

Recognition runs in the pool of model runs (`model_runs`: ctranslate2
releases the GIL), at most `[recognizer] concurrency` at a time, shared with
the speaker engine; the model is loaded once, lazily, and reused. A
cancelled recognition stops at the next segment boundary.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.core.ids import new_id
from transcriber.core.observability import PROVIDER_CALL_SECONDS, RECOGNITION_REALTIME_FACTOR
from transcriber.domain.vocabulary import prompt_of
from transcriber.ports import (
    Answer,
    AudioPart,
    Capabilities,
    Span,
    SpeechSink,
    Submitted,
    Utterance,
)
from transcriber.providers.clips import CLIP_MAX_SECONDS, Loudness, plan_clips
from transcriber.providers.memory import release_free_memory, releasing
from transcriber.providers.model_folder import ModelRefused
from transcriber.providers.model_runs import ModelRuns
from transcriber.providers.onnx import quiet_onnxruntime
from transcriber.providers.recognizers import LOCAL, local_capabilities, whisper_language
from transcriber.providers.speakers import speech_regions
from transcriber.providers.whisper_answer import (
    read_local_payload,
    report_coverage,
    report_guard,
)
from transcriber.providers.whisper_bundle import ModelUnavailable, prepare_bundled_model
from transcriber.providers.whisper_decoding import (
    CoveredDecoding,
    Planner,
    by_clip,
    decode_span,
    decoding_options,
    saved,
    segment_dict,
)
from transcriber.providers.whisper_guard import Guarded, guard
from transcriber.settings import RecognizerSettings

log = structlog.get_logger(__name__)


class WhisperRecognizer:
    """The `Recognizer` port on faster-whisper."""

    def __init__(self, settings: RecognizerSettings, *, cache_dir: Path,
                 default_time_limit_seconds: float, model_runs: ModelRuns | None = None,
                 check: Callable[[], object] | None = None) -> None:
        self._settings = settings
        self._cache_dir = cache_dir
        self._default_limit = default_time_limit_seconds
        # Shared with the speaker engine (and the models of other languages,
        # `routed.py`), so they never run side by side.
        self.model_runs = model_runs or ModelRuns.from_settings(settings)
        # A folder from the models folder is verified before every load (`model_folder`).
        self._check = check
        self._load_lock = threading.Lock()
        self._model: Any = None
        self._batched: Any = None
        self.load_seconds: float | None = None
        # How a part's speech is cut into clips (a test hands a faulty one to the check).
        self.plan: Planner = plan_clips
        self.model_runs.keep_releasable(self.release_model)
        # Voice commands (`recognize_samples`) run beside the pool of model runs, not in
        # its queue: a few seconds of audio must not wait behind a long record's part.
        # The loaded model is shared; ctranslate2 interleaves its jobs.
        self._commands = ThreadPoolExecutor(max_workers=VOICE_COMMAND_RUNS,
                                            thread_name_prefix="voice-command")

    provider = LOCAL
    payload_ext = ".json"

    @property
    def capabilities(self) -> Capabilities:
        return local_capabilities(self._settings)

    @property
    def model(self) -> str:
        return self.capabilities.model

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
            payload = await self.model_runs.run(
                functools.partial(self._recognize, terms=part.terms), part.path, cancel,
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

    def parse(self, payload: bytes) -> Answer:
        return read_local_payload(payload)

    async def close(self) -> None:
        self.model_runs.close()
        self._commands.shutdown(wait=False, cancel_futures=True)

    async def recognize_samples(self, samples: bytes, *, language: str | None) -> Answer:
        """The `RecognizesSamples` port: a voice command decoded straight from its PCM,
        with no VAD, no clips, no guard and no word times (each costs time a few seconds
        of speech do not need), greedy when `beam_size` allows nothing else."""
        chosen = whisper_language(language, self._settings.language)
        started = time.perf_counter()
        try:
            return await asyncio.get_running_loop().run_in_executor(
                self._commands, self._recognize_command, samples, chosen)
        finally:
            PROVIDER_CALL_SECONDS.labels("local", "command").observe(
                time.perf_counter() - started)

    async def translate(self, path: Path, *, language: str | None) -> Answer:
        """The `Translates` port: Whisper's translate task on a whole file, in the pool of
        model runs (it is as long as any upload), its speech found by faster-whisper's
        VAD; a cancelled caller stops it at the next segment."""
        cancel = threading.Event()
        chosen = whisper_language(language, self._settings.language)
        started = time.perf_counter()
        try:
            return await self.model_runs.run(self._translate, path, chosen, cancel)
        except asyncio.CancelledError:
            cancel.set()
            raise
        finally:
            PROVIDER_CALL_SECONDS.labels("local", "translate").observe(
                time.perf_counter() - started)

    def _translate(self, path: Path, language: str | None, cancel: threading.Event) -> Answer:
        from faster_whisper.audio import decode_audio  # noqa: PLC0415 - heavy import

        # Decoded first: a file that is not audio is refused without loading the model.
        try:
            audio = decode_audio(str(path), sampling_rate=_RATE)
        except (ValueError, IndexError, OSError) as exc:
            raise PermanentFailure(f"audio cannot be decoded ({type(exc).__name__})") from None
        try:
            model = self.load()
        except ModelUnavailable as exc:
            raise TransientFailure(str(exc)) from None
        segments, info = model.transcribe(
            audio, task="translate", language=language, beam_size=self._settings.beam_size,
            temperature=[0.0], vad_filter=True, condition_on_previous_text=False)
        utterances = []
        for segment in segments:
            if cancel.is_set():
                raise TransientFailure("translation cancelled")
            if segment.text.strip():
                utterances.append(Utterance(
                    start_ms=round(segment.start * 1000), end_ms=round(segment.end * 1000),
                    channel=0, text=segment.text.strip()))
        return Answer(utterances=tuple(utterances), language=info.language)

    def _recognize_command(self, samples: bytes, language: str | None) -> Answer:
        try:
            model = self.load()
        except ModelUnavailable as exc:
            raise TransientFailure(str(exc)) from None
        usable = len(samples) - len(samples) % 2
        audio = np.frombuffer(samples[:usable], dtype="<i2").astype(np.float32) / 32768.0
        segments, info = model.transcribe(
            audio, language=language, beam_size=self._settings.beam_size,
            temperature=[0.0], vad_filter=False, condition_on_previous_text=False,
            without_timestamps=True, word_timestamps=False)
        utterances = tuple(
            Utterance(start_ms=round(segment.start * 1000), end_ms=round(segment.end * 1000),
                      channel=0, text=segment.text.strip())
            for segment in segments if segment.text.strip())
        return Answer(utterances=utterances, language=info.language)

    def load(self) -> Any:
        """Load the model once (thread-safe); callers run this off the event loop."""
        with self._load_lock:
            if self._model is None:
                started = time.perf_counter()
                from transcriber.providers.whisper_alignment import (  # noqa: PLC0415
                    WordAlignedWhisper,  # heavy import: faster-whisper
                )

                # faster-whisper's VAD makes an onnxruntime session on the first
                # transcription: its telemetry off before that.
                quiet_onnxruntime()
                # Its INFO lines ("Detected language ...") are not our events.
                logging.getLogger("faster_whisper").setLevel(logging.WARNING)

                if self._check is not None:
                    try:
                        self._check()
                    except ModelRefused as exc:
                        log.error("model_refused", model=self.model)
                        raise ModelUnavailable(str(exc)) from None
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

    async def warm(self) -> None:
        """Load the model in the pool of model runs ahead of the first recognition (the
        `Warms` port: a one-shot command overlaps it with the intake and normalization).
        A model that cannot be loaded is left for the recognition to report."""
        try:
            await self.model_runs.run(self.load)
        except ModelUnavailable:
            log.warning("whisper_model_not_warmed", model=self.model)

    def release_model(self) -> bool:
        """Let the loaded model go (the pool asks, from a run of its own, when no
        recognition is going: `ModelRuns.release_models`); `load` reads it again when
        next needed. True when one was loaded."""
        with self._load_lock:
            held = self._model is not None
            self._model = None
            self._batched = None
        if held:
            release_free_memory()
            log.info("whisper_model_released", model=self.model)
        return held

    @releasing  # the part's buffers are freed when it returns (memory.py)
    def _recognize(self, path: Path, cancel: threading.Event,
                   language: str | None = None, words: bool = False,
                   on_speech: SpeechSink | None = None, *,
                   terms: tuple[str, ...] = ()) -> bytes:
        """One part's answer; every answer keeps its words (`words`, speakers wanted,
        asks for nothing more since the guard and the quality report need them)."""
        try:
            model = self.load()
        except ModelUnavailable as exc:
            raise TransientFailure(str(exc)) from None
        options = self._settings
        # Nothing is sampled (`whisper_fallback`): a part recognized again, in this
        # process or another, gives the same words as the first time.
        try:
            # The record's own language (upload or re-transcription) over the setting's;
            # word times always: the guard checks them and the answer keeps them.
            request = {**decoding_options(options), "language": language,
                       "word_timestamps": True}
            # The owner's names and terms (`domain.vocabulary`): Whisper's hotwords, a
            # prompt that biases the decoding toward their spelling.
            if hotwords := prompt_of(terms):
                request["hotwords"] = hotwords
            if options.batched:
                return self._recognize_batched(model, path, request, cancel,
                                               on_speech=on_speech)
            return self._recognize_sequential(model, path, request, cancel,
                                              on_speech=on_speech)
        except StepFailureTypes:
            raise
        except (ValueError, IndexError) as exc:
            # The normalized copy cannot be decoded: retrying cannot help.
            raise PermanentFailure(f"audio cannot be recognized ({type(exc).__name__})") from None

    def _recognize_sequential(self, model: Any, path: Path, request: dict[str, Any],
                              cancel: threading.Event, *,
                              on_speech: SpeechSink | None) -> bytes:
        audio, regions = batched_speech(path)
        if on_speech is not None:
            on_speech(None)  # the speakers run their own VAD beside a sequential decoding
        segments, info = model.transcribe(audio, **request)
        collected: list[dict[str, Any]] = []
        for segment in segments:
            if cancel.is_set():
                raise TransientFailure("recognition cancelled")
            collected.append(segment_dict(segment))
        duration = len(audio) / _RATE
        # The guard checks the decoding clip by clip, the clips the batched path would
        # decode (no speech at all: the whole part, where any text is invented).
        clips = [(c.start, c.end) for c in plan_clips(
            regions, duration=duration, quietest=Loudness(audio).quietest)] or [(0.0, duration)]
        guarded = guard(clips, by_clip(collected, clips), regions=regions,
                        redecode=lambda span: decode_span(model, audio, span, request,
                                                          language=info.language,
                                                          cancel=cancel))
        return self._answer(guarded, info.language, info.language_probability, duration,
                            regions)

    def _recognize_batched(self, model: Any, path: Path, request: dict[str, Any],
                           cancel: threading.Event, *,
                           on_speech: SpeechSink | None) -> bytes:
        audio, regions = batched_speech(path)
        if on_speech is not None:
            # The speaker turns being found beside this recognition cluster these
            # regions' voices instead of running the same VAD again, over these samples
            # instead of decoding the part again (docs/speakers.md).
            on_speech([Span(start_ms=round(start * 1000), end_ms=round(end * 1000))
                       for start, end in regions], audio)
        duration = len(audio) / _RATE
        covered = CoveredDecoding(model, self._transcriber(model), audio, regions=regions,
                                  options=request, cancel=cancel, plan=self.plan).run()
        report_coverage(covered.report, provider=self.provider)
        return self._answer(covered.guarded, covered.language, covered.language_probability,
                            duration, regions)

    def _answer(self, guarded: Guarded, language: str | None, probability: float | None,
                duration_s: float, regions: list[tuple[float, float]]) -> bytes:
        """The saved answer (docs/recognition.md, "The saved answer"): the segments with
        their words, the VAD's speech (which speakers found after the recognition reuse),
        and what the guard rejected and decoded again; times in ms, part-relative."""
        report_guard(guarded)
        return orjson.dumps({
            "provider": self.provider, "model": self.model,
            "language": language, "language_probability": probability,
            "duration_ms": round(duration_s * 1000), "segments": saved(guarded.segments),
            "speech": [[round(a * 1000), round(b * 1000)] for a, b in regions],
            "unclear": [[round(a * 1000), round(b * 1000)] for a, b in guarded.unclear],
            "repeats_removed": guarded.repeats_removed,
            "redecoded": guarded.redecoded,
        })

    def _transcriber(self, model: Any) -> Any:
        if not self._settings.batched:
            return model
        with self._load_lock:
            if self._batched is None:
                from faster_whisper import BatchedInferencePipeline  # noqa: PLC0415

                self._batched = BatchedInferencePipeline(model=model)
            return self._batched


StepFailureTypes = (PermanentFailure, TransientFailure)
# Voice commands recognized at once (`recognize_samples`); more wait their turn.
VOICE_COMMAND_RUNS = 2

_RATE = 16_000


def batched_speech(path: Path) -> tuple[Any, list[tuple[float, float]]]:
    """The part's audio and its speech regions (start, end seconds) as the VAD finds them."""
    from faster_whisper.audio import decode_audio  # noqa: PLC0415 - heavy import

    audio = decode_audio(str(path), sampling_rate=_RATE)
    regions = speech_regions(audio, max_speech_s=CLIP_MAX_SECONDS)
    return audio, [(r.start_ms / 1000, r.end_ms / 1000) for r in regions]


def batched_clips(path: Path) -> tuple[Any, list[dict[str, float]]]:
    """The part's audio and the clips the batched pipeline decodes (`clips.plan_clips`)."""
    audio, regions = batched_speech(path)
    clips = plan_clips(regions, duration=len(audio) / _RATE, quietest=Loudness(audio).quietest)
    return audio, [{"start": clip.start, "end": clip.end} for clip in clips]
