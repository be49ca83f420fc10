"""Lifecycle of the providers: transcoder, recognizer, object store and the step table.

`providers_ctx` runs after storage and before the pipeline. Parts already on
the app (`keys.TRANSCODER`, `keys.RECOGNIZER`, `keys.STEPS`, put there by
`build_app`'s arguments in tests) are kept as they are; everything built here
is closed on cleanup. A provider's client library is imported only when that
provider is configured (aiobotocore for SpeechKit; faster-whisper when the
local model first loads).
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

import structlog
from aiohttp import web

from transcriber.core.clock import Clock
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import ObjectStore, Recognizer, SpeakerSeparator
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.recognizers import SPEECHKIT, saved_answer_formats
from transcriber.settings import Settings
from transcriber.web import keys

log = structlog.get_logger(__name__)

MODELS_DIR = "models"
CACHE_NAME = "transcriber"
STATUS_CHECK_WINDOW_SECONDS = 3600.0


def cache_root(settings: Settings, environ: Mapping[str, str] | None = None) -> Path:
    """Where caches shared by every data folder live: the model is not archive
    data (a 144 MB copy per folder, and in every backup, before it moved)."""
    if settings.storage.cache_dir is not None:
        return settings.storage.cache_dir
    env = os.environ if environ is None else environ
    base = env.get("XDG_CACHE_HOME") or str(Path(env.get("HOME") or Path.home()) / ".cache")
    return Path(base) / CACHE_NAME


def build_recognizer(settings: Settings, *, clock: Clock) -> Recognizer:
    # Imported by provider: see the module's docstring.
    if settings.recognizer.provider == SPEECHKIT:
        from transcriber.providers.quota import CallBudget  # noqa: PLC0415
        from transcriber.providers.speechkit import SpeechkitRecognizer  # noqa: PLC0415

        budget = CallBudget(limit=settings.speechkit.status_checks_per_hour,
                            window_seconds=STATUS_CHECK_WINDOW_SECONDS, clock=clock)
        return SpeechkitRecognizer(settings.speechkit, budget=budget)
    if settings.recognizer.models_dir is not None:
        # A model per language from the operator's folder (docs/recognition.md).
        from transcriber.providers.routed import RoutedRecognizer  # noqa: PLC0415

        return RoutedRecognizer(
            settings.recognizer,
            cache_dir=cache_root(settings) / MODELS_DIR / "whisper-base",
            default_time_limit_seconds=settings.pipeline.step_time_limit_minutes * 60)
    from transcriber.providers.whisper import WhisperRecognizer  # noqa: PLC0415

    return WhisperRecognizer(
        settings.recognizer,
        cache_dir=cache_root(settings) / MODELS_DIR / "whisper-base",
        default_time_limit_seconds=settings.pipeline.step_time_limit_minutes * 60,
    )


def speaker_separator(recognizer: Recognizer) -> SpeakerSeparator:
    """The local speaker engine's separator (its model loads on first use, when a
    record's speakers are told apart; without the model package records finish
    without speakers), in the local recognizer's pool of model runs when there is
    one (`providers.model_runs`),
    its turns then found beside the recognition (`providers.speakers.ahead`)."""
    from transcriber.providers.model_runs import ModelRuns  # noqa: PLC0415
    from transcriber.providers.speakers import LocalSpeakerSeparator  # noqa: PLC0415

    runs = getattr(recognizer, "model_runs", None)
    if isinstance(runs, ModelRuns):
        return LocalSpeakerSeparator.in_pool(runs)
    return LocalSpeakerSeparator()


async def providers_ctx(app: web.Application) -> AsyncIterator[None]:
    settings = app[keys.SETTINGS]
    async with contextlib.AsyncExitStack() as stack:
        ffmpeg = FfmpegTranscoder(settings.ffmpeg)
        if keys.TRANSCODER not in app:
            app[keys.TRANSCODER] = ffmpeg
        if keys.STEPS not in app:
            recognizer = app.get(keys.RECOGNIZER)
            if recognizer is None:
                recognizer = build_recognizer(settings, clock=app[keys.CLOCK])
                app[keys.RECOGNIZER] = recognizer
                stack.push_async_callback(recognizer.close)
            store: ObjectStore | None = None
            if recognizer.capabilities.needs_object_store:
                from transcriber.providers.object_store import S3ObjectStore  # noqa: PLC0415

                s3 = S3ObjectStore(settings.s3)
                await s3.start()
                stack.push_async_callback(s3.close)
                store = s3
                app[keys.OBJECT_STORE] = s3
            separator = speaker_separator(recognizer)
            stack.push_async_callback(separator.close)
            app[keys.STEPS] = build_step_table(
                transcoder=app[keys.TRANSCODER], cutter=ffmpeg, recognizer=recognizer,
                store=store, formats=saved_answer_formats(settings), separator=separator)
            log.info("providers_started", recognizer=recognizer.provider)
        yield
