"""The record card's layout in a real browser (headless Chromium): on a 360 px phone in
Russian no fact's term runs under its value («Длительность» did), and on a desktop the
card is two columns whose boxes are as tall as what they hold (it was three equal
columns, the player's and the downloads' boxes stretched empty to the facts' height).
The harness is `tests/helpers/webapp.py`, its fixtures in the conftest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.webapp import AUDIO, Service, open_page

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.timeout(90)

# Each fact's row: how far its term's text reaches past the start of its value
# (> 0: they overlap) and past its own box.
_FACT_ROWS = """
[...document.querySelectorAll(".facts > div")].map((row) => {
  const term = row.querySelector("dt");
  const value = row.querySelector("dd").getBoundingClientRect();
  const text = document.createRange();
  text.selectNodeContents(term);
  return { term: term.textContent, overlap: text.getBoundingClientRect().right - value.left,
           spill: term.scrollWidth - term.clientWidth };
})
"""

# Each box of the card's grid: the empty height below what it holds.
_EMPTY_BELOW = """
[...document.querySelectorAll(".card-grid .panel")]
  .filter((panel) => !panel.hidden && !panel.classList.contains("panel-wide"))
  .map((panel) => {
    const box = panel.getBoundingClientRect();
    const style = getComputedStyle(panel);
    let bottom = box.top + parseFloat(style.borderTopWidth) + parseFloat(style.paddingTop);
    for (const child of panel.querySelectorAll("*")) {
      const rect = child.getBoundingClientRect();
      if (rect.height === 0) continue;
      bottom = Math.max(bottom, rect.bottom + parseFloat(getComputedStyle(child).marginBottom));
    }
    return { box: panel.getAttribute("aria-label") || panel.getAttribute("aria-labelledby"),
             empty: box.bottom - parseFloat(style.borderBottomWidth)
               - parseFloat(style.paddingBottom) - bottom };
  })
"""


async def _done_card(browser: Browser, service: Service, width: int) -> tuple[Page, Any]:
    from playwright.async_api import expect  # noqa: PLC0415

    service.recognizer.pending_checks = 0
    page, watch = await open_page(browser, service)
    await page.set_viewport_size({"width": width, "height": 900})
    await page.goto(service.base + "/upload")
    await page.locator("#language").select_option("ru")
    await page.locator("#file-input").set_input_files(AUDIO / "librivox_0880.mp3")
    await expect(page.locator(".upload-done")).to_have_count(1)
    await page.locator(".upload-done a").click()
    await page.wait_for_url("**/records/*")
    await expect(page.get_by_role("status")).to_have_text("Готово.", timeout=20_000)
    await expect(page.locator(".facts dt").first).to_be_visible()
    return page, watch


async def test_a_phone_shows_each_fact_beside_its_term(
    browser: Browser, service: Service,
) -> None:
    page, watch = await _done_card(browser, service, 360)
    rows = await page.evaluate(_FACT_ROWS)
    assert "Длительность" in {row["term"] for row in rows}
    for row in rows:
        assert row["overlap"] <= 0, row
        assert row["spill"] <= 0, row
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    assert watch.problems == []


async def test_a_desktop_card_has_no_empty_boxes(browser: Browser, service: Service) -> None:
    page, watch = await _done_card(browser, service, 1280)
    columns = await page.evaluate(
        'getComputedStyle(document.querySelector(".card-grid")).gridTemplateColumns')
    assert len(columns.split()) == 2, columns
    # The facts beside the player: both start the grid's first row.
    tops = await page.evaluate(
        '[".card-details", ".card-side"].map((s) =>'
        " document.querySelector(s).getBoundingClientRect().top)")
    assert abs(tops[0] - tops[1]) < 1, tops
    boxes = await page.evaluate(_EMPTY_BELOW)
    assert len(boxes) >= 3, boxes  # the facts, the player, the downloads
    for box in boxes:
        assert box["empty"] < 2, box
    assert watch.problems == []
