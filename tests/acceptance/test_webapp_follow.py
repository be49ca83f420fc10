"""The card's player follows along (issue 42, item 3), in a real browser: a click on a
word plays from that word, and while it plays the line being spoken is highlighted
and brought into view below the sticky player when it has left the view."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from tests.helpers.webapp import (
    Service,
    done_card,
    open_page,
    put_transcript,
    until_sought,
    until_true_in_page,
    watch_seeks,
)
from transcriber.domain.transcripts import Word
from transcriber.ports import Utterance

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

    page, watch = await open_page(browser, service)
    record_id = await done_card(page, service, language=None, done="Done.")
    await put_transcript(service, record_id, LINES)
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
