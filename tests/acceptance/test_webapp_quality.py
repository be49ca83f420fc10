"""The transcript's quality report in a real browser: the banner naming the unclear
stretches, a stretch's link playing the recording from there, the list's mark, the
unsure words underlined and the setting that hides the underline. The real pipeline
makes the report from the fake recognizer's answer (the local recognizer's fields).
Same service and Chromium as tests/helpers/webapp.py."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.helpers.webapp import (
    AUDIO,
    Service,
    open_page,
    until_sought,
    upload,
    watch_seeks,
)
from transcriber.ports import Utterance, Word

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(120)

WORDS = ((" He", 0.93), (" was", 0.21), (" not", 0.9), (" an", 0.9), (" ill", 0.88),
         (" disposed", 0.97))
SAID = [Utterance(start_ms=0, end_ms=1200, channel=0, text="He was not an ill disposed",
                  words=tuple(Word(start_ms=k * 200, end_ms=k * 200 + 200, text=text,
                                   probability=p) for k, (text, p) in enumerate(WORDS)))]


async def test_banner_span_link_list_mark_and_the_underline_setting(
    browser: Browser, service: Service,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    service.recognizer.utterances = SAID
    # A 3-second recording: 0.6 s of its 2.9 s of speech unclear (over 2 %: check).
    service.recognizer.report = {"speech": [[0, 2900]], "unclear": [[1500, 2100]],
                                 "repeats_removed": 0}
    service.recognizer.pending_checks = 0
    page, watch = await open_page(browser, service)
    await page.goto(service.base + "/upload")
    await upload(page, AUDIO / "librivox_0880.mp3")
    await page.get_by_role("link", name="Open “librivox_0880.mp3”").click()
    await page.wait_for_url("**/records/*")
    card_url = page.url
    await expect(page.get_by_role("status").first).to_have_text("Done.", timeout=20_000)

    banner = page.locator(".quality-banner")
    await expect(banner).to_contain_text(
        "Parts of this recording were unclear: 0:01–0:02 — listen there.")
    await expect(banner).to_contain_text("left out of the text")
    link = banner.get_by_role("link", name="0:01–0:02")
    await watch_seeks(page)
    await link.click()
    await until_sought(page, 1.5)

    # The unsure word is underlined, the others are plain text.
    unsure = page.locator(".utterance-text .unsure")
    await expect(unsure).to_have_count(1)
    await expect(unsure).to_have_text(" was")
    await expect(page.locator(".utterance-text")).to_have_text("He was not an ill disposed")

    # The list's small mark.
    await page.goto(service.base + "/")
    await expect(page.locator(".record .quality-mark")).to_have_attribute(
        "title", "Parts of this transcript may need checking")

    # The setting hides the underline (kept in this browser).
    await page.goto(service.base + "/settings")
    box = page.get_by_label("Underline the words the recognizer was unsure of")
    await expect(box).to_be_checked()
    await box.uncheck()
    await page.goto(card_url)
    await expect(page.locator(".utterance-text")).to_have_text("He was not an ill disposed")
    await expect(page.locator(".utterance-text .unsure")).to_have_count(0)
    await expect(page.locator(".quality-banner")).to_be_visible()
    assert watch.problems == []
