"""`transcriber serve [--role all|web|worker]`: migrations, then HTTP, the bot (when
configured) and the step actors, or the part of them the role runs
(`service.roles`), until SIGTERM/SIGINT (exit 0) or a fatal error (exit 70)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ipaddress
import signal
import sys
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


def where_line(host: str, port: int, role: Role) -> str:
    """Pure: the one human line `serve` prints once it listens."""
    shown = host or "127.0.0.1"
    with contextlib.suppress(ValueError):
        address = ipaddress.ip_address(host)
        # Every address of the machine: this one's own loopback reaches it.
        shown = ("127.0.0.1" if address.version == 4 else "::1") \
            if address.is_unspecified else host
        shown = f"[{shown}]" if ":" in shown else shown
    base = f"http://{shown}:{port}/"
    what = (f"the web app is at {base}" if role is not Role.WORKER
            else f"a worker: only {base}healthz, /readyz and /metrics answer")
    return f"transcriber: {what} (Ctrl-C or SIGTERM stops it)"


def _bound_port(site: web.TCPSite, configured: int) -> int:
    """The port it listens on (the system's choice when `server.port` is 0)."""
    server = site._server  # aiohttp keeps the listening sockets here only
    sockets = getattr(server, "sockets", None) or ()
    for sock in sockets:
        return int(sock.getsockname()[1])
    return configured


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
        # The logs are for machines; a person who just started it wants to know where it
        # is and how to stop it (one line, on stderr beside the logs).
        print(where_line(settings.server.host, _bound_port(site, settings.server.port),
                         app[ROLE]), file=sys.stderr, flush=True)
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
