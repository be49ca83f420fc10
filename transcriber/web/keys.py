"""Typed keys of the aiohttp application: the service's shared parts."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from aiohttp import web

from transcriber.core.clock import Clock
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.pipeline.settled import SettledRecords
from transcriber.pipeline.step import Step
from transcriber.ports import (
    Answerer,
    Describer,
    Notifier,
    ObjectStore,
    Recognizer,
    RecordFiles,
    Transcoder,
    WebhookTransport,
)
from transcriber.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
CLOCK = web.AppKey("clock", Clock)
WRITER = web.AppKey("writer", Writer)
READERS = web.AppKey("readers", ReaderPool)
FILES = web.AppKey("files", RecordFiles)
# Resolved with the exception that must stop the service (the writer died, …).
FATAL = web.AppKey("fatal", asyncio.Future[BaseException])
# The step table: step name (from stages.STAGES) -> the Step that runs it.
STEPS = web.AppKey("steps", Mapping[str, Step])
NOTIFIER = web.AppKey("notifier", Notifier)
TRANSCODER = web.AppKey("transcoder", Transcoder)
RECOGNIZER = web.AppKey("recognizer", Recognizer)
# Set only when the recognizer stores audio in Object Storage (deletion removes it there too).
OBJECT_STORE = web.AppKey("object_store", ObjectStore)
# A describer given to `build_app` (tests); else `describer.provider` names one.
DESCRIBER = web.AppKey("describer", Describer)
# How webhook URLs are checked and deliveries sent (`providers.webhook_http` unless injected).
WEBHOOK_TRANSPORT = web.AppKey("webhook_transport", WebhookTransport)
# Records reaching done or halting in this process (the OpenAI door waits on it).
SETTLED = web.AppKey("settled", SettledRecords)
# The language model that answers questions (`ask.provider`); absent: offline.
ANSWERER = web.AppKey("answerer", Answerer)
