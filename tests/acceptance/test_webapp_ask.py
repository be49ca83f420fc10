"""The Ask page in a real browser with a language model (the fake chat-completions
server, streaming as OpenAI does): the model's words appear while it is still
writing, then the checked answer replaces them (a citation that failed the check is
gone and the answer says so); the person's conversations are listed, one opens to
be continued, one is deleted. Same service and Chromium as tests/helpers/webapp.py."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING

import pytest
from aiohttp import ClientSession

from tests.helpers.settings import SettingsFactory
from tests.helpers.webapp import AUDIO, Service, open_page, serving
from transcriber.ports import Utterance
from transcriber.testing.fake_openai import FakeChatCompletions, Held

if TYPE_CHECKING:
    from playwright.async_api import Browser

pytestmark = pytest.mark.timeout(90)

SPEECH = (
    Utterance(start_ms=0, end_ms=3000, channel=0,
              text="The packaging supplier raised prices by twelve percent."),
    Utterance(start_ms=3000, end_ms=6000, channel=0,
              text="We will sign with Northwind next week."),
)


@pytest.fixture
async def model() -> AsyncIterator[FakeChatCompletions]:
    server = FakeChatCompletions(default="Northwind [1].")
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
async def asked_service(make_settings: SettingsFactory,
                        model: FakeChatCompletions) -> AsyncIterator[Service]:
    async with serving(make_settings, ask={"provider": "openai", "base_url": model.base_url,
                                           "model": "m"}) as running:
        yield running


async def _one_record_done(service: Service) -> None:
    service.recognizer.pending_checks = 0
    service.recognizer.utterances = list(SPEECH)
    async with ClientSession() as session:
        async with session.post(service.base + "/app/audiorecords",
                                data=(AUDIO / "espeak_en.ogg").read_bytes(),
                                headers={"X-Filename": "meeting.ogg"}) as response:
            assert response.status in (200, 201, 202), await response.text()
        deadline = time.monotonic() + 20
        while True:
            async with session.get(service.base + "/app/audiorecords") as response:
                items = (await response.json())["items"]
            if items and items[0]["stage"] == "done":
                return
            assert time.monotonic() < deadline, "timed out"
            await asyncio.sleep(0.1)


async def test_the_answer_appears_as_written_and_conversations_are_listed(
    browser: Browser, asked_service: Service, model: FakeChatCompletions,
) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    await _one_record_done(asked_service)
    page, watch = await open_page(browser, asked_service)
    page.on("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.goto(asked_service.base + "/ask")
    await expect(page.locator(".ask-conversations")).to_contain_text("No conversations yet")

    release = asyncio.Event()
    model.script(Held("Prices rose <b>twelve</b> percent [1]. See also [7].", release,
                      after=3))
    await page.get_by_label("Question").fill("How much did the supplier raise prices?")
    await page.get_by_role("button", name="Ask", exact=True).click()
    # The first words while the model still writes; markup stays text.
    writing = page.locator(".ask-writing")
    await expect(writing).to_have_text("Prices rose <b>twelve</b>")
    assert not release.is_set()
    assert await writing.locator("b").count() == 0
    release.set()
    # The checked answer replaces the words: the unknown [7] is gone and said so.
    turn = page.locator(".ask-history .ask-turn")
    await expect(turn.locator(".ask-text")).to_contain_text("Prices rose <b>twelve</b> percent")
    await expect(turn.locator(".ask-text")).not_to_contain_text("[7]")
    await expect(turn).to_contain_text("could not be checked")
    await expect(writing).to_have_count(0)

    listed = page.locator(".ask-conversation")
    await expect(listed).to_have_count(1)
    await expect(listed.first).to_contain_text("How much did the supplier raise prices?")
    await page.get_by_role("button", name="New conversation").click()
    await page.get_by_label("Question").fill("Who will we sign with?")
    await page.get_by_role("button", name="Ask", exact=True).click()
    await expect(listed).to_have_count(2)
    # The list's order is by the last question's second: both may share it.
    first = listed.filter(has_text="How much did the supplier raise prices?")
    await expect(listed.filter(has_text="Who will we sign with?")).to_have_count(1)

    # The first one opens: its turn is the history, and the next question follows it.
    await first.get_by_role("button", name="How much did the supplier").click()
    await expect(page.get_by_role("status")).to_contain_text("Continuing this conversation")
    await expect(page.locator(".ask-history .ask-turn")).to_have_count(1)
    await expect(page.locator(".ask-history .ask-question")).to_have_text(
        "How much did the supplier raise prices?")
    await page.get_by_label("Question").fill("And who signs?")
    await page.get_by_role("button", name="Ask", exact=True).click()
    await expect(first).to_contain_text("questions: 2")
    assert [m["role"] for m in model.requests[-1].body["messages"]] == [
        "system", "user", "assistant", "user"]

    # One is deleted: gone from the list, and after a reload too.
    await listed.filter(has_text="Who will we sign with?").get_by_role(
        "button", name="Delete").click()
    await expect(listed).to_have_count(1)
    await page.reload()
    await expect(page.locator(".ask-conversation")).to_have_count(1)
    await expect(page.locator(".ask-conversation")).to_contain_text("questions: 2")
    assert watch.problems == []
