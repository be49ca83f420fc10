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
from transcriber.loadtest import LoadOptions, loadtest_command
from transcriber.observability import configure_logging
from transcriber.pipeline.resume import resume_command
from transcriber.settings import Settings, load_settings
from transcriber.status import print_status
from transcriber.transcribe import transcribe
from transcriber.transcripts import FORMATS
from transcriber.web.connections import install_accept_failure_log

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
    load = sub.add_parser(
        "loadtest", help="the real pipeline with simulated steps on a throwaway archive; "
                         "checks its invariants (exit 1 when one is broken)")
    load.add_argument("--records", type=_positive, default=1000, metavar="N",
                      help="records to push through (default: 1000)")
    load.add_argument("--workers", type=_positive, default=8, metavar="K",
                      help="step actors (default: 8)")
    load.add_argument("--json", action="store_true", help="print one JSON object")
    load.add_argument("--keep", action="store_true",
                      help="keep the temporary data folder (its path is printed)")
    load.add_argument("--failure-share", type=_share, default=0.05, metavar="F",
                      help="share of step runs that fail transiently (default: 0.05)")
    load.add_argument("--defer-share", type=_share, default=0.05, metavar="D",
                      help="share of step runs that defer (default: 0.05)")
    load.add_argument("--step-ms", type=float, default=4.0, metavar="MS",
                      help="a simulated step takes 0..MS milliseconds (default: 4)")
    load.add_argument("--seed", type=int, default=None, help="seed of the simulation")
    load.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                      help="give up (and fail) after this long (default: 300)")
    return parser


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _share(text: str) -> float:
    value = float(text)
    if not 0.0 <= value < 1.0:
        raise argparse.ArgumentTypeError("must be in [0, 1)")
    return value


def _load_options(args: argparse.Namespace) -> LoadOptions:
    return LoadOptions(
        records=args.records, workers=args.workers, keep=args.keep,
        failure_share=args.failure_share, defer_share=args.defer_share,
        step_seconds=(0.0, max(args.step_ms, 0.0) / 1000), seed=args.seed,
        timeout_seconds=args.timeout,
    )


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
    if args.command == "loadtest" and level.upper() == "INFO":
        # Its simulated failures log a warning each; the report says how many.
        level = "ERROR"
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
        if args.command == "loadtest":
            return asyncio.run(loadtest_command(_load_options(args), settings,
                                                as_json=args.json))
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
    # aiohttp closes a connection still waiting for a request head when its
    # keep-alive timer fires, from the moment it opens: that timer is the
    # header-read timeout (it also ends idle keep-alive connections).
    runner = web.AppRunner(
        app, handle_signals=False, access_log=None,
        shutdown_timeout=settings.server.shutdown_graceful_seconds,
        keepalive_timeout=settings.server.header_read_timeout_seconds,
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
