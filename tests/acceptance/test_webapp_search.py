"""Search by word forms in a real browser: a result's lines with the matched words
marked, a line that opens the card at its moment, the card's find box stepping
through the matches; markup in a transcript stays text. Same service and
Chromium as tests/helpers/webapp.py."""

from __future__ import annotations

import asyncio
import time
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.webapp import AUDIO, Service, open_page, until_true_in_page
from transcriber.ports import Utterance

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.timeout(90)

HOSTILE = "<b>Жирный</b> шрифт и <img src=x onerror=alert(1)> в отчёте"
SPEECH_RU = (
    Utterance(start_ms=0, end_ms=1400, channel=0, text="Привет, это проверка архива."),
    Utterance(start_ms=1400, end_ms=2800, channel=0,
              text="Пожалуйста, отправь отчёт до конца недели."),
    Utterance(start_ms=2800, end_ms=4200, channel=0, text=HOSTILE),
    Utterance(start_ms=4200, end_ms=5600, channel=0,
              text="На следующей неделе отправим отчёты снова."),
)
PLAYER = "document.querySelector('audio')"
# Playback refused as a browser's autoplay rules may refuse it, and allowed again
# (each ends in `null`: Playwright calls an expression's value that is a function).
REFUSE_PLAY = ("window.pagePlay = HTMLMediaElement.prototype.play;"
               " HTMLMediaElement.prototype.play = () => Promise.reject("
               "new DOMException('refused', 'NotAllowedError')); null")
ALLOW_PLAY = "HTMLMediaElement.prototype.play = window.pagePlay; null"


async def until_done(service: Service, seconds: float = 20) -> str:
    """The id of the only record, once the pipeline is done with it."""
    deadline = time.monotonic() + seconds
    async with ClientSession() as session:
        while True:
            async with session.get(service.base + "/app/audiorecords") as response:
                items = (await response.json())["items"]
            if items and items[0]["stage"] == "done":
                return str(items[0]["id"])
            assert time.monotonic() < deadline, "timed out"
            await asyncio.sleep(0.1)


async def until_at(page: Page, seconds: float) -> None:
    """The player stands at `seconds` (and is not playing: the test says why)."""
    await until_true_in_page(page, f"Math.abs({PLAYER}.currentTime - {seconds}) < 0.05")


async def test_word_forms_marked_a_line_opens_its_moment_and_find_steps(
    browser: Browser, service: Service,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    service.recognizer.pending_checks = 0
    service.recognizer.utterances = list(SPEECH_RU)
    page, watch = await open_page(browser, service)
    await page.goto(service.base + "/upload")
    await page.locator("#file-input").set_input_files(AUDIO / "espeak_en.ogg")
    await expect(page.locator(".upload-done")).to_have_count(1)
    record_id = await until_done(service)

    # Typing another form of a word finds its forms; the lines show them marked.
    await page.get_by_role("link", name="Recordings", exact=True).click()
    search = page.get_by_label("Search recordings")
    await search.fill("неделя")
    result = page.locator(".record")
    lines = result.locator(".snippet")
    await expect(lines).to_have_count(2)
    await expect(page.get_by_role("status")).to_contain_text("1 found for “неделя”")
    assert page.url.endswith("/?q=%D0%BD%D0%B5%D0%B4%D0%B5%D0%BB%D1%8F")
    await expect(lines.nth(0).locator(".snippet-time")).to_have_text("0:01")
    await expect(lines.nth(0).locator(".snippet-text")).to_have_text(
        "Пожалуйста, отправь отчёт до конца недели.")
    await expect(lines.locator("mark")).to_have_text(["недели", "неделе"])
    await expect(lines.nth(1).locator(".snippet-time")).to_have_text("0:04")

    # Enter asks for the word's forms as typed: the same lines.
    await search.fill("отправить")
    await search.press("Enter")
    await expect(lines.locator("mark")).to_have_text(["отправь", "отправим"])

    # Markup in an utterance is shown as text: no element is made of it.
    await search.fill("жирный")
    await expect(lines).to_have_count(1)
    await expect(lines.locator(".snippet-text")).to_have_text(HOSTILE)
    await expect(lines.locator("mark")).to_have_text(["Жирный"])
    assert await page.locator("main img, main b").count() == 0

    # A line opens the card at its moment, the utterance highlighted; where the
    # browser refuses to play (autoplay rules) the player still stands there.
    await search.fill("неделя")
    await expect(lines).to_have_count(2)
    await page.evaluate(REFUSE_PLAY)
    await lines.nth(0).click()
    await page.wait_for_url(f"**/records/{record_id}?t=1400&u=1")
    await until_at(page, 1.4)
    found = page.locator(".utterances > li.utterance-found")
    await expect(found).to_have_count(1)
    await expect(found).to_have_attribute("data-index", "1")
    assert await page.evaluate(f"{PLAYER}.paused")

    # Back: the same results (the search as typed); where it may, the player plays.
    await page.go_back()
    await expect(lines).to_have_count(2)
    await page.evaluate(ALLOW_PLAY)
    await lines.nth(1).click()
    await page.wait_for_url(f"**/records/{record_id}?t=4200&u=3")
    await until_true_in_page(page, f"!{PLAYER}.paused && {PLAYER}.currentTime >= 4.15")
    await page.evaluate(f"{PLAYER}.pause()")
    assert await page.evaluate(f"{PLAYER}.currentTime") < 5.6
    await expect(found).to_have_attribute("data-index", "3")

    # The find box: the matches marked, Enter and Shift+Enter step through them.
    find = page.get_by_label("Find in the transcript")
    count = page.locator(".find-count")
    await find.fill("отправить")
    await expect(count).to_have_text("1 of 2")
    await expect(page.locator(".utterances > li.utterance-match")).to_have_count(2)
    await expect(page.locator(".utterances .utterance-text mark")).to_have_text(
        ["отправь", "отправим"])
    await find.press("Enter")
    await expect(count).to_have_text("2 of 2")
    await expect(found).to_have_attribute("data-index", "3")
    await until_at(page, 4.2)
    await find.press("Shift+Enter")
    await expect(count).to_have_text("1 of 2")
    await expect(found).to_have_attribute("data-index", "1")
    await until_at(page, 1.4)
    await page.get_by_role("button", name="Previous").click()
    await expect(count).to_have_text("2 of 2")
    await until_at(page, 4.2)

    # A correction redraws the transcript: the box asks again and keeps its place.
    line = page.locator('.utterances li[data-index="0"]')
    await line.get_by_role("button", name="Edit").click()
    await line.locator("input").fill("Привет, отправляю архив.")
    await page.keyboard.press("Enter")
    await expect(page.locator(".transcript-note")).to_have_text("Correction saved.")
    await expect(count).to_have_text("3 of 3")
    await expect(found).to_have_attribute("data-index", "3")
    await expect(line.locator("mark")).to_have_text(["отправляю"])

    # Markup found in the transcript is marked as text too.
    await find.fill("жирный")
    await expect(count).to_have_text("1 of 1")
    await expect(page.locator(".utterances .utterance-text mark")).to_have_text(["Жирный"])
    await expect(page.locator('.utterances li[data-index="2"] .utterance-text')).to_have_text(
        HOSTILE)
    assert await page.locator("main img, main b").count() == 0
    await find.fill("")
    await expect(count).to_have_text("")
    await expect(page.locator(".utterances mark")).to_have_count(0)
    assert watch.problems == []
