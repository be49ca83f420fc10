"""`transcriber serve [--role all|web|worker]`: migrations, then HTTP, the bot (when
configured) and the step actors, or the part of them the role runs
(`service.roles`), until SIGTERM/SIGINT (exit 0) or a fatal error (exit 70)."""

from __future__ import annotations

import argparse
import asyncio
import signal
from typing import Any

import structlog
from aiohttp import web

from transcriber.cli.exits import EXIT_FATAL
from transcriber.service.app import ROLE, build_app
from transcriber.service.roles import Role
from transcriber.settings import Settings
from transcriber.web import keys
from transcriber.web.connections import connection_options, install_accept_failure_log

log = structlog.get_logger(__name__)


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(serve(settings, build_app(settings, role=Role(args.role))))


async def serve(settings: Settings, app: web.Application | None = None) -> int:
    """Serve `app` (default: the service built from `settings`) until a signal or
    a fatal error; a test entry point passes an app built with injected parts."""
    if app is None:
        app = build_app(settings)
    runner = web.AppRunner(
        app, handle_signals=False, access_log=None,
        shutdown_timeout=settings.server.shutdown_graceful_seconds,
        **connection_options(settings.server),
    )
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    install_accept_failure_log(loop)
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    fatal = app[keys.FATAL]
    try:
        site = web.TCPSite(runner, settings.server.host, settings.server.port)
        await site.start()
        log.info("serve_started", host=settings.server.host, port=settings.server.port,
                 role=app[ROLE].value)
        stop_task = asyncio.create_task(stop.wait(), name="wait-for-signal")
        waiters: list[asyncio.Future[Any]] = [stop_task, fatal]
        await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
        stop_task.cancel()
    finally:
        log.info("serve_stopping", reason="fatal" if fatal.done() else "signal")
        try:
            await asyncio.wait_for(runner.cleanup(), settings.server.shutdown_forced_seconds)
        except TimeoutError:
            log.critical("shutdown_forced", seconds=settings.server.shutdown_forced_seconds)
            return EXIT_FATAL
    if fatal.done():
        log.critical("serve_failed", error=type(fatal.result()).__name__)
        return EXIT_FATAL
    log.info("serve_stopped")
    return 0
