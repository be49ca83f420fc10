"""The web app's API tokens page in a real browser: made and shown once, listed without the
token, used, revoked; in Russian too."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.webapp import Service, open_page

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(90)


async def _me_status(service: Service, token: str) -> int:
    async with ClientSession() as session, session.get(
            f"{service.base}/app/me", headers={"Authorization": f"Bearer {token}"}) as me:
        return me.status


async def test_a_token_is_made_shown_once_used_and_revoked(browser: Browser,
                                                           service: Service) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service)
    page.on("dialog", lambda dialog: dialog.accept())
    await page.goto(service.base + "/")
    await page.get_by_role("link", name="API tokens").click()
    await page.wait_for_url("**/tokens")
    await expect(page.locator("h1")).to_have_text("API tokens")
    await expect(page.get_by_text("You have no tokens.")).to_be_visible()
    await page.get_by_label("Name").fill("phone shortcut")
    await page.get_by_label("Access").select_option("read")
    await page.get_by_label("Expires").select_option("30")
    await page.get_by_role("button", name="Create token").click()
    shown = page.get_by_label("The new token")
    await expect(shown).to_have_value(re.compile(r"^tx_[A-Za-z0-9_-]{43}$"))
    token = await shown.input_value()
    # Its underscores show: the field is a whole line tall for its font, nothing clipped.
    room = await shown.evaluate("""(input) => ({ inner: input.clientHeight
        - parseFloat(getComputedStyle(input).paddingTop)
        - parseFloat(getComputedStyle(input).paddingBottom),
      font: parseFloat(getComputedStyle(input).fontSize) })""")
    assert room["inner"] >= 1.5 * room["font"], room
    # Copy puts it on the clipboard.
    await page.context.grant_permissions(["clipboard-read", "clipboard-write"],
                                         origin=service.base)
    await page.get_by_role("button", name="Copy").click()
    await expect(page.get_by_text("Copied.")).to_be_visible()
    assert await page.evaluate("navigator.clipboard.readText()") == token
    row = page.locator("table.tokens tbody tr")
    await expect(row).to_have_count(1)
    await expect(row).to_contain_text("phone shortcut")
    await expect(row).to_contain_text("Read only")
    assert token not in await page.locator("table.tokens").inner_text()
    assert await _me_status(service, token) == 200
    # Shown once: a reload lists it, never shows it again.
    await page.reload()
    await expect(row).to_have_count(1)
    assert token not in await page.content()
    await row.get_by_role("button", name="Revoke").click()
    await expect(page.get_by_role("status")).to_have_text("Token phone shortcut revoked.")
    await expect(row).to_have_count(0)
    assert await _me_status(service, token) == 401
    # The page in Russian.
    await page.locator("#language").select_option("ru")
    await expect(page.locator("h1")).to_have_text("Токены API")
    await expect(page.get_by_role("button", name="Создать токен")).to_be_visible()
    assert watch.problems == []
