"""Fixtures for the web API: the real app over real HTTP, a fake transcoder, no step actors."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, cast

import pytest
from aiohttp import web
from aiohttp.test_utils import TestClient
from pytest_aiohttp import AiohttpClient

from tests.conftest import SettingsFactory
from tests.integration.web.helpers import ServeLikeServer
from transcriber import keys
from transcriber.service.app import build_app
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder

Client = TestClient[web.Request, web.Application]
StartApi = Callable[..., Awaitable[Client]]


@pytest.fixture
def transcoder() -> FakeTranscoder:
    return FakeTranscoder(duration_ms=1500)


@pytest.fixture
def start_api(
    aiohttp_client: AiohttpClient,
    make_settings: SettingsFactory,
    clock: FakeClock,
    transcoder: FakeTranscoder,
) -> StartApi:
    """Start the whole app (storage, API; `workers=0`) with settings sections replaced.

    Example: `await start_api(server={"anonymous_user": ""})`.
    """

    async def start(**sections: dict[str, Any]) -> Client:
        pipeline = {"workers": 0, **sections.pop("pipeline", {})}
        settings = make_settings(pipeline=pipeline, **sections)
        app = build_app(settings, clock=clock)
        app[keys.TRANSCODER] = transcoder
        # A server given (not an app) types its client's app as None; it is this app.
        return cast(Client, await aiohttp_client(ServeLikeServer(app, settings.server)))

    return start


@pytest.fixture
async def client(start_api: StartApi) -> Client:
    return await start_api()
