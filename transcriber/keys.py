"""Typed keys of the aiohttp application: the service's shared parts."""

from __future__ import annotations

import asyncio

from aiohttp import web

from transcriber.clock import Clock
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.files import RecordFiles
from transcriber.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
CLOCK = web.AppKey("clock", Clock)
WRITER = web.AppKey("writer", Writer)
READERS = web.AppKey("readers", ReaderPool)
FILES = web.AppKey("files", RecordFiles)
# Resolved with the exception that must stop the service (the writer died, …).
FATAL = web.AppKey("fatal", asyncio.Future[BaseException])
