"""Speakers in a real browser: each in its own colour with a share of the talk,
renamed in place, a line moved to another speaker. Same service and Chromium as
tests/helpers/webapp.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.webapp import Service, done_card, open_page, put_transcript
from transcriber.ports import Utterance

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(120)

DIALOGUE = [
    Utterance(start_ms=0, end_ms=1000, channel=0, text="He was not an ill disposed",
              speaker="S1"),
    Utterance(start_ms=1000, end_ms=4000, channel=0, text="young man, said the archivist.",
              speaker="S2"),
]


async def test_speakers_coloured_renamed_and_a_line_moved(
    browser: Browser, service: Service, tmp_path: Path,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service)
    record_id = await done_card(page, service, language=None, done="Done.")
    await expect(page.locator(".speakers-panel")).to_be_hidden()  # no speakers told apart

    # The structure of a recording whose speakers were told apart (the fake recognizer tells
    # no one apart).
    await put_transcript(service, record_id, DIALOGUE)
    await page.reload()

    panel = page.locator(".speakers-panel")
    await expect(panel.locator(".speaker")).to_have_count(2)
    await expect(panel.locator('[data-speaker="S1"]')).to_contain_text("Speaker 1")
    await expect(panel.locator('[data-speaker="S1"]')).to_contain_text("25% of the talk")
    await expect(panel.locator('[data-speaker="S2"]')).to_contain_text("75% of the talk")
    colours = await panel.locator(".speaker-swatch").evaluate_all(
        "els => els.map(e => getComputedStyle(e).backgroundColor)")
    assert len(set(colours)) == 2

    # Rename in place: Esc cancels, Enter saves; the lines follow.
    await panel.get_by_role("button", name="Name Speaker 1").click()
    await panel.locator("input").fill("Never mind")
    await page.keyboard.press("Escape")
    await expect(panel.locator('[data-speaker="S1"] .speaker-name')).to_have_text("Speaker 1")
    await panel.get_by_role("button", name="Name Speaker 1").click()
    await panel.locator("input").fill("Anna")
    await page.keyboard.press("Enter")
    await expect(panel.locator('[data-speaker="S1"] .speaker-name')).to_have_text("Anna")
    line = page.locator('.utterances li[data-index="1"]')
    # A line's speaker is a label; no chooser stands on any line until one is asked for.
    await expect(page.locator(".utterances select")).to_have_count(0)
    await expect(line.locator(".line-speaker")).to_have_text("Speaker 2")
    await line.locator(".line-speaker").click()
    await expect(line.locator("select option")).to_have_text(["Anna", "Speaker 2"])
    await expect(line.locator("select")).to_be_focused()
    # Esc puts the label back, nothing moved.
    await page.keyboard.press("Escape")
    await expect(line.locator("select")).to_have_count(0)
    await expect(line.locator(".line-speaker")).to_be_focused()

    # Move the second line to Anna: a correction, the shares follow.
    await line.locator(".line-speaker").click()
    await line.locator("select").select_option("S1")
    await expect(page.locator(".transcript-note")).to_have_text("Correction saved.")
    # Now one speaker says everything: no speaker furniture is left (no panel, no labels).
    await expect(panel).to_be_hidden()
    await expect(page.locator(".utterances .line-speaker")).to_have_count(0)
    await expect(page.locator(".utterances li.speaker-line")).to_have_count(0)
    async with ClientSession() as session:
        text = await (await session.get(
            f"{service.base}/app/audiorecords/{record_id}/transcript?format=txt")).text()
    assert text.splitlines() == ["Anna: He was not an ill disposed",
                                 "Anna: young man, said the archivist."]
    await page.screenshot(path=tmp_path / "speakers.png", full_page=True)
    assert watch.problems == []
