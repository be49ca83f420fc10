"""The web app records in a real browser (issue 42, item 7): Chromium's fake microphone
plays a known recording; the network goes away in the middle and the recording is
stopped while offline; the page is reloaded online and finishes the upload of what
it kept; the record holds the whole recording.

About 15 s of recording rather than minutes: what is proven (chunks kept while
offline, the deferred-length tus upload resumed from the server's offset after a
reload) does not grow with the length, and the suite's time does.
"""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers import webapp
from tests.helpers.audio import FIXTURES
from tests.helpers.settings import SettingsFactory
from transcriber.providers.ffmpeg import ffmpeg_executable
from transcriber.settings import FfmpegSettings

if TYPE_CHECKING:
    from playwright.async_api import Browser

# Over 10 s: the recording itself takes 14 s of real time.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]
ONLINE_SECONDS = 7
OFFLINE_SECONDS = 7


@pytest.fixture
async def big_service(make_settings: SettingsFactory) -> AsyncIterator[webapp.Service]:
    async with webapp.serving(make_settings, upload_max_bytes=8 * 1024 * 1024) as running:
        yield running


@pytest.fixture
async def microphone_browser(tmp_path: Path) -> AsyncIterator[Browser]:
    webapp.need_browser()
    wav = tmp_path / "speech.wav"
    # Chromium's fake microphone plays a WAV file: a known recording, looped to 60 s.
    await asyncio.to_thread(subprocess.run, [
        ffmpeg_executable(FfmpegSettings()), "-nostdin", "-loglevel", "error",
        "-stream_loop", "-1", "-i", str(FIXTURES / "espeak_en.ogg"), "-t", "60", "-ac", "1",
        "-ar", "48000", str(wav)], check=True, timeout=60)
    async with webapp.chromium("--use-fake-device-for-media-stream",
                               "--use-fake-ui-for-media-stream",
                               f"--use-file-for-fake-audio-capture={wav}") as launched:
        yield launched


async def test_a_recording_cut_off_from_the_network_lands_whole(
        microphone_browser: Browser, big_service: webapp.Service) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    context = await microphone_browser.new_context(permissions=["microphone"])
    page = await context.new_page()
    page.set_default_timeout(20_000)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    await page.goto(big_service.base + "/upload")
    await page.get_by_role("button", name="Record", exact=True).click()
    status = page.locator(".recorder [role=status]").first
    await expect(status).to_contain_text("sent so far")
    await asyncio.sleep(ONLINE_SECONDS)  # recording: the fake microphone plays on
    await context.set_offline(True)
    await expect(status).to_contain_text("cannot be reached")
    await asyncio.sleep(OFFLINE_SECONDS)
    await page.get_by_role("button", name="Stop").click()
    await expect(status).to_contain_text("Not sent yet")
    # Back online, another visit: the page offers what it kept.
    await context.set_offline(False)
    await page.reload()
    kept = page.locator("li", has_text="was kept in this browser")
    await expect(kept).to_have_count(1)
    await kept.get_by_role("button", name="Finish the upload").click()
    await expect(kept).to_contain_text("Recorded and uploaded.")
    href = await kept.get_by_role("link", name="Open the recording").get_attribute("href")
    assert href is not None
    record_id = href.rsplit("/", 1)[1]
    async with ClientSession() as session, session.get(
            f"{big_service.base}/app/audiorecords/{record_id}") as response:
        card = await response.json()
    # The whole recording: what was sent online, and what was kept offline.
    assert card["duration_ms"] >= (ONLINE_SECONDS + OFFLINE_SECONDS - 1) * 1000, card
    assert card["original_filename"].startswith("Recording ")
    # Nothing is left in the browser once it is a record.
    await page.reload()
    await expect(page.locator("li", has_text="was kept in this browser")).to_have_count(0)
    assert problems == []
    await context.close()
