"""Fuzz every documented route from the OpenAPI document: no 5xx, answers as documented.

The app runs on a real port in a thread of its own (schemathesis' client is
blocking); the run is bounded by examples per operation and a wall-clock
limit so it stays in the default test command.

Webhooks: the run registers whatever URLs schemathesis makes up (and the
document's example), and may then delete a record it uploaded (a
`record.deleted` event). None of it can leave the machine: the app's webhook
transport is the fake one, which resolves only the example's name, from its
own table (no DNS query is ever made), and records a delivery instead of
sending it; and the delivery actor runs on the fake clock, which never moves
here. The test checks at the end that nothing was even handed to it.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web
from yarl import URL

from tests.helpers.settings import SettingsFactory
from transcriber import keys
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.testing.webhooks import FakeWebhookTransport
from transcriber.web.openapi_webhooks import EXAMPLE_URL

pytestmark = pytest.mark.slow

RUN_LIMIT_SECONDS = 90
CHECKS = ",".join([
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_schema_conformance",
])


@pytest.fixture
def webhook_transport() -> FakeWebhookTransport:
    return FakeWebhookTransport(names={URL(EXAMPLE_URL).raw_host or "": ["93.184.216.34"]})


@pytest.fixture
def served_app(make_settings: SettingsFactory,
               webhook_transport: FakeWebhookTransport) -> Iterator[str]:
    """The whole app on 127.0.0.1:<free port>, in a background thread with its own loop."""
    settings = make_settings(pipeline={"workers": 0},
                             server={"rate_limit_requests": 1_000_000,
                                     "upload_max_bytes": 64 * 1024})
    app = build_app(settings, clock=FakeClock(), webhook_transport=webhook_transport)
    app[keys.TRANSCODER] = FakeTranscoder()
    loop = asyncio.new_event_loop()
    runner = web.AppRunner(app)
    started = threading.Event()
    base: list[str] = []

    async def start() -> None:
        await runner.setup()
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        host, port = runner.addresses[0][:2]
        base.append(f"http://{host}:{port}")
        started.set()

    def serve() -> None:
        asyncio.set_event_loop(loop)
        loop.run_until_complete(start())
        loop.run_forever()
        loop.run_until_complete(runner.cleanup())
        loop.close()

    thread = threading.Thread(target=serve, name="schemathesis-app", daemon=True)
    thread.start()
    assert started.wait(30), "the app did not start"
    try:
        yield base[0]
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)


def test_fuzzing_finds_no_server_errors(served_app: str, tmp_path: Path,
                                        webhook_transport: FakeWebhookTransport) -> None:
    command = [
        str(Path(sys.executable).with_name("schemathesis")), "run",
        f"{served_app}/app/openapi.json",
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
    assert webhook_transport.posts == []
