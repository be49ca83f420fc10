"""The archive's edits in a real browser: rename, brief, topics and the topic filter,
correcting an utterance (and a conflict), the language on upload, transcribe again,
delete, and the English/Russian switch. Same service and Chromium as
tests/helpers/webapp.py."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.webapp import (
    AUDIO,
    Service,
    open_page,
    upload,
)

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(120)


async def test_name_tag_correct_retranscribe_and_delete(
    browser: Browser, service: Service, tmp_path: Path,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    service.recognizer.pending_checks = 0
    page, watch = await open_page(browser, service)
    page.on("dialog", lambda dialog: dialog.accept())
    await page.goto(service.base + "/upload")
    await page.locator("#upload-language").select_option("ru")
    await upload(page, AUDIO / "librivox_0880.mp3")
    await page.get_by_role("link", name="Open “librivox_0880.mp3”").click()
    await page.wait_for_url("**/records/*")
    record_id = page.url.rsplit("/", 1)[1]
    await expect(page.get_by_role("status").first).to_have_text("Done.", timeout=20_000)
    await expect(page.locator(".facts")).to_contain_text("ru")

    # Rename inline: Esc cancels, Enter saves.
    await page.get_by_role("button", name="Rename").click()
    await page.locator("#title-input").fill("Never mind")
    await page.keyboard.press("Escape")
    await expect(page.locator("h1")).to_have_text("librivox_0880.mp3")
    await page.get_by_role("button", name="Rename").click()
    await page.locator("#title-input").fill("Archivist reading")
    await page.keyboard.press("Enter")
    await expect(page.locator("h1")).to_have_text("Archivist reading")

    # Brief and topics.
    await page.locator("#brief").fill("A chapter read aloud")
    await page.get_by_role("button", name="Save brief").click()
    await expect(page.locator(".edit-note")).to_have_text("Saved.")
    for topic in ("books", "voices"):
        await page.locator("#topic-input").fill(topic)
        await page.keyboard.press("Enter")
        await expect(page.locator(f'.topic-chips [data-topic="{topic}"]')).to_have_count(1)
    await page.get_by_role("button", name="Remove the topic voices").click()
    await expect(page.locator(".topic-chips .chip")).to_have_count(1)

    # Correct an utterance in place: Esc cancels, Enter saves a new revision.
    line = page.locator('.utterances li[data-index="1"]')
    await line.get_by_role("button", name="Edit").click()
    await line.locator("input").fill("ignored")
    await page.keyboard.press("Escape")
    await expect(line.locator("button.utterance")).to_contain_text("young man")
    await line.get_by_role("button", name="Edit").click()
    await line.locator("input").fill("young woman, said the archivist.")
    await page.keyboard.press("Enter")
    await expect(page.locator(".transcript-note")).to_have_text("Correction saved.")
    await expect(page.locator('.utterances li[data-index="1"] button.utterance')).to_contain_text(
        "young woman")

    # Someone else corrects it meanwhile: the page says so instead of overwriting.
    async with ClientSession() as session:
        card = await (await session.get(f"{service.base}/app/audiorecords/{record_id}")).json()
        response = await session.patch(
            f"{service.base}/app/audiorecords/{record_id}/transcript",
            json={"revision": card["revision"], "utterances": [{"index": 0, "text": "Elsewhere"}]},
            headers={"X-Transcriber-Client": "web"})
        assert response.status == 200
    line = page.locator('.utterances li[data-index="0"]')
    await line.get_by_role("button", name="Edit").click()
    await line.locator("input").fill("Mine")
    await page.keyboard.press("Enter")
    await expect(page.locator(".transcript-note")).to_contain_text("changed since you opened it")
    await expect(page.locator('.utterances li[data-index="0"] button.utterance')).to_contain_text(
        "Elsewhere")

    # The topic filter on the list.
    await page.goto(service.base + "/")
    await page.locator('.topic-bar [data-topic="books"]').click()
    await page.wait_for_url("**/?topic=books")
    await expect(page.locator(".record")).to_have_count(1)
    await expect(page.locator(".record-link")).to_have_text("Archivist reading")

    # Transcribe again (confirmed), then delete (confirmed).
    await page.locator(".record-link").click()
    await page.locator("#retranscribe-language").select_option("en")
    await page.get_by_role("button", name="Transcribe again").click()
    await expect(page.locator(".history-panel")).to_contain_text("Transcribe again")
    await expect(page.get_by_role("status").first).to_have_text("Done.", timeout=20_000)
    await expect(page.locator(".facts")).to_contain_text("en")
    await page.screenshot(path=tmp_path / "edited.png", full_page=True)
    await page.get_by_role("button", name="Delete recording").click()
    await page.wait_for_url(service.base + "/")
    await expect(page.get_by_role("status")).to_contain_text("No recordings yet")
    async with ClientSession() as session:
        gone = await session.get(f"{service.base}/app/audiorecords/{record_id}")
        assert gone.status == 404
    assert watch.problems == []


async def test_the_language_follows_the_browser_and_can_be_switched(
    browser: Browser, service: Service,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    context = await browser.new_context(locale="ru-RU")
    page = await context.new_page()
    await page.goto(service.base + "/")
    await expect(page.locator("h1")).to_have_text("Ваши записи")
    await expect(page.locator("#who")).to_contain_text("Вы вошли как")
    await expect(page.get_by_role("link", name="Загрузить").first).to_be_visible()
    await page.locator("#language").select_option("en")
    await expect(page.locator("h1")).to_have_text("Your recordings")
    await page.reload()  # remembered in this browser
    await expect(page.locator("h1")).to_have_text("Your recordings")
    await expect(page.locator("html")).to_have_attribute("lang", "en")
    await context.close()


async def test_what_the_describer_wrote_is_marked_and_can_be_kept(
    browser: Browser, described_service: Service,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    service = described_service
    service.recognizer.pending_checks = 0
    page, watch = await open_page(browser, service)
    await page.goto(service.base + "/upload")
    await upload(page, AUDIO / "librivox_0880.mp3")
    await page.get_by_role("link", name="Open “librivox_0880.mp3”").click()
    await page.wait_for_url("**/records/*")
    await expect(page.get_by_role("status").first).to_have_text("Done.", timeout=20_000)
    # Done before its description: the card keeps asking until the brief is there.
    brief_mark = page.locator('.auto-mark[data-field="brief"]')
    await expect(brief_mark).to_be_visible(timeout=10_000)
    await expect(brief_mark).to_contain_text("written automatically")
    brief = "He was not an ill disposed young man, said the archivist."
    await expect(page.locator("#brief")).to_have_value(brief)
    # A message shorter than a title gets none (it would say it twice): the file name,
    # and no mark offering to keep an empty title.
    title_mark = page.locator('.auto-mark[data-field="title"]')
    await expect(page.locator("h1")).to_have_text("librivox_0880.mp3")
    await expect(title_mark).to_be_hidden()
    await expect(page.locator("h1")).not_to_have_class("automatic")

    # Keep the brief: it is the person's now, the mark goes.
    await brief_mark.get_by_role("button", name="Keep").click()
    await expect(brief_mark).to_be_hidden()
    await expect(page.locator("#brief")).to_have_value(brief)
    # Rename: the title too.
    await page.get_by_role("button", name="Rename").click()
    await page.locator("#title-input").fill("Archivist reading")
    await page.keyboard.press("Enter")
    await expect(page.locator("h1")).to_have_text("Archivist reading")
    await expect(title_mark).to_be_hidden()

    # The list: the title and the brief's first sentence.
    await page.goto(service.base + "/")
    await expect(page.locator(".record-link")).to_have_text(["Archivist reading"])
    await expect(page.locator(".record-brief")).to_have_text([brief])
    async with ClientSession() as session:
        listed = await (await session.get(f"{service.base}/app/audiorecords")).json()
    assert listed["items"][0]["described"]["title"] == "human"
    assert listed["items"][0]["described"]["brief"] == "human"
    assert watch.problems == []
