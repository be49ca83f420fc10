"""Test-only entry point: a real `transcriber serve` process with fake steps injected.

`python -m tests.serve_with_fakes --steps normalize=60` serves exactly as
`transcriber serve` does (settings, logging, signals, exit codes), but its
step table is `transcriber.testing.steps.fake_steps_from_spec(--steps)`, so
acceptance tests can kill a process in the middle of a step without ffmpeg
or a recognizer. Production settings have no such switch.
"""

from __future__ import annotations

import argparse
import asyncio
import sys

from transcriber.cli.exits import EXIT_CONFIG
from transcriber.cli.serve import serve
from transcriber.core.errors import ConfigError
from transcriber.core.observability import configure_logging
from transcriber.service.app import build_app
from transcriber.service.roles import Role
from transcriber.settings import Settings, load_settings
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.testing.steps import fake_steps_from_spec


async def _serve(settings: Settings, spec: str, *, fake_recognizer: bool,
                 role: Role) -> int:
    if fake_recognizer:
        # The real steps (ffmpeg included) with a recognizer that answers at once.
        return await serve(settings, build_app(settings, role=role,
                                               recognizer=FakeRecognizer()))
    # What follows `done` (a Telegram record's reply among it) is the follow-ups'
    # (`followups.registry`), written by the step actor whatever the steps are.
    steps = fake_steps_from_spec(spec)
    return await serve(settings, build_app(settings, role=role, steps=steps))


def main() -> int:
    parser = argparse.ArgumentParser(prog="serve_with_fakes")
    parser.add_argument("--steps", default="", help='e.g. "normalize=60,poll=0.5" (seconds)')
    parser.add_argument("--fake-recognizer", action="store_true",
                        help="real steps, the recognizer of transcriber.testing instead")
    parser.add_argument("--role", choices=[role.value for role in Role], default="all",
                        help="as `transcriber serve --role`")
    args = parser.parse_args()
    try:
        settings = load_settings()
    except ConfigError as exc:
        print(f"transcriber: bad setting {exc}", file=sys.stderr)
        return EXIT_CONFIG
    configure_logging(settings.logging.level, settings.logging.format)
    return asyncio.run(_serve(settings, args.steps, fake_recognizer=args.fake_recognizer,
                              role=Role(args.role)))


if __name__ == "__main__":
    sys.exit(main())
