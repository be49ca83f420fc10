"""Fuzz every documented route from the OpenAPI document: no 5xx, answers as documented.

The app runs on a real port in a thread of its own (schemathesis' client is
blocking); the run is bounded by examples per operation and a wall-clock
limit so it stays in the default test command. Every request carries a
`write` bearer token (schemathesis' OpenAPI-aware auth, `bearerToken`), so
the routes are exercised as a token's owner sees them and `/v1/` is reached
at all; the fake clock ticks on its own, so `/v1/audio/transcriptions`
(nothing is ever transcribed: no step actors) ends its wait with 504.

Webhooks: the run registers whatever URLs schemathesis makes up (and the
document's example), and may then delete a record it uploaded (a
`record.deleted` event). None of it can leave the machine: the app's webhook
transport is the fake one, which resolves only the example's name, from its
own table (no DNS query is ever made), and records a delivery instead of
sending it (the clock ticks, so the delivery actor may hand it deliveries to
record). The fixture checks that the app holds that fake transport.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from aiohttp import web
from yarl import URL

from tests.helpers.settings import SettingsFactory
from tests.helpers.tokens import make_token
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.testing.webhooks import FakeWebhookTransport
from transcriber.web import keys
from transcriber.web.openai_wait import LOOK_SECONDS
from transcriber.web.webhooks import EXAMPLE_URL

pytestmark = pytest.mark.slow

# A bound for a wedged run, not a timing: a quiet run takes about 60 s on PostgreSQL
# with the 53 routes here, and a busy machine can double that (pytest's own limit is 300).
RUN_LIMIT_SECONDS = 240
# The token for every operation that takes one; and the documented 504 of OpenAI's
# endpoint, which this app (no step actors) gives every file it accepts: any
# other 5xx there is still a failure.
CONFIG = """
[auth.openapi.bearerToken]
bearer = "{token}"

[[operations]]
include-path = "/v1/audio/transcriptions"
checks.not_a_server_error.expected-statuses = ["2xx", "3xx", "4xx", "504"]

# tus's PATCH body (application/offset+octet-stream) has no serializer here; its
# headers, bodies and statuses are driven by tests/integration/web/test_resumable*.py.
[[operations]]
include-operation-id = "appendToUpload"
enabled = false
"""
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
])


@dataclass(frozen=True)
class Served:
    base: str
    token: str


@pytest.fixture
def webhook_transport() -> FakeWebhookTransport:
    return FakeWebhookTransport(names={URL(EXAMPLE_URL).raw_host or "": ["93.184.216.34"]})


@pytest.fixture
def served_app(make_settings: SettingsFactory,
               webhook_transport: FakeWebhookTransport) -> Iterator[Served]:
    """The whole app on 127.0.0.1:<free port>, in a background thread with its own loop."""
    settings = make_settings(pipeline={"workers": 0},
                             server={"rate_limit_requests": 1_000_000,
                                     "upload_max_bytes": 64 * 1024,
                                     "openai_wait_seconds": 4.0})
    clock = FakeClock()
    app = build_app(settings, clock=clock, webhook_transport=webhook_transport)
    assert app[keys.WEBHOOK_TRANSPORT] is webhook_transport  # nothing can leave the machine
    app[keys.TRANSCODER] = FakeTranscoder()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    started = threading.Event()
    base: list[str] = []
    token: list[str] = []

    async def tick() -> None:
        while True:
            await asyncio.sleep(0.02)
            clock.advance(LOOK_SECONDS)

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        base.append(f"http://{host}:{port}")
        token.append(await make_token(app, "local"))
        ticking.append(asyncio.ensure_future(tick()))
        started.set()

    ticking: list[asyncio.Future[None]] = []

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()
        for task in ticking:
            task.cancel()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=serve, name="schemathesis-app", daemon=True)
    thread.start()
    assert started.wait(30), "the app did not start"
    try:
        yield Served(base=base[0], token=token[0])
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


def test_fuzzing_finds_no_server_errors(served_app: Served, tmp_path: Path) -> None:
    config = tmp_path / "schemathesis.toml"
    config.write_text(CONFIG.format(token=served_app.token))
    command = [
        str(Path(sys.executable).with_name("schemathesis")), "--config-file", str(config),
        "run", f"{served_app.base}/app/openapi.json",
        "--checks", CHECKS,
        "--phases", "examples,coverage,fuzzing,stateful",
        "--max-examples", "25",
        "--seed", "20260101",
        # One worker: with two threads, hypothesis' `ast.parse` of filter lambdas races in
        # CPython 3.11 ("AST constructor recursion depth mismatch", a SystemError).
        "--workers", "1",
        "--generation-database", "none",
        "--request-timeout", "20",
        "--no-color",
        "--report-dir", str(tmp_path / "report"),
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path,
                            timeout=RUN_LIMIT_SECONDS, check=False)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-8000:]
    assert "No issues found" in output or "passed" in output, output[-3000:]
