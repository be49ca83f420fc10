"""The web app in a real browser (headless Chromium) against the whole service on loopback:
upload, follow, read, search, resume; the keyboard, a small screen, escaping; another
site's page. The harness is `tests/helpers/webapp.py`, its fixtures in the conftest."""

from __future__ import annotations

import re
import shutil
import time
from itertools import pairwise
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import ClientSession, web

from tests.helpers import webapp
from tests.helpers.processes import free_port
from tests.helpers.webapp import (
    AUDIO,
    POLL_MS,
    UPLOAD_LIMIT,
    Service,
    card_fetches,
    need_browser,
    open_page,
    until,
    until_sought,
    upload,
    watch_seeks,
)
from transcriber.core.errors import PermanentFailure

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(90)



def test_a_missing_browser_fails_under_ci_and_skips_elsewhere(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
) -> None:
    monkeypatch.setattr(webapp, "CHROMIUM", tmp_path / "no-chromium")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="no-chromium"):
        need_browser()
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match="apt-get install chromium"):
        need_browser()



async def test_upload_follow_read_search_and_resume(
    browser: Browser, service: Service, tmp_path: Path,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service)
    await page.goto(service.base + "/")
    await expect(page.locator("#who")).to_have_text("Signed in as local")
    await expect(page.get_by_role("status")).to_contain_text("No recordings yet")

    # Upload a real recording; the progress bar fills and the card is one click away.
    await upload(page, AUDIO / "librivox_0880.mp3")
    first = page.locator(".upload").first
    await expect(first).to_contain_text("Uploaded.")
    assert await first.locator("progress").get_attribute("value") == "100"
    await first.get_by_role("link", name="Open “librivox_0880.mp3”").click()
    await page.wait_for_url("**/records/*")
    record_id = page.url.rsplit("/", 1)[1]

    # The card follows the pipeline to the end, then stops asking.
    await expect(page.locator("h1")).to_have_text("librivox_0880.mp3")
    await expect(page.get_by_role("status")).to_have_text(
        "Working on it: waiting for recognition…")
    await expect(page.locator(".stage-current")).to_have_attribute("data-stage", "transcribed")
    await expect(page.locator(".transcript")).to_contain_text("appears here when recognition")
    # The progress bar of the recognition, with its words: one part running, none done
    # yet; the share that time says is done, short of the end, and the time left.
    await expect(page.locator(".progress-bar .progress-text")).to_have_text(
        re.compile(r"^Recognizing · \d+% · less than a minute left$"))
    value = float(await page.locator(".progress-bar progress").get_attribute("value") or 0)
    assert 0.05 <= value < 1.0
    seen = len(watch.card_requests)
    await until(lambda: len(watch.card_requests) >= seen + 2)
    service.recognizer.pending_checks = 0
    await expect(page.get_by_role("status")).to_have_text("Done.", timeout=20_000)
    await expect(page.locator(".stage-achieved")).to_have_count(5)
    await expect(page.locator(".progress-bar")).to_have_count(0)
    utterances = page.locator("button.utterance")
    await expect(utterances).to_have_count(2)
    await expect(utterances.nth(1)).to_contain_text("0:01")
    await expect(utterances.nth(1)).to_contain_text("young man, said the archivist.")
    player = page.locator("audio")
    assert (await player.get_attribute("src") or "").endswith(
        f"/app/audiorecords/{record_id}/file?copy=normalized")
    await watch_seeks(page)
    await utterances.nth(1).click()
    await until_sought(page, 1.2)
    formats = page.locator(".downloads a[data-format]")
    await expect(formats).to_have_text(["TXT", "SRT", "VTT", "JSON", "MD", "DOCX"])
    srt = await page.request.get(service.base + (await formats.nth(1).get_attribute("href") or ""))
    assert srt.status == 200
    assert "young man, said the archivist." in await srt.text()
    await expect(page.get_by_role("link", name="Original file")).to_have_attribute(
        "href", f"/app/audiorecords/{record_id}/file?copy=original")
    await page.locator(".history-panel summary").click()
    await expect(page.locator(".history tbody tr")).to_have_count(4)
    await page.screenshot(path=tmp_path / "card.png", full_page=True)
    polls = len(watch.card_requests)
    await page.wait_for_timeout(3 * POLL_MS)
    assert len(watch.card_requests) == polls, "a done card is not polled"
    fetches = await card_fetches(page)
    waits = [after["began"] - before["answered"]
             for before, after in pairwise(fetches)]
    assert len(waits) >= 2, "the card was polled while the record moved"
    # The page asks again poll_after_ms after the last answer came, never sooner
    # (a millisecond of slack for the two clocks' rounding).
    assert all(wait >= POLL_MS - 1 for wait in waits), waits

    # The recognizer refuses the next recording: it halts, and Resume finishes it.
    service.recognizer.submit_faults.append(PermanentFailure("the recognizer refused it"))
    await upload(page, AUDIO / "espeak_en.ogg")
    await page.get_by_role("link", name="Open “espeak_en.ogg”").click()
    halt = page.locator(".halt")
    await expect(halt).to_contain_text("A step failed", timeout=20_000)
    await expect(halt).to_contain_text("the recognizer refused it")
    await expect(halt).to_contain_text("while sending it for recognition")
    await expect(page.locator(".transcript")).to_have_text(
        "No transcript: processing stopped before recognition finished.")
    # Normalized was achieved; sending for recognition is where it stopped.
    await expect(page.locator(".stage-achieved")).to_have_count(2)
    await expect(page.locator(".stage-halted")).to_have_attribute("data-stage", "submitted")
    await page.screenshot(path=tmp_path / "halted.png", full_page=True)
    await halt.get_by_role("button", name="Resume").click()
    await expect(page.get_by_role("status")).to_have_text("Done.", timeout=20_000)
    await expect(halt).to_have_count(0)
    await expect(utterances).to_have_count(2)

    # Not audio, and too large: the API's own words are shown.
    notes = tmp_path / "notes.txt"
    notes.write_text("these are words, not sound\n" * 20)
    await upload(page, notes)
    refused = page.locator(".upload-error").first
    await expect(refused).to_contain_text("the file is not audio that can be read")
    big = tmp_path / "huge.wav"
    big.write_bytes(b"\0" * (UPLOAD_LIMIT * 3))
    await page.locator("#file-input").set_input_files(big)
    await expect(page.locator(".upload-error")).to_have_count(2)
    await expect(page.locator(".upload-error").first).to_contain_text(
        f"the file is larger than {UPLOAD_LIMIT} bytes")
    await page.screenshot(path=tmp_path / "upload.png", full_page=True)

    # A third recording, then the list: newest first, two a page, "Load more".
    await page.locator("#file-input").set_input_files(AUDIO / "festival_ru.m4a")
    # The upload list outlives the view: all three uploads are still listed.
    await expect(page.locator(".upload-done")).to_have_count(3)
    await page.get_by_role("link", name="Recordings", exact=True).click()
    names = page.locator(".record-link")
    await expect(names).to_have_text(["festival_ru.m4a", "espeak_en.ogg"])
    await page.get_by_role("button", name="Load more").click()
    await expect(names).to_have_text(["festival_ru.m4a", "espeak_en.ogg", "librivox_0880.mp3"])
    await expect(page.get_by_role("button", name="Load more")).to_be_hidden()
    await expect(page.locator(".record .badge").nth(2)).to_have_text("Done")
    await page.screenshot(path=tmp_path / "list.png", full_page=True)

    # Search by file name (typing) and by transcript words (Enter); the URL keeps it.
    search = page.get_by_label("Search recordings")
    await search.fill("librivox")
    await expect(names).to_have_text(["librivox_0880.mp3"])
    assert page.url.endswith("/?q=librivox")
    await search.fill("archivist")
    await search.press("Enter")
    await expect(names).to_have_count(2)
    await search.fill("nothing-like-this")
    await search.press("Enter")
    await expect(page.get_by_role("status")).to_have_text("Nothing matches “nothing-like-this”.")
    await page.go_back()
    await expect(names).to_have_count(2)

    # A reload of a card's address is served by the app too.
    await page.goto(f"{service.base}/records/{record_id}")
    await expect(page.locator("h1")).to_have_text("librivox_0880.mp3")
    assert watch.problems == []


async def test_keyboard_small_screen_and_escaping(
    browser: Browser, service: Service, tmp_path: Path,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    service.recognizer.pending_checks = 0
    page, watch = await open_page(browser, service)
    await page.set_viewport_size({"width": 380, "height": 800})
    # A file name that would be markup if it were ever parsed as HTML.
    hostile = tmp_path / "<img src=x onerror=alert(1)>.mp3"
    shutil.copy(AUDIO / "librivox_0880.mp3", hostile)
    await page.goto(service.base + "/upload")
    await page.locator("#file-input").set_input_files(hostile)
    await expect(page.locator(".upload-done")).to_have_count(1)

    # Keyboard only: skip link, the list link, then Enter opens the card.
    await page.goto(service.base + "/")
    await page.keyboard.press("Tab")
    await expect(page.get_by_role("link", name="Skip to content")).to_be_focused()
    link = page.locator(".record-link")
    await expect(link).to_have_text("<img src=x onerror=alert(1)>.mp3")
    # The first card request is refused (429): the card says so and waits before asking again.
    refused: list[float] = []

    async def refuse_once(route: Any) -> None:
        if refused:
            await route.continue_()
            return
        refused.append(time.monotonic())
        await route.fulfill(
            status=429, headers={"Retry-After": "1"}, content_type="application/json",
            body='{"error": {"code": "rate_limited", "message": "too many requests"}}')

    await page.route("**/app/audiorecords/*", refuse_once)
    await link.focus()
    await page.keyboard.press("Enter")
    await page.wait_for_url("**/records/*")
    await expect(page.locator("h1")).to_be_focused()
    await expect(page.get_by_role("status")).to_have_text(
        "too many requests Trying again in 4 s.")
    await expect(page.get_by_role("status")).to_have_text("Done.", timeout=20_000)
    # Before the first answer the interval is unknown: the app waits the default 4 s.
    fetches = await card_fetches(page)
    assert len(fetches) >= 2
    assert fetches[1]["began"] - fetches[0]["answered"] >= 4000 - 1
    await expect(page.locator("h1")).to_have_text("<img src=x onerror=alert(1)>.mp3")
    assert await page.locator("main img").count() == 0
    # The page fits a phone: nothing wider than the viewport.
    overflow = await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")
    assert overflow <= 0
    await page.screenshot(path=tmp_path / "card-phone.png", full_page=True)

    # An unknown record is a friendly page, not a crash.
    await page.goto(service.base + "/records/01j0000000000000000000000z")
    await expect(page.locator("h1")).to_have_text("Recording not found")
    assert watch.problems == []


_EVIL_PAGE = """<!doctype html><meta charset="utf-8"><title>evil</title><script>
const target = "TARGET/app/audiorecords";
window.done = fetch("/a.mp3").then(r => r.blob()).then(audio => {
  const form = new FormData();
  form.append("file", audio, "planted.mp3");
  return Promise.allSettled([
    fetch(target, {method: "POST", mode: "no-cors", body: audio,
                   headers: {"Content-Type": "text/plain"}}),
    fetch(target, {method: "POST", mode: "no-cors", body: form, credentials: "include"}),
    fetch(target, {method: "POST", mode: "cors", body: form,
                   headers: {"X-Transcriber-Client": "web"}}),
  ]);
}).then(results => results.map(r => r.status));
</script>"""


async def test_another_sites_page_cannot_upload_and_our_page_marks_its_calls(
    browser: Browser, service: Service,
) -> None:
    # The hostile page lives on another origin (another port of loopback).
    evil = web.Application()
    html = _EVIL_PAGE.replace("TARGET", service.base)

    async def evil_page(_: web.Request) -> web.Response:
        return web.Response(text=html, content_type="text/html")

    async def evil_audio(_: web.Request) -> web.Response:
        return web.Response(body=(AUDIO / "librivox_0880.mp3").read_bytes(),
                            content_type="audio/mpeg")

    evil.router.add_get("/", evil_page)
    evil.router.add_get("/a.mp3", evil_audio)
    runner = web.AppRunner(evil)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        page = await browser.new_page()
        await page.goto(f"http://127.0.0.1:{port}/")
        outcomes = await page.evaluate("window.done")
        # no-cors fetches resolve opaquely; the one with our header fails its preflight.
        assert outcomes == ["fulfilled", "fulfilled", "rejected"]
        await page.close()
    finally:
        await runner.cleanup()
    async with (ClientSession() as session,
                session.get(service.base + "/app/audiorecords") as resp):
        assert (await resp.json())["items"] == [], "another site's page stored a record"
    page, watch = await open_page(browser, service)
    sent: list[dict[str, str]] = []
    page.on("request", lambda request: sent.append(request.headers)
            if "/app/" in request.url else None)
    await page.goto(service.base + "/")
    from playwright.async_api import expect  # noqa: PLC0415

    await expect(page.get_by_role("status")).to_contain_text("No recordings yet")
    assert sent
    assert all(headers.get("x-transcriber-client") == "web" for headers in sent)
    assert watch.problems == []
