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


async def test_a_spaces_names_are_saved_by_its_editor_and_read_by_its_viewer(
        browser: Browser, service: Service) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    olga = {"Remote-User": "olga"}
    async with ClientSession(service.base) as session:
        made = await session.post("/app/spaces", json={"name": "Семья"}, headers=olga)
        assert made.status == 201, await made.text()
        space_id = (await made.json())["id"]
        added = await session.post(f"/app/spaces/{space_id}/members",
                                   json={"login": "vera", "role": "viewer"}, headers=olga)
        assert added.status == 201, await added.text()
    page, watch = await open_page(browser, service, login="olga")
    await page.goto(service.base + "/settings")
    box = page.get_by_label("Names and terms of the space Семья")
    await box.fill("Зерносбыт\n  GitLab \ngitlab")
    await page.locator(".vocabulary-space").get_by_role("button", name="Save").click()
    await expect(page.locator(".vocabulary-space .status")).to_have_text(
        "Saved. New recordings and recordings transcribed again use them.")
    await expect(box).to_have_value("Зерносбыт\nGitLab")
    async with ClientSession(service.base) as session, session.get(
            f"/app/spaces/{space_id}/vocabulary", headers=olga) as answer:
        assert (await answer.json())["terms"] == ["Зерносбыт", "GitLab"]
    viewer, viewer_watch = await open_page(browser, service, login="vera")
    await viewer.goto(service.base + "/settings")
    shown = viewer.get_by_label("Names and terms of the space Семья")
    await expect(shown).to_have_value("Зерносбыт\nGitLab")
    await expect(shown).not_to_be_editable()
    await expect(viewer.locator(".vocabulary-space")).to_contain_text(
        "Only the space's editors and admins change them.")
    assert watch.problems == []
    assert viewer_watch.problems == []
