"""Lifecycle of the providers: transcoder, recognizer, object store and the step table.

`providers_ctx` runs after storage and before the pipeline. Parts a test
already put on the app (`keys.TRANSCODER`, `keys.STEPS`) are kept as they
are; everything built here is closed on cleanup.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

import structlog
from aiohttp import web

from transcriber import keys
from transcriber.clock import Clock
from transcriber.ports import ObjectStore
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.providers.object_store import S3ObjectStore
from transcriber.providers.quota import CallBudget
from transcriber.providers.recognizer import Recognizer
from transcriber.providers.speechkit import SpeechkitRecognizer
from transcriber.providers.whisper import WhisperRecognizer
from transcriber.settings import Settings

log = structlog.get_logger(__name__)

MODELS_DIR = "models"
STATUS_CHECK_WINDOW_SECONDS = 3600.0


def build_recognizer(settings: Settings, *, clock: Clock) -> Recognizer:
    provider = settings.recognizer.provider
    if provider == "speechkit":
        budget = CallBudget(limit=settings.speechkit.status_checks_per_hour,
                            window_seconds=STATUS_CHECK_WINDOW_SECONDS, clock=clock)
        return SpeechkitRecognizer(settings.speechkit, budget=budget)
    if provider == "fake":
        from transcriber.testing.recognizer import FakeRecognizer  # noqa: PLC0415

        return FakeRecognizer()
    return WhisperRecognizer(
        settings.recognizer,
        cache_dir=settings.storage.data_dir / MODELS_DIR / "whisper-base",
        default_time_limit_seconds=settings.pipeline.step_time_limit_minutes * 60,
    )


async def providers_ctx(app: web.Application) -> AsyncIterator[None]:
    from transcriber.pipeline.steps import build_step_table  # noqa: PLC0415 - import cycle

    settings = app[keys.SETTINGS]
    async with contextlib.AsyncExitStack() as stack:
        ffmpeg = FfmpegTranscoder(settings.ffmpeg)
        if keys.TRANSCODER not in app:
            app[keys.TRANSCODER] = ffmpeg
        if keys.STEPS not in app:
            recognizer = build_recognizer(settings, clock=app[keys.CLOCK])
            stack.push_async_callback(recognizer.close)
            store: ObjectStore | None = None
            if recognizer.needs_object_store:
                s3 = S3ObjectStore(settings.s3)
                await s3.start()
                stack.push_async_callback(s3.close)
                store = s3
            app[keys.STEPS] = build_step_table(transcoder=app[keys.TRANSCODER], cutter=ffmpeg,
                                               recognizer=recognizer, store=store)
            log.info("providers_started", recognizer=recognizer.provider)
        yield
