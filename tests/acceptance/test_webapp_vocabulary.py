"""The web app's vocabulary in a real browser: names and terms typed one a line on the
settings page, saved, cleaned as the server keeps them; in Russian too."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.webapp import Service, open_page

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(90)


async def test_names_are_saved_from_the_settings_page(browser: Browser,
                                                      service: Service) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service)
    await page.goto(service.base + "/settings")
    await expect(page.get_by_role("heading", name="Names and terms")).to_be_visible()
    box = page.get_by_label("Names of people, companies, products")
    await box.fill("Тимофей Кравченко\n  GitLab \n\ngitlab\nЗерносбыт")
    await page.get_by_role("button", name="Save").click()
    await expect(page.locator(".vocabulary .status")).to_have_text(
        "Saved. New recordings and recordings transcribed again use them.")
    await expect(box).to_have_value("Тимофей Кравченко\nGitLab\nЗерносбыт")
    async with ClientSession() as session, session.get(
            f"{service.base}/app/vocabulary") as answer:
        assert (await answer.json())["terms"] == ["Тимофей Кравченко", "GitLab", "Зерносбыт"]
    await page.reload()
    await expect(box).to_have_value("Тимофей Кравченко\nGitLab\nЗерносбыт")
    await page.locator("#language").select_option("ru")
    await expect(page.get_by_role("heading", name="Имена и термины")).to_be_visible()
    assert watch.problems == []
