"""The `transcriber` command line: parse, load settings, hand over to one command.

Each command is a module of this package with `run(args, settings) -> int`,
imported only when it runs, so `transcriber --help` or `transcriber status`
does not pay for the whole service (aiogram, faster-whisper and aiobotocore
load only where they are used).

Imports: any floor (the top one; only `testing` stands above it).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol, cast

from transcriber.cli.exits import EXIT_CONFIG, EXIT_FATAL
from transcriber.cli.parser import build_parser

if TYPE_CHECKING:
    from transcriber.settings import Settings

__all__ = ["EXIT_CONFIG", "EXIT_FATAL", "main"]

# One-shot commands print their own answer; the service's info events would
# only bury it (warnings and errors still show). The load test's simulated
# failures log a warning each, and its report counts them.
_QUIET_LEVEL = {"transcribe": "WARNING", "status": "WARNING", "resume": "WARNING",
                "loadtest": "ERROR", "backup": "WARNING", "restore": "WARNING",
                "verify": "WARNING", "voices": "WARNING", "models": "WARNING", "token": "WARNING",
                "upload": "WARNING", "describe": "WARNING", "move-to": "WARNING",
                "ask": "WARNING", "space": "WARNING"}


class CliCommand(Protocol):
    def run(self, args: argparse.Namespace, settings: Settings) -> int: ...


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # Imported after parsing: `--help` and argument errors answer at once.
    from transcriber.core.errors import ConfigError, MigrationError  # noqa: PLC0415
    from transcriber.core.observability import configure_logging  # noqa: PLC0415
    from transcriber.settings import load_settings  # noqa: PLC0415

    try:
        settings = load_settings(args.config)
    except ConfigError as exc:
        print(f"transcriber: bad setting {exc}", file=sys.stderr)
        return EXIT_CONFIG
    level = settings.logging.level
    if level.upper() == "INFO" or (args.command == "transcribe" and level.upper() == "DEBUG"):
        level = _QUIET_LEVEL.get(args.command, level)
    configure_logging(level, settings.logging.format)
    module = args.command.replace("-", "_")  # `move-to` is `transcriber.cli.move_to`
    command = cast(CliCommand, importlib.import_module(f"transcriber.cli.{module}"))
    try:
        return command.run(args, settings)
    except MigrationError as exc:
        import structlog  # noqa: PLC0415

        structlog.get_logger(__name__).critical("migration_failed", error=str(exc))
        return EXIT_FATAL
