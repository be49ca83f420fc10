"""The card's player follows along (issue 42, item 3), in a real browser: a click on a
word plays from that word, and while it plays the line being spoken is highlighted
and brought into view below the sticky player when it has left the view."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.webapp import (
    AUDIO,
    Service,
    open_page,
    until_sought,
    until_true_in_page,
    upload,
    watch_seeks,
)
from transcriber.db.commands.edits import CorrectTranscript
from transcriber.domain.transcripts import Word, dump_structure, plain_text
from transcriber.ports import Utterance
from transcriber.web import keys

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(90)

STEP_MS = 100
# Thirty short lines over the recording's 3 s, two timed words each: far more lines
# than a screen holds.
LINES = [Utterance(start_ms=i * STEP_MS, end_ms=(i + 1) * STEP_MS, channel=0,
                   text=f"line{i} word{i}",
                   words=(Word(start_ms=i * STEP_MS, end_ms=i * STEP_MS + 50,
                               text=f"line{i}", probability=0.9),
                          Word(start_ms=i * STEP_MS + 50, end_ms=(i + 1) * STEP_MS,
                               text=f" word{i}", probability=0.9)))
         for i in range(29)]

# The line being spoken, in view below the player, the page scrolled to it.
_FOLLOWED = """(() => {
  const line = document.querySelector('.utterance.speaking');
  if (!line || scrollY === 0) return false;
  const box = line.getBoundingClientRect();
  const player = document.querySelector('.listen-panel').getBoundingClientRect();
  return box.top >= player.bottom && box.bottom <= innerHeight;
})()"""


async def test_a_word_plays_from_itself_and_the_played_line_is_followed(
        browser: Browser, service: Service) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    service.recognizer.pending_checks = 0
    page, watch = await open_page(browser, service)
    await page.goto(service.base + "/upload")
    await upload(page, AUDIO / "librivox_0880.mp3")
    await page.get_by_role("link", name="Open “librivox_0880.mp3”").click()
    await page.wait_for_url("**/records/*")
    record_id = page.url.rsplit("/", 1)[1]
    await expect(page.get_by_role("status").first).to_have_text("Done.", timeout=20_000)
    async with ClientSession() as session:
        card = await (await session.get(f"{service.base}/app/audiorecords/{record_id}")).json()
        me = await (await session.get(f"{service.base}/app/me")).json()
    await service.app[keys.WRITER].ask(CorrectTranscript(
        record_id=record_id, owner_id=me["id"], revision=card["revision"],
        structure_json=dump_structure(LINES), text=plain_text(LINES),
        revisions_max=service.app[keys.SETTINGS].storage.revisions_max))
    await page.reload()
    await expect(page.locator(".utterances > li")).to_have_count(len(LINES))

    # A word of the fifth line: the player goes to that word, not to its line's start.
    await watch_seeks(page)
    await page.locator(".word", has_text="word4").click()
    await until_sought(page, 0.45)
    await page.evaluate("document.querySelector('audio').pause()")

    # Played from near the end with the page at its top: the spoken line is followed.
    await page.evaluate("window.scrollTo(0, 0)")
    assert await page.evaluate("scrollY") == 0
    await page.evaluate("""() => { const audio = document.querySelector('audio');
        audio.currentTime = 1.9; return audio.play(); }""")
    await until_true_in_page(page, _FOLLOWED)
    await page.evaluate("document.querySelector('audio').pause()")
    assert watch.problems == []
