"""`transcriber status`: counts by stage and halt reason, writer depth if a server runs."""

from __future__ import annotations

import argparse
import asyncio

import aiohttp

from transcriber.clock import SystemClock
from transcriber.db import reads
from transcriber.db.engine import migrate_storage, new_readers
from transcriber.settings import Settings
from transcriber.stages import STAGES, HaltReason

_MAILBOX_METRIC = "transcriber_writer_mailbox_depth"


async def collect_counts(settings: Settings) -> tuple[dict[str, int], dict[str, int]]:
    await migrate_storage(settings.storage, clock=SystemClock())
    pool = new_readers(settings.storage, size=1)
    await pool.open()
    try:
        stages = await reads.counts.by_stage(pool)
        halts = await reads.counts.by_halt_reason(pool)
    finally:
        await pool.close()
    return (
        {spec.stage.value: stages.get(spec.stage.value, 0) for spec in STAGES},
        {reason.value: halts.get(reason.value, 0) for reason in HaltReason},
    )


async def mailbox_depth(settings: Settings) -> float | str | None:
    """The running server's writer mailbox depth, None when no server answers,
    or why a server that answers shows no metrics."""
    host = settings.server.host
    url = f"http://{'[' + host + ']' if ':' in host else host}:{settings.server.port}/metrics"
    try:
        timeout = aiohttp.ClientTimeout(total=2)
        async with aiohttp.ClientSession(timeout=timeout) as session, session.get(url) as resp:
            if resp.status == 403:
                return "metrics refused to this address (server.metrics_allowed)"
            text = await resp.text()
    except (aiohttp.ClientError, TimeoutError, OSError):
        return None
    for line in text.splitlines():
        if line.startswith(_MAILBOX_METRIC + " "):
            return float(line.split()[1])
    return None


async def print_status(settings: Settings) -> int:
    stages, halts = await collect_counts(settings)
    print("records by stage (not halted):")
    for stage, count in stages.items():
        print(f"  {stage:<12} {count}")
    print("halted records by reason:")
    for reason, count in halts.items():
        print(f"  {reason:<19} {count}")
    depth = await mailbox_depth(settings)
    if depth is None:
        print("server: not running")
    elif isinstance(depth, str):
        print(f"server: running, {depth}")
    else:
        print(f"server: running, writer mailbox depth {int(depth)}")
    return 0


def run(args: argparse.Namespace, settings: Settings) -> int:
    return asyncio.run(print_status(settings))
