"""Operator endpoints: liveness, readiness and Prometheus metrics.

`/metrics` answers only the clients in `server.metrics_allowed` (loopback by
default; 403 `forbidden` to others), and its database gauges are cached
(`StoredGauges`), so neither a stranger nor a flood of scrapes costs queries.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from datetime import datetime

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from transcriber.core.clock import parse_time
from transcriber.core.observability import (
    RECORDS_BY_STAGE,
    RECORDS_HALTED,
    STAGE_LIMIT_SECONDS,
    STAGE_OLDEST_SECONDS,
    STORAGE_FREE_BYTES,
    STORAGE_MIN_FREE_BYTES,
    WRITER_MAILBOX_DEPTH,
)
from transcriber.db import reads
from transcriber.domain.stages import STAGES, HaltReason
from transcriber.pipeline.policy import stuck_limit_seconds
from transcriber.settings import ServerSettings
from transcriber.web import keys
from transcriber.web.addresses import client_address, forwarded_chain, is_trusted
from transcriber.web.errors import ApiError, error_middleware
from transcriber.web.metrics import metrics_middleware
from transcriber.web.responses import json_response

# The longest a scrape shows database counts that old (Prometheus scrapes every 15-60 s).
METRICS_REFRESH_SECONDS = 5.0


def _writer_alive(app: web.Application) -> bool:
    writer = app.get(keys.WRITER)
    return writer is not None and writer.task is not None and not writer.task.done()


async def healthz(request: web.Request) -> web.Response:
    if request.app[keys.FATAL].done() or not _writer_alive(request.app):
        return json_response({"status": "failing"}, status=503)
    return json_response({"status": "ok"})


async def readyz(request: web.Request) -> web.Response:
    if not _writer_alive(request.app) or keys.READERS not in request.app:
        return json_response({"status": "starting"}, status=503)
    await reads.counts.ready(request.app[keys.READERS])
    return json_response({"status": "ready"})


def metrics_allowed(peer: str | None, forwarded_for: Sequence[str],
                    settings: ServerSettings) -> bool:
    """Pure: whether `/metrics` answers this client (`server.metrics_allowed`).

    The client is the one `X-Forwarded-For` names behind a trusted proxy, so
    a reverse proxy on loopback does not open the metrics to the world."""
    address = client_address(peer, forwarded_for, settings.trusted_proxies)
    return is_trusted(address, settings.metrics_allowed)


class StoredGauges:
    """The gauges read from the database and the disk, refreshed at most every
    `METRICS_REFRESH_SECONDS`: a scrape flood costs one round of count queries
    per period, however many scrapes there are (they wait for the round in
    flight instead of starting their own)."""

    def __init__(self) -> None:
        self._refreshed_at: datetime | None = None
        self._lock = asyncio.Lock()

    def _fresh(self, now: datetime) -> bool:
        if self._refreshed_at is None:
            return False
        elapsed = (now - self._refreshed_at).total_seconds()
        return 0 <= elapsed < METRICS_REFRESH_SECONDS  # a clock stepped back refreshes

    async def refresh(self, app: web.Application) -> None:
        clock = app[keys.CLOCK]
        if self._fresh(clock.now()):
            return
        async with self._lock:
            if self._fresh(clock.now()):
                return
            if keys.READERS in app:
                await refresh_record_gauges(app)
            files = app.get(keys.FILES)
            if files is not None:
                STORAGE_FREE_BYTES.set(await asyncio.to_thread(files.free_bytes))
                STORAGE_MIN_FREE_BYTES.set(app[keys.SETTINGS].storage.min_free_bytes)
            self._refreshed_at = clock.now()


STORED_GAUGES = web.AppKey("stored_gauges", StoredGauges)


async def metrics(request: web.Request) -> web.Response:
    settings = request.app[keys.SETTINGS].server
    forwarded = forwarded_chain(request.headers.getall("X-Forwarded-For", []))
    if not metrics_allowed(request.remote, forwarded, settings):
        raise ApiError(403, "forbidden",
                       "metrics are served only to the addresses in server.metrics_allowed")
    await request.app[STORED_GAUGES].refresh(request.app)
    writer = request.app.get(keys.WRITER)
    if writer is not None:
        WRITER_MAILBOX_DEPTH.set(writer.mailbox_depth)
    return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})


async def refresh_record_gauges(app: web.Application) -> None:
    readers = app[keys.READERS]
    by_stage = await reads.counts.by_stage(readers)
    for spec in STAGES:
        RECORDS_BY_STAGE.labels(spec.stage.value).set(by_stage.get(spec.stage.value, 0))
    halted = await reads.counts.by_halt_reason(readers)
    for reason in HaltReason:
        RECORDS_HALTED.labels(reason.value).set(halted.get(reason.value, 0))
    await refresh_stage_age_gauges(app)


async def refresh_stage_age_gauges(app: web.Application) -> None:
    """The oldest record of each stage with a limit against that limit: the
    alert fires before P11 halts records `stuck`."""
    settings = app[keys.SETTINGS].pipeline
    now = app[keys.CLOCK].now()
    for spec in STAGES:
        limit = stuck_limit_seconds(spec.stage, settings)
        if limit is None:
            continue
        oldest = await reads.counts.oldest_in_stage(app[keys.READERS], state=spec.stage.value)
        age = (now - parse_time(oldest)).total_seconds() if oldest else 0.0
        STAGE_OLDEST_SECONDS.labels(spec.stage.value).set(max(age, 0.0))
        STAGE_LIMIT_SECONDS.labels(spec.stage.value).set(limit)


def setup_alone(app: web.Application) -> None:
    """The operator endpoints as the only routes (a `worker` process): every other path
    is the API's JSON 404, and requests are counted as the full service counts them."""
    app.middlewares.extend([metrics_middleware, error_middleware])
    add_routes(app)


def add_routes(app: web.Application) -> None:
    app[STORED_GAUGES] = StoredGauges()
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
