"""Fixtures of the web app's browser tests: the service on loopback and headless Chromium."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest

from tests.helpers import webapp
from tests.helpers.settings import SettingsFactory

if TYPE_CHECKING:
    from playwright.async_api import Browser


@pytest.fixture
async def service(make_settings: SettingsFactory) -> AsyncIterator[webapp.Service]:
    async with webapp.serving(make_settings) as running:
        yield running


@pytest.fixture
async def described_service(make_settings: SettingsFactory) -> AsyncIterator[webapp.Service]:
    """The service with the extractive describer (the default of a real one)."""
    async with webapp.serving(make_settings, describer="extractive") as running:
        yield running


@pytest.fixture
async def browser() -> AsyncIterator[Browser]:
    webapp.need_browser()
    async with webapp.chromium() as launched:
        yield launched
