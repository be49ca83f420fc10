"""Known voices in a real browser, on real voices: speakers named on one recording are
suggested on the next; one click confirms or rejects; the Voices page renames and
deletes; a purge empties it. Same service and Chromium as tests/helpers/webapp.py; the
recordings' transcripts and voices are those of real speech separated by the real
engine (`tests/helpers/known_voices.py`), given to records of the fake recognizer."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.known_voices import ApplyVoices, Recording, separated_recordings
from tests.helpers.webapp import AUDIO, Service, open_page, upload
from transcriber.cli.voices import purge_command
from transcriber.db.commands.edits import CorrectTranscript
from transcriber.domain.transcripts import dump_structure, plain_text
from transcriber.pipeline.voices import voices_effect
from transcriber.web import keys

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.timeout(180)


async def _record_of(page: Page, service: Service, recording: Recording) -> str:
    """A record uploaded through the page, done, then given the recording's transcript
    and voices; the card is open."""
    from playwright.async_api import expect  # noqa: PLC0415

    await page.goto(service.base + "/upload")
    await upload(page, AUDIO / "librivox_0880.mp3")
    await page.get_by_role("link", name="Open “librivox_0880.mp3”").first.click()
    await page.wait_for_url("**/records/*")
    record_id = page.url.rsplit("/", 1)[1]
    await expect(page.get_by_role("status").first).to_have_text("Done.", timeout=20_000)
    async with ClientSession() as session:
        card = await (await session.get(f"{service.base}/app/audiorecords/{record_id}")).json()
        me = await (await session.get(f"{service.base}/app/me")).json()
    utterances = recording.separation.utterances
    writer, settings = service.app[keys.WRITER], service.app[keys.SETTINGS]
    await writer.ask(CorrectTranscript(
        record_id=record_id, owner_id=me["id"], revision=card["revision"],
        structure_json=dump_structure(utterances), text=plain_text(utterances),
        revisions_max=settings.storage.revisions_max))
    await writer.ask(ApplyVoices(record_id=record_id, effect=voices_effect(
        settings, recording.separation.voices, utterances)))
    await page.reload()
    return record_id


async def _rename(page: Page, label: str, name: str) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    panel = page.locator(".speakers-panel")
    await panel.locator(f'[data-speaker="{label}"] .speaker-rename').click()
    await panel.locator("input").fill(name)
    await page.keyboard.press("Enter")
    await expect(panel.locator(f'[data-speaker="{label}"] .speaker-name')).to_have_text(name)


async def test_a_voice_named_once_is_suggested_confirmed_rejected_and_managed(
    browser: Browser, service: Service, tmp_path: Path,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    recordings = separated_recordings(tmp_path)
    service.recognizer.pending_checks = 0
    page, watch = await open_page(browser, service)

    enrol = recordings["enrol"]
    await _record_of(page, service, enrol)
    panel = page.locator(".speakers-panel")
    await expect(panel.locator(".speaker")).to_have_count(2)
    await expect(panel.locator(".speaker-suggestion")).to_have_count(0)  # no voice known yet
    await _rename(page, enrol.label("LV"), "Анна")
    await _rename(page, enrol.label("CD"), "Борис")

    known = recordings["known"]
    await _record_of(page, service, known)
    anna = panel.locator(f'[data-speaker="{known.label("LV")}"]')
    boris = panel.locator(f'[data-speaker="{known.label("CD")}"]')
    await expect(anna.locator(".speaker-suggestion")).to_contain_text("Sounds like Анна")
    await expect(boris.locator(".speaker-suggestion")).to_contain_text("Sounds like Борис")
    await page.screenshot(path=tmp_path / "suggested.png", full_page=True)
    await anna.get_by_role("button", name="is Анна: give the name").click()
    await expect(anna.locator(".speaker-name")).to_have_text("Анна")
    await expect(anna.locator(".speaker-suggestion")).to_have_count(0)
    await boris.get_by_role("button", name="is not Борис").click()
    await expect(boris.locator(".speaker-suggestion")).to_have_count(0)
    await expect(boris.locator(".speaker-name")).to_have_text(
        f"Speaker {known.label('CD')[1:]}")
    await page.reload()  # rejected for good, confirmed for good
    await expect(boris.locator(".speaker-suggestion")).to_have_count(0)
    await expect(anna.locator(".speaker-name")).to_have_text("Анна")

    # The Voices page: names and counts; rename in place, delete in two clicks.
    await page.get_by_role("link", name="Voices", exact=True).click()
    await page.wait_for_url("**/voices")
    voices = page.locator(".voices .voice")
    await expect(voices).to_have_count(2)
    def voice(name: str):  # type: ignore[no-untyped-def]
        return voices.filter(has=page.locator(".voice-name", has_text=name))

    await expect(voice("Анна")).to_contain_text("recordings: 2")
    await expect(voice("Борис")).to_contain_text("recordings: 1")
    await page.screenshot(path=tmp_path / "voices.png", full_page=True)
    await voice("Борис").locator(".voice-rename").click()
    await page.locator(".voice-input").fill("Boris")
    await page.keyboard.press("Enter")
    await expect(voices.locator(".voice-name")).to_have_text(["Boris", "Анна"])
    delete = voice("Boris").locator(".voice-delete")
    await delete.click()
    await expect(delete).to_have_text("Delete Boris for good?")
    await delete.click()
    await expect(voices).to_have_count(1)
    await expect(page.get_by_role("status")).to_contain_text("Boris deleted")

    # A purge (the command line) deletes every voice embedding: the page is empty.
    settings = service.app[keys.SETTINGS]
    assert await purge_command(settings, None) == 0
    await page.reload()
    await expect(page.get_by_text("No voices yet")).to_be_visible()
    await expect(voices).to_have_count(0)
    assert watch.problems == []
