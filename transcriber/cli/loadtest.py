"""`transcriber loadtest`: the real writer, readers and step actors under load,
with simulated steps, on a throwaway archive (see `transcriber.loadtest`)."""

from __future__ import annotations

import argparse
import asyncio

from transcriber.loadtest.run import LoadOptions, loadtest_command
from transcriber.settings import Settings


def load_options(args: argparse.Namespace) -> LoadOptions:
    return LoadOptions(
        records=args.records, workers=args.workers, keep=args.keep,
        failure_share=args.failure_share, defer_share=args.defer_share,
        step_seconds=(0.0, max(args.step_ms, 0.0) / 1000), seed=args.seed,
        timeout_seconds=args.timeout, database_url=args.database_url,
    )


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(loadtest_command(load_options(args), settings, as_json=args.json))
