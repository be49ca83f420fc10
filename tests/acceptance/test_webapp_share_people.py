"""The share dialog's sharing within the service (issue 41), in a real browser (headless
Chromium) on a 360 px phone, in Russian: the owner shares a record with a second
person, who then sees it (in their list and its card, with no Share panel of their
own), moves it into her space, whose viewer then sees it, and revokes the share,
after which the second person gets the card of a record that does not exist.
A screenshot of the open dialog goes to the test's folder.
The harness is `tests/helpers/webapp.py`, its fixtures in the conftest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.webapp import Service, Watch, done_card, open_page

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.timeout(90)

# How far anything in the open dialog reaches past the window's right edge.
_DIALOG_SPILL = """
Math.max(0, ...[...document.querySelectorAll("dialog[open], dialog[open] *")]
  .map((el) => el.getBoundingClientRect().right - window.innerWidth))
"""


async def _phone(browser: Browser, service: Service, login: str) -> tuple[Page, Watch]:
    """`login`'s browser: a 360 px phone in Russian."""
    return await open_page(browser, service, login=login, width=360, height=740,
                           locale="ru-RU")


async def _family(service: Service) -> None:
    """olga's space «Семья» with vera as its viewer, made as the CLI or API would."""
    olga = {"Remote-User": "olga"}
    async with ClientSession(service.base) as session:
        made = await session.post("/app/spaces", json={"name": "Семья"}, headers=olga)
        assert made.status == 201, await made.text()
        space = await made.json()
        added = await session.post(f"/app/spaces/{space['id']}/members",
                                   json={"login": "vera", "role": "viewer"}, headers=olga)
        assert added.status == 201, await added.text()


async def test_a_record_is_shared_with_a_person_and_moved_into_a_space_on_a_phone(
    browser: Browser, service: Service, tmp_path: Path,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    await _family(service)
    page, watch = await _phone(browser, service, "olga")
    page.on("dialog", lambda dialog: dialog.accept())
    await done_card(page, service)
    card_url = page.url

    await page.get_by_role("button", name="Поделиться…").click()
    dialog = page.locator("dialog.share-dialog")
    people = dialog.locator("section.share-people")
    await expect(people.get_by_text("Пока ни с кем не поделились.")).to_be_visible()
    await people.get_by_label("Логин").fill("bob")
    await people.get_by_label("Роль").select_option("viewer")
    await people.get_by_role("button", name="Открыть доступ").click()
    await expect(dialog.get_by_text("Доступ открыт: bob.")).to_be_visible()
    person = people.locator("li.share-person")
    await expect(person).to_have_count(1)
    await expect(person).to_contain_text("bob")
    await expect(person).to_contain_text("читатель")

    space = dialog.locator("section.share-space")
    await expect(space.get_by_text("Не в пространстве.")).to_be_visible()
    await space.get_by_label("Перенести в").select_option(label="Семья")
    await space.get_by_role("button", name="Перенести", exact=True).click()
    await expect(dialog.get_by_text("Перенесена в «Семья».")).to_be_visible()
    await expect(space.get_by_text("В пространстве «Семья»", exact=False)).to_be_visible()
    assert await page.evaluate(_DIALOG_SPILL) <= 0
    await page.screenshot(path=tmp_path / "share-people-360.png")
    await dialog.get_by_role("button", name="Закрыть").click()
    await expect(page.get_by_text("В пространстве «Семья» · Открыт доступ людям: 1")
                 ).to_be_visible()
    # The journal names who did it.
    await page.locator(".history-panel summary").click()
    history = page.locator("table.history")
    await expect(history).to_contain_text("Перемещена")
    assert await history.locator("td", has_text="olga").count() >= 2

    # bob: the record in his list and its card, read only (no Share panel).
    bob, bob_watch = await _phone(browser, service, "bob")
    await bob.goto(service.base + "/")
    await expect(bob.get_by_role("link", name="librivox_0880.mp3")).to_be_visible()
    await bob.goto(card_url)
    await expect(bob.get_by_role("status").first).to_have_text("Готово.")
    await expect(bob.get_by_text("young man, said the archivist.")).to_be_visible()
    await expect(bob.get_by_role("button", name="Поделиться…")).to_be_hidden()
    # vera, the space's viewer, sees it through the space.
    vera, vera_watch = await _phone(browser, service, "vera")
    await vera.goto(card_url)
    await expect(vera.get_by_text("young man, said the archivist.")).to_be_visible()

    # Revoked: bob gets what a record that does not exist gives.
    await page.get_by_role("button", name="Поделиться…").click()
    await people.locator("li.share-person").get_by_role("button", name="Убрать").click()
    await expect(dialog.get_by_text("У bob больше нет доступа.")).to_be_visible()
    await expect(people.locator("li.share-person")).to_have_count(0)
    await bob.goto(card_url)
    await expect(bob.get_by_role("heading", name="Запись не найдена")).to_be_visible()
    assert await page.evaluate(
        "document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert watch.problems == []
    assert vera_watch.problems == []
    assert [p for p in bob_watch.problems if "404" not in p] == []
