"""The settings page's webhooks in a real browser: add one (its secret shown once),
a refused address, the deliveries of a recording that reached `done`, the
Russian page, delete. The service of tests/helpers/webapp.py with the fake
webhook transport: the page registers an example address and nothing is ever
sent anywhere."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

import orjson
import pytest

from tests.helpers import webapp
from tests.helpers.followups import webhook_worker
from tests.helpers.settings import SettingsFactory
from tests.helpers.webapp import AUDIO, open_page, upload
from transcriber.ports import WebhookUnreachable
from transcriber.testing.webhooks import FakeWebhookTransport

if TYPE_CHECKING:
    from playwright.async_api import Page

pytestmark = pytest.mark.timeout(120)

URL = "https://hooks.example.net/in"


async def test_add_see_deliveries_and_delete_a_webhook(
        make_settings: SettingsFactory, tmp_path: Path) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    transport = FakeWebhookTransport(names={"hooks.example.net": ["93.184.216.34"]})
    async with webapp.serving(make_settings, webhook_transport=transport) as service, \
            webapp.chromium() as browser:
        page, watch = await open_page(browser, service)
        page.on("dialog", lambda dialog: dialog.accept())
        await page.goto(service.base + "/")
        await page.get_by_role("link", name="Settings").click()
        await page.wait_for_url("**/settings")
        await expect(page.locator("h1")).to_have_text("Settings")
        await expect(page.get_by_text("No webhooks yet.")).to_be_visible()

        # A private address is refused by the server, in its words.
        await page.locator("#webhook-url").fill("http://127.0.0.1:9/")
        await page.get_by_role("button", name="Add webhook").click()
        await expect(page.get_by_role("alert")).to_contain_text("loopback, private")

        await page.locator("#webhook-url").fill(URL)
        await page.get_by_role("button", name="Add webhook").click()
        secret = page.get_by_test_id("webhook-secret")
        await expect(secret).to_have_value(re.compile(r"^whsec_[\w-]{43}$"))
        item = page.locator("[data-webhook]")
        await expect(item).to_have_count(1)
        await expect(item).to_contain_text(URL)
        await expect(item).to_contain_text("Transcript ready · Stopped")

        # A recording reaches done: its delivery shows up.
        service.recognizer.pending_checks = 0
        await upload(page, AUDIO / "librivox_0880.mp3")
        await webapp.until(lambda: len(transport.posts) == 1, seconds=30)
        assert orjson.loads(transport.posts[0].body)["event"] == "record.done"
        await page.goto(service.base + "/settings")
        await expect(page.get_by_test_id("webhook-secret")).to_have_count(0)  # shown once
        await page.get_by_text("Recent deliveries").click()
        row = page.locator("[data-delivery]")
        await expect(row).to_have_count(1)
        await expect(row).to_contain_text("Transcript ready")
        await expect(row).to_contain_text("delivered")

        await _in_russian(page)
        await expect(page.locator("h1")).to_have_text("Настройки")
        await expect(page.locator("[data-webhook]")).to_contain_text("Текст готов")

        await page.get_by_role("button", name="Удалить").click()
        await expect(page.locator("[data-webhook]")).to_have_count(0)
        await expect(page.get_by_text("Вебхуков пока нет.")).to_be_visible()
        assert watch.problems == []


async def _in_russian(page: Page) -> None:
    await page.locator("#language").select_option("ru")


async def test_a_receiver_that_does_not_answer_is_shown_failing(
        make_settings: SettingsFactory, tmp_path: Path) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    transport = FakeWebhookTransport(names={"hooks.example.net": ["93.184.216.34"]},
                                     answers=[WebhookUnreachable("timeout")])
    async with webapp.serving(make_settings, webhook_transport=transport) as service, \
            webapp.chromium() as browser:
        page, watch = await open_page(browser, service)
        await page.goto(service.base + "/settings")
        await page.locator("#webhook-url").fill(URL)
        await page.get_by_role("button", name="Add webhook").click()
        await expect(page.locator("[data-webhook]")).to_have_count(1)
        await expect(page.locator("[data-health]")).to_have_text("Active")

        service.recognizer.pending_checks = 0
        await upload(page, AUDIO / "librivox_0880.mp3")
        await webapp.until(lambda: len(transport.posts) == 1, seconds=30)
        await webapp.until(lambda: webhook_worker(service.app).in_flight == 0)  # result written
        await page.goto(service.base + "/settings")
        await expect(page.locator("[data-health]")).to_have_text("Not answering")
        await expect(page.locator("[data-health-detail]")).to_contain_text("timeout")
        await _in_russian(page)
        await expect(page.locator("[data-health]")).to_have_text("Не отвечает")
        await expect(page.locator("[data-health-detail]")).to_contain_text(
            "Получатель не отвечает")
        assert watch.problems == []
