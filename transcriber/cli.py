"""The `transcriber` command line."""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import structlog
from aiohttp import web

from transcriber import keys
from transcriber.app import build_app
from transcriber.db.migrate import migrate
from transcriber.errors import ConfigError, MigrationError
from transcriber.observability import configure_logging
from transcriber.pipeline.resume import resume_command
from transcriber.settings import Settings, load_settings
from transcriber.status import print_status
from transcriber.transcribe import transcribe
from transcriber.transcripts import FORMATS

log = structlog.get_logger(__name__)

EXIT_CONFIG = 2
EXIT_FATAL = 70


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="transcriber", description=__doc__)
    parser.add_argument("--config", type=Path, default=None,
                        help="TOML settings file (default: $TRANSCRIBER_CONFIG or none)")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("serve", help="migrate, then serve HTTP and run the pipeline")
    sub.add_parser("migrate", help="apply pending migrations and exit")
    sub.add_parser("status", help="records by stage and halt reason")
    resume = sub.add_parser("resume", help="resume a halted record (event origin human)")
    resume.add_argument("record_id", help="the record's id")
    transcribe = sub.add_parser(
        "transcribe", help="accept files, run the pipeline in-process, print the transcripts")
    transcribe.add_argument("files", nargs="+", type=Path, metavar="FILE")
    transcribe.add_argument("--format", choices=FORMATS, default="txt",
                            help="transcript format (default: txt)")
    transcribe.add_argument("--owner", default=None, metavar="LOGIN",
                            help="whose records they become (default: server.anonymous_user)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"transcriber: bad setting {exc}", file=sys.stderr)
        return EXIT_CONFIG
    level = settings.logging.level
    if args.command in {"transcribe", "status", "resume"} and level.upper() == "INFO":
        # One-shot commands print their own answer; the service's info events
        # would only bury it. Warnings and errors still show.
        level = "WARNING"
    configure_logging(level, settings.logging.format)
    try:
        if args.command == "migrate":
            applied = migrate(settings.storage.data_dir,
                              busy_timeout_ms=settings.storage.busy_timeout_ms)
            print(f"applied {len(applied)} migration(s)")
            return 0
        if args.command == "status":
            return asyncio.run(print_status(settings))
        if args.command == "serve":
            return asyncio.run(serve(settings))
        if args.command == "resume":
            return asyncio.run(resume_command(settings, args.record_id))
        if args.command == "transcribe":
            if settings.logging.level.upper() in ("DEBUG", "INFO"):
                # The progress display and the transcripts own the terminal.
                configure_logging("WARNING", settings.logging.format)
            return asyncio.run(transcribe(settings, args.files, fmt=args.format,
                                          owner=args.owner))
    except MigrationError as exc:
        log.critical("migration_failed", error=str(exc))
        return EXIT_FATAL
    return 2  # pragma: no cover - argparse requires a command


async def serve(settings: Settings, app: web.Application | None = None) -> int:
    """Run until SIGTERM/SIGINT (exit 0) or a fatal error such as the writer's death (70)."""
    if app is None:
        app = build_app(settings)
    runner = web.AppRunner(
        app, handle_signals=False, access_log=None,
        shutdown_timeout=settings.server.shutdown_graceful_seconds,
    )
    await runner.setup()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    fatal = app[keys.FATAL]
    try:
        site = web.TCPSite(runner, settings.server.host, settings.server.port)
        await site.start()
        log.info("serve_started", host=settings.server.host, port=settings.server.port)
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


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
