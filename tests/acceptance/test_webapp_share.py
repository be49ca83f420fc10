"""The card's share dialog in a real browser (headless Chromium) on a 360 px phone, in
Russian: a link made with the recording, its address shown once and copied, opened
in a browser with no identity (the page, its player and its download), counted on the
card, then revoked and gone. Within the service (test_webapp_share_people.py): the
record shared with a person and moved into a space.
The harness is `tests/helpers/webapp.py`, its fixtures in the conftest."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest

from tests.helpers.webapp import Service, done_card, open_page

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(90)

# How far anything in the open dialog reaches past the window's right edge.
_DIALOG_SPILL = """
Math.max(0, ...[...document.querySelectorAll("dialog[open], dialog[open] *")]
  .map((el) => el.getBoundingClientRect().right - window.innerWidth))
"""


async def test_a_link_is_made_opened_counted_and_revoked_on_a_phone(
    browser: Browser, service: Service,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service, width=360, height=740)
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                         origin=service.base)
    page.on("dialog", lambda dialog: dialog.accept())
    await done_card(page, service)

    await expect(page.get_by_text("Эту запись видите только вы.")).to_be_visible()
    await page.get_by_role("button", name="Поделиться…").click()
    dialog = page.locator("dialog.share-dialog")
    await expect(dialog).to_be_visible()
    await expect(dialog.get_by_text("Ссылок пока нет.")).to_be_visible()
    # The sharing within the service stands apart: nobody yet, no space.
    await expect(dialog.get_by_text("Пока ни с кем не поделились.")).to_be_visible()
    await expect(dialog.get_by_text("Не в пространстве.")).to_be_visible()
    await dialog.get_by_label("Срок").select_option("30")
    await dialog.get_by_label("Вместе с записью").check()
    await dialog.get_by_role("button", name="Создать ссылку").click()
    shown = dialog.get_by_label("Новая ссылка")
    await expect(shown).to_have_value(
        re.compile(rf"^{re.escape(service.base)}/s/[A-Za-z0-9_-]{{32}}$"))
    address = await shown.input_value()
    await dialog.get_by_role("button", name="Копировать").click()
    await expect(dialog.get_by_text("Ссылка скопирована.")).to_be_visible()
    assert await page.evaluate("navigator.clipboard.readText()") == address
    row = dialog.locator("li.share-link")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("Открыта: 0")
    await expect(row).to_contain_text("с записью")
    assert await page.evaluate(_DIALOG_SPILL) <= 0
    await dialog.get_by_role("button", name="Закрыть").click()
    await expect(dialog).to_be_hidden()
    await expect(page.get_by_text("Действующих ссылок: 1")).to_be_visible()

    # Somebody else's browser: no identity, another language, a phone too.
    outside = await browser.new_page(viewport={"width": 360, "height": 740},
                                     extra_http_headers={"Accept-Language": "en"})
    problems: list[str] = []
    outside.on("console", lambda message: problems.append(message.text)
               if message.type == "error" else None)
    opened = await outside.goto(address)
    assert opened is not None
    assert opened.status == 200
    await expect(outside.locator("h1")).to_be_visible()
    await expect(outside.get_by_text("young man, said the archivist.")).to_be_visible()
    await expect(outside.locator("audio")).to_have_count(1)
    source = await outside.locator("audio").get_attribute("src")
    assert source == address.removeprefix(service.base) + "/audio"
    # The page's CSP lets it fetch nothing itself (connect-src 'none'): asked from outside.
    played = await outside.request.get(service.base + source, headers={"Range": "bytes=0-99"})
    assert played.status == 206
    await expect(outside.get_by_role("link", name="Download text (TXT)")).to_be_visible()
    assert await outside.evaluate(
        "document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert problems == []  # the strict CSP let the page's own style through

    await page.get_by_role("button", name="Поделиться…").click()
    await expect(row).to_contain_text("Открыта: 1")
    assert address not in await dialog.inner_text()  # shown once, never listed
    await row.get_by_role("button", name="Отозвать").click()
    await expect(dialog.get_by_text("Ссылка отозвана.")).to_be_visible()
    await expect(row).to_have_count(0)
    gone = await outside.goto(address)
    assert gone is not None
    assert gone.status == 404
    await outside.close()
    assert watch.problems == []
