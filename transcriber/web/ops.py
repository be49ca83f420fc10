"""Operator endpoints: liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from transcriber import keys
from transcriber.clock import parse_time
from transcriber.db import queries as q
from transcriber.observability import (
    RECORDS_BY_STAGE,
    RECORDS_HALTED,
    STAGE_LIMIT_SECONDS,
    STAGE_OLDEST_SECONDS,
    STORAGE_FREE_BYTES,
    STORAGE_MIN_FREE_BYTES,
    WRITER_MAILBOX_DEPTH,
)
from transcriber.pipeline.policy import stuck_limit_seconds
from transcriber.stages import STAGES, HaltReason
from transcriber.web.responses import json_response


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
    await request.app[keys.READERS].fetch_one(q.control.READY_PROBE)
    return json_response({"status": "ready"})


async def metrics(request: web.Request) -> web.Response:
    readers = request.app.get(keys.READERS)
    if readers is not None:
        await refresh_record_gauges(request.app)
    writer = request.app.get(keys.WRITER)
    if writer is not None:
        WRITER_MAILBOX_DEPTH.set(writer.mailbox_depth)
    files = request.app.get(keys.FILES)
    if files is not None:
        STORAGE_FREE_BYTES.set(await asyncio.to_thread(files.free_bytes))
        STORAGE_MIN_FREE_BYTES.set(request.app[keys.SETTINGS].storage.min_free_bytes)
    return web.Response(body=generate_latest(), headers={"Content-Type": CONTENT_TYPE_LATEST})


async def refresh_record_gauges(app: web.Application) -> None:
    readers = app[keys.READERS]
    by_stage = {row["state"]: row["n"] for row in await readers.fetch_all(q.records.COUNT_BY_STAGE)}
    for spec in STAGES:
        RECORDS_BY_STAGE.labels(spec.stage.value).set(by_stage.get(spec.stage.value, 0))
    halted = {
        row["halt_reason"]: row["n"]
        for row in await readers.fetch_all(q.records.COUNT_BY_HALT_REASON)
    }
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
        row = await app[keys.READERS].fetch_one(q.records.OLDEST_IN_STAGE,
                                                {"state": spec.stage.value})
        oldest = row["oldest"] if row is not None else None
        age = (now - parse_time(oldest)).total_seconds() if oldest else 0.0
        STAGE_OLDEST_SECONDS.labels(spec.stage.value).set(max(age, 0.0))
        STAGE_LIMIT_SECONDS.labels(spec.stage.value).set(limit)


def add_routes(app: web.Application) -> None:
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/readyz", readyz)
    app.router.add_get("/metrics", metrics)
