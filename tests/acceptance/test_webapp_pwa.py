"""The installable phone app in a real browser (headless Chromium; issue 42, item 3):
the service worker takes the page, the app shell comes up with the network cut (the
API, never kept by the worker, fails visibly), no private answer sits in its caches,
and "Share → Transcriber" (the share target's POST) becomes a record through the
upload door."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests.helpers.webapp import AUDIO, Service, open_page

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

pytestmark = pytest.mark.timeout(90)

_CACHED_PATHS = """
caches.keys().then(async (names) => {
  const paths = [];
  for (const name of names) {
    for (const request of await (await caches.open(name)).keys()) {
      paths.push(new URL(request.url).pathname);
    }
  }
  return paths;
})
"""

# What the share sheet sends: the file in the manifest's `file` field, multipart.
_SHARE = """
async ([name, data]) => {
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  const form = new FormData();
  form.append("title", "Voice memo");
  form.append("file", new File([bytes], name, { type: "audio/mpeg" }));
  const answer = await fetch("/share", { method: "POST", body: form });
  return { status: answer.status, url: answer.url, redirected: answer.redirected };
}
"""


async def _controlled(page: Page, service: Service) -> None:
    await page.goto(service.base + "/")
    await page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    if not await page.evaluate("!!navigator.serviceWorker.controller"):
        await page.reload()
    assert await page.evaluate("!!navigator.serviceWorker.controller")


async def test_the_app_shell_works_offline_and_keeps_no_private_answer(
        browser: Browser, service: Service) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service)
    await _controlled(page, service)
    # An API address opened in the tab goes to the server untouched, never kept.
    await page.goto(service.base + "/app/me")
    await page.goto(service.base + "/")
    await expect(page.locator("#who strong")).to_be_visible()  # the API answered online
    await page.context.set_offline(True)
    try:
        await page.reload()
        # The shell (page, styles, modules) came from the worker's cache: the app ran
        # and drew its navigation; the API is not the worker's to answer, and says so.
        await expect(page.get_by_role("navigation", name="Main")
                     .get_by_role("link", name="Upload")).to_be_visible()
        await expect(page.locator("#language option")).not_to_have_count(0)
        await expect(page.locator("#who .error-text")).to_be_visible()
    finally:
        await page.context.set_offline(False)
    paths = await page.evaluate(_CACHED_PATHS)
    assert "/" in paths
    kept = await page.evaluate('caches.match("/").then((page) => page.headers.get("Content-Type"))')
    assert kept.startswith("text/html"), kept
    assert any(path.startswith("/assets/app.") for path in paths)
    assert not [path for path in paths if path.startswith(("/app/", "/v1/"))], paths
    problems = [p for p in watch.problems if "ERR_INTERNET_DISCONNECTED" not in p]
    assert problems == []


async def test_share_to_the_app_makes_a_record_through_the_upload_door(
        browser: Browser, service: Service) -> None:
    page, watch = await open_page(browser, service)
    await _controlled(page, service)
    data = base64.b64encode((AUDIO / "librivox_0880.mp3").read_bytes()).decode()
    answer = await page.evaluate(_SHARE, ["memo.mp3", data])
    assert answer["redirected"], answer
    assert answer["status"] == 200, answer  # the card's page, after the worker's 303
    record_id = Path(answer["url"]).name
    assert answer["url"] == f"{service.base}/records/{record_id}"
    card = await page.evaluate(
        "(id) => fetch(`/app/audiorecords/${id}`).then((answer) => answer.json())",
        record_id)
    assert card["original_filename"] == "memo.mp3"
    assert card["via"] == "web"  # the worker's upload is the web app's
    assert watch.problems == []


async def test_a_refused_share_lands_on_the_upload_page_saying_so(
        browser: Browser, service: Service) -> None:
    from playwright.async_api import expect  # noqa: PLC0415

    page, watch = await open_page(browser, service)
    await _controlled(page, service)
    data = base64.b64encode(b"not a recording at all").decode()
    answer = await page.evaluate(_SHARE, ["memo.mp3", data])
    assert answer["url"] == f"{service.base}/upload?shared=415", answer
    await page.goto(answer["url"])
    await expect(page.get_by_role("alert")).to_have_text(
        "The shared file was refused (415): pick it here to see why.")
    assert [p for p in watch.problems if "415" not in p] == []
