"""Fixtures for the web API: the real app over real HTTP, a fake transcoder, no step actors."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

import pytest
from pytest_aiohttp import AiohttpClient

from tests.helpers.s3 import Bucket
from tests.helpers.settings import SettingsFactory, settings_on
from tests.helpers.web import Client, ServeLikeServer, StartApi
from transcriber.ports import WebhookTransport
from transcriber.service.app import build_app
from transcriber.settings import Secret, Settings
from transcriber.testing.clock import FakeClock
from transcriber.testing.transcoder import FakeTranscoder
from transcriber.web import keys


@pytest.fixture
def transcoder() -> FakeTranscoder:
    return FakeTranscoder(duration_ms=1500)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request: pytest.FixtureRequest) -> str:
    """The API holds on both engines: each web test runs on each."""
    return str(request.param)


@pytest.fixture(autouse=True)
def _database_first(database_url: str | None, request: pytest.FixtureRequest) -> None:
    """The test's database is made before any app and dropped after it closes
    (fixtures are torn down in reverse), whichever fixtures the test names first.
    On SQLite too it is a copy of the run's migrated template (`migrated`), as on
    PostgreSQL: the app's start then finds no migration to apply."""
    if database_url is None:
        request.getfixturevalue("migrated")


@pytest.fixture
def make_settings(data_dir: Path, database_url: str | None) -> SettingsFactory:
    """Settings in the data folder on the test's engine (`storage.database_url` on
    PostgreSQL), so an app a test builds itself runs on both engines too."""

    def make(**sections: dict[str, Any]) -> Settings:
        if database_url is not None:
            sections["storage"] = {"database_url": Secret(database_url),
                                   **sections.get("storage", {})}
        return settings_on(data_dir, **sections)

    return make


@pytest.fixture
def files_kind() -> str:
    """Where record files live (`storage.files`); a module parametrizes it for both."""
    return "local"


@pytest.fixture
def files_sections(files_kind: str, request: pytest.FixtureRequest) -> dict[str, Any]:
    """The settings sections of `files_kind`: a fresh bucket on moto for `s3`."""
    if files_kind == "local":
        return {}
    bucket: Bucket = request.getfixturevalue("s3_bucket")
    return bucket.files_sections()


@pytest.fixture
def start_api(
    aiohttp_client: AiohttpClient,
    make_settings: SettingsFactory,
    clock: FakeClock,
    transcoder: FakeTranscoder,
    files_sections: dict[str, Any],
) -> StartApi:
    """Start the whole app (storage, API; `workers=0`) with settings sections replaced,
    and optionally a webhook transport (default: the real one, as `serve` has).

    Example: `await start_api(server={"anonymous_user": ""})`.
    """

    async def start(*, webhook_transport: WebhookTransport | None = None,
                    **sections: dict[str, Any]) -> Client:
        pipeline = {"workers": 0, **sections.pop("pipeline", {})}
        for name, values in files_sections.items():
            sections[name] = {**values, **sections.get(name, {})}
        settings = make_settings(pipeline=pipeline, **sections)
        app = build_app(settings, clock=clock, webhook_transport=webhook_transport)
        app[keys.TRANSCODER] = transcoder
        # A server given (not an app) types its client's app as None; it is this app.
        return cast(Client, await aiohttp_client(ServeLikeServer(app, settings.server)))

    return start


@pytest.fixture
async def client(start_api: StartApi) -> Client:
    return await start_api()
