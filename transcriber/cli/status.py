"""`transcriber status`: counts by stage and halt reason, writer depth if a server runs."""

from __future__ import annotations

import argparse
import asyncio
import math

import aiohttp

from transcriber.core.clock import SystemClock
from transcriber.db import reads
from transcriber.db.engine import migrate_storage, new_readers
from transcriber.domain.stages import STAGES, HaltReason
from transcriber.settings import Settings

_MAILBOX_METRIC = "transcriber_writer_mailbox_depth"
# The service's metrics page is tens of kilobytes; the line sought is near its end.
METRICS_MAX_BYTES = 4 * 1024 * 1024


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
        async with aiohttp.ClientSession(timeout=timeout, auto_decompress=False) as session, \
                session.get(url, allow_redirects=False) as resp:
            if resp.status == 403:
                return "metrics refused to this address (server.metrics_allowed)"
            if resp.status != 200:
                return None
            # Whatever listens on the port is read within bounds: 2 s, METRICS_MAX_BYTES.
            body = bytearray()
            async for chunk in resp.content.iter_chunked(64 * 1024):
                body += chunk
                if len(body) > METRICS_MAX_BYTES:
                    return None
    except (aiohttp.ClientError, TimeoutError, OSError):
        return None
    return mailbox_value(body.decode("utf-8", errors="replace"))


def mailbox_value(text: str) -> float | None:
    """The mailbox depth from a metrics page: a finite number, or None (a line that is
    not one, such as `NaN` or `+Inf`, is no depth)."""
    for line in text.splitlines():
        if line.startswith(_MAILBOX_METRIC + " "):
            try:
                value = float(line.split()[1])
            except (IndexError, ValueError):
                return None
            return value if math.isfinite(value) and value >= 0 else None
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
