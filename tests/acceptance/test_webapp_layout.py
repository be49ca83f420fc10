"""The record card's layout in a real browser (headless Chromium): on a 360 px phone in
Russian no fact's term runs under its value («Длительность» did); the card is built
around the transcript (issue 42): on a phone the transcript comes first under its
player and takes ≥ 90 % of the width, nothing overlaps, the player stays in view
scrolled down to the details, a one-speaker record shows no speaker furniture; on a
desktop the transcript is the wide column beside a compact side panel, every box as
tall as what it holds. Seen at the last stop and held here: no blank band under the
facts, the card's question field takes its box's width, and a phone's header keeps
the links on one line. Screenshots of each go to the test's folder.
The harness is `tests/helpers/webapp.py`, its fixtures in the conftest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.webapp import Service, done_card, open_page

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.timeout(90)

# Each fact's row: how far its term's text reaches past the start of its value
# (> 0: they overlap) and past its own box.
_FACT_ROWS = """
[...document.querySelectorAll(".facts > div")].map((row) => {
  const term = row.querySelector("dt");
  const value = row.querySelector("dd").getBoundingClientRect();
  // The term's words (its first text), not the hidden ": " that parts it from the value
  // in copied text.
  const words = term.firstChild;
  const text = document.createRange();
  text.selectNodeContents(words);
  return { term: words.textContent, overlap: text.getBoundingClientRect().right - value.left,
           spill: term.scrollWidth - term.clientWidth };
})
"""

# Each box of the card's grid: the empty height below what it holds.
_EMPTY_BELOW = """
[...document.querySelectorAll(".card-layout .panel")]
  .filter((panel) => !panel.hidden && !panel.classList.contains("history-panel"))
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


# From the facts' bottom to the next thing drawn in the details box (a label, a field,
# a button, a line of text): an empty note's margins once left a blank band there.
_GAP_UNDER_FACTS = """(() => {
  const facts = document.querySelector(".card-details .facts");
  const bottom = facts.getBoundingClientRect().bottom;
  const next = [...document.querySelectorAll(
      ".card-details label, .card-details textarea, .card-details input, "
      + ".card-details select, .card-details button, .card-details p, .card-details li")]
    .filter((el) => !facts.contains(el) && el.getBoundingClientRect().height > 0
      && el.getBoundingClientRect().top >= bottom);
  return Math.min(...next.map((el) => el.getBoundingClientRect().top)) - bottom;
})()"""

# The card's question field's share of its box's width (inside the padding).
_ASK_SHARE = """(() => {
  const box = document.querySelector(".ask-box");
  const style = getComputedStyle(box);
  const inner = box.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return document.querySelector("#card-ask").getBoundingClientRect().width / inner;
})()"""

# The header's links: the tops of their boxes (one line: one top).
_NAV_TOPS = """[...document.querySelectorAll(".top nav a")].map(
  (a) => Math.round(a.getBoundingClientRect().top))"""


async def _held_nits(page: Page) -> None:
    """The three seen at the last stop: none is back."""
    gap = await page.evaluate(_GAP_UNDER_FACTS)
    assert 0 <= gap < 24, gap
    share = await page.evaluate(_ASK_SHARE)
    assert share >= 0.6, share
    tops = await page.evaluate(_NAV_TOPS)
    assert len(tops) >= 6, tops
    assert len(set(tops)) == 1, tops  # the links on one line
    assert await page.evaluate(
        "document.documentElement.scrollWidth - window.innerWidth") <= 0


async def _done_card(browser: Browser, service: Service, width: int) -> tuple[Page, Any]:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service, width=width)
    await done_card(page, service)
    await expect(page.locator(".facts dt").first).to_be_visible()
    return page, watch


async def test_a_phone_shows_each_fact_beside_its_term(
    browser: Browser, service: Service,
) -> None:
    page, watch = await _done_card(browser, service, 360)
    rows = await page.evaluate(_FACT_ROWS)
    assert "Длительность" in {row["term"] for row in rows}
    # The language asked for reads as the upload form calls it, not the API's "auto".
    from playwright.async_api import expect  # noqa: PLC0415
    language = page.locator(".facts > div", has=page.locator("dt", has_text="Язык"))
    await expect(language.locator("dd")).to_have_text("Определить автоматически")
    for row in rows:
        assert row["overlap"] <= 0, row
        assert row["spill"] <= 0, row
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    assert watch.problems == []


# The card's boxes as drawn: each visible one's rectangle (page coordinates).
_BOXES = """
[".listen-panel", ".transcript-panel", ".card-details", ".downloads-panel",
 ".speakers-panel", ".history-panel"].flatMap((selector) => {
  const box = document.querySelector(selector);
  if (!box || box.hidden || box.closest("[hidden]")) return [];
  const r = box.getBoundingClientRect();
  return [{ box: selector, left: r.left, right: r.right, top: r.top + scrollY,
            bottom: r.bottom + scrollY, width: r.width }];
})
"""


def _overlaps(boxes: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(a["box"], b["box"]) for i, a in enumerate(boxes) for b in boxes[i + 1:]
            if a["left"] < b["right"] - 0.5 and b["left"] < a["right"] - 0.5
            and a["top"] < b["bottom"] - 0.5 and b["top"] < a["bottom"] - 0.5]


async def test_a_phone_card_is_built_around_the_transcript(
        browser: Browser, service: Service, tmp_path: Path) -> None:
    page, watch = await _done_card(browser, service, 360)
    boxes = await page.evaluate(_BOXES)
    named = {box["box"]: box for box in boxes}
    assert {".listen-panel", ".transcript-panel", ".card-details"} <= set(named), boxes
    assert _overlaps(boxes) == []
    # The transcript first (under its player) and nearly as wide as the phone.
    width = await page.evaluate("window.innerWidth")
    text = await page.evaluate(
        'document.querySelector(".transcript").getBoundingClientRect().width')
    assert text >= 0.9 * width, (text, width)
    assert named[".listen-panel"]["bottom"] <= named[".transcript-panel"]["top"]
    assert named[".transcript-panel"]["bottom"] <= named[".card-details"]["top"]
    # One speaker: no speaker furniture (no panel, no label on a line).
    assert ".speakers-panel" not in named
    assert await page.locator(".utterances .line-speaker").count() == 0
    assert await page.locator(".transcript select").count() == 0
    await _held_nits(page)
    await page.screenshot(path=tmp_path / "card-360.png", full_page=True)
    # Scrolled down to the details and downloads, the player is still in view.
    await page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    assert await page.evaluate("window.scrollY") > 0
    player = await page.evaluate(
        'JSON.parse(JSON.stringify(document.querySelector(".listen-panel")'
        ".getBoundingClientRect()))")
    assert player["top"] >= 0, player
    assert player["bottom"] <= 900, player
    await page.screenshot(path=tmp_path / "card-360-scrolled.png")
    assert await page.evaluate(
        "document.documentElement.scrollWidth - window.innerWidth") <= 0
    assert watch.problems == []


async def test_a_desktop_card_has_the_transcript_wide_and_no_empty_boxes(
        browser: Browser, service: Service, tmp_path: Path) -> None:
    page, watch = await _done_card(browser, service, 1280)
    columns = await page.evaluate(
        'getComputedStyle(document.querySelector(".card-layout")).gridTemplateColumns')
    assert len(columns.split()) == 2, columns
    boxes = await page.evaluate(_BOXES)
    named = {box["box"]: box for box in boxes}
    assert _overlaps(boxes) == []
    # The player over the transcript, the side panel beside them, both from the top.
    assert abs(named[".listen-panel"]["top"] - named[".card-details"]["top"]) < 1, boxes
    assert named[".transcript-panel"]["width"] > 2 * named[".card-details"]["width"]
    assert named[".card-details"]["left"] >= named[".transcript-panel"]["right"]
    empty = await page.evaluate(_EMPTY_BELOW)
    assert len(empty) >= 4, empty  # the player, the transcript, the facts, the downloads
    for box in empty:
        assert box["empty"] < 2, box
    await _held_nits(page)
    await page.screenshot(path=tmp_path / "card-1280.png", full_page=True)
    assert watch.problems == []
