"""The web app's browser tests' harness: the whole service on loopback, headless Chromium.

The service runs in the test's process with real storage, the real ffmpeg
normalizer and the fake recognizer (so recognition takes milliseconds and its
failures are scripted). Chromium comes from Debian (`/usr/bin/chromium`) and
is driven through the `playwright` package; nothing is downloaded. Without
the browser the tests skip, except under CI where they fail. The fixtures
`service` and `browser` (tests/acceptance/conftest.py) are built from these.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from aiohttp import ClientSession, web

from tests.helpers.audio import FIXTURES
from tests.helpers.processes import free_port
from tests.helpers.settings import SettingsFactory
from transcriber.db.commands.edits import CorrectTranscript
from transcriber.domain.transcripts import dump_structure, plain_text
from transcriber.pipeline.steps import build_step_table
from transcriber.ports import Utterance, WebhookTransport
from transcriber.providers.ffmpeg import FfmpegTranscoder
from transcriber.service.app import build_app
from transcriber.testing.recognizer import FakeRecognizer, FakeVoiceRecognizer
from transcriber.web import keys

if TYPE_CHECKING:
    from playwright.async_api import Browser, Page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]
AUDIO = FIXTURES
SPEECH = (
    Utterance(start_ms=0, end_ms=1200, channel=0, text="He was not an ill disposed"),
    Utterance(start_ms=1200, end_ms=2600, channel=0, text="young man, said the archivist."),
)
UPLOAD_LIMIT = 60_000
# A card may be polled every 6000 / (120 · 1/8) = 400 ms.
RATE_WINDOW_SECONDS = 6.0
POLL_MS = 400


def need_browser() -> None:
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"{CHROMIUM} (apt-get install chromium)")
    try:
        import playwright.async_api  # noqa: F401, PLC0415
    except ImportError:
        missing.append("the playwright package (pip install -e '.[test]')")
    if missing:
        reason = "the browser tests need " + " and ".join(missing)
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)


@dataclass
class Service:
    base: str
    recognizer: FakeRecognizer
    app: web.Application


@contextlib.asynccontextmanager
async def serving(make_settings: SettingsFactory, *,
                  describer: str = "off", upload_max_bytes: int = UPLOAD_LIMIT,
                  webhook_transport: WebhookTransport | None = None,
                  ask: dict[str, Any] | None = None,
                  live: FakeVoiceRecognizer | None = None) -> AsyncIterator[Service]:
    """The service on a free loopback port (the fixture `service`), optionally with a
    webhook transport (`transcriber.testing.webhooks`: nothing leaves the machine). The
    describer is off unless asked for (`described_service`): the other tests follow
    records by the names of their files. `ask`: the settings' `ask` section (a model
    to answer questions). `live`, when given, is the app's recognizer of audio in
    memory: text while recording (the steps keep the fake above)."""
    need_browser()
    port = free_port()
    settings = make_settings(
        server={"port": port, "upload_max_bytes": upload_max_bytes, "page_default": 2,
                "rate_limit_window_seconds": RATE_WINDOW_SECONDS},
        pipeline={"workers": 1, "idle_sleep_seconds": 0.05, "poll_first_delay_seconds": 0.2,
                  "poll_delay_seconds": 0.2},
        describer={"provider": describer, "poll_seconds": 0.2},
        **({"ask": ask} if ask else {}),
    )
    # Recognition stays pending until a test sets `pending_checks = 0`, so the
    # card can be watched while the record waits at `submitted`.
    recognizer = FakeRecognizer(utterances=SPEECH, finishes_in_submit=False,
                                pending_checks=10**9)
    transcoder = FfmpegTranscoder(settings.ffmpeg)
    steps = build_step_table(transcoder=transcoder, cutter=transcoder, recognizer=recognizer,
                             store=None)
    app = build_app(settings, steps=steps, webhook_transport=webhook_transport,
                    recognizer=live)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield Service(base=f"http://127.0.0.1:{port}", recognizer=recognizer, app=app)
    finally:
        await runner.cleanup()


@contextlib.asynccontextmanager
async def chromium(*extra_args: str) -> AsyncIterator[Browser]:
    """Debian's Chromium, headless (the fixture `browser`)."""
    from playwright.async_api import async_playwright  # noqa: PLC0415

    async with async_playwright() as driver:
        launched = await driver.chromium.launch(executable_path=str(CHROMIUM),
                                                args=[*CHROMIUM_ARGS, *extra_args])
        try:
            yield launched
        finally:
            await launched.close()


@dataclass
class Watch:
    """What the page did that it must not: console errors, CSP violations, requests elsewhere."""

    problems: list[str]
    card_requests: list[float]


# The page's own clock: when each card GET began and when its answer came. Gaps
# seen through Playwright's event stream carry the test process's scheduling
# jitter (a loaded two-core CI machine showed 100 ms), so the polling interval is
# judged from inside the page.
CARD_FETCH_CLOCK = """
window.__cardFetches = [];
const pageFetch = window.fetch;
window.fetch = async function (input, init) {
  const url = new URL(typeof input === "string" ? input : input.url, location.href);
  const isCard = /^\\/app\\/audiorecords\\/[^/]+$/.test(url.pathname)
    && (!init || !init.method || init.method === "GET");
  const began = performance.now();
  try {
    return await pageFetch.apply(this, arguments);
  } finally {
    if (isCard) window.__cardFetches.push({ began, answered: performance.now() });
  }
};
"""


async def card_fetches(page: Page) -> list[dict[str, float]]:
    fetches: list[dict[str, float]] = await page.evaluate("window.__cardFetches")
    return fetches


async def open_page(browser: Browser, service: Service, *, login: str | None = None,
                    width: int = 1100, height: int = 900,
                    locale: str | None = None) -> tuple[Page, Watch]:
    """A page of its own (cookies, storage) watched for problems; `login`: the person the
    reverse proxy says it is (`Remote-User` from loopback, a trusted proxy), else the
    anonymous user; `locale`: the browser's language (else Chromium's own)."""
    headers = {} if login is None else {"Remote-User": login}
    page = await browser.new_page(viewport={"width": width, "height": height},
                                  extra_http_headers=headers, locale=locale)
    await page.add_init_script(CARD_FETCH_CLOCK)
    page.set_default_timeout(10_000)
    # Assertions wait as long as actions: `expect`'s own 5-s default failed a list search
    # on a machine loaded to 13 (the answer came, late). Set where every page is opened.
    from playwright.async_api import expect  # noqa: PLC0415
    expect.set_options(timeout=10_000)
    watch = Watch(problems=[], card_requests=[])

    def on_console(message: Any) -> None:
        if message.type == "error" and "Failed to load resource" not in message.text:
            watch.problems.append(f"console: {message.text}")

    def on_request(request: Any) -> None:
        if not request.url.startswith(service.base):
            watch.problems.append(f"request elsewhere: {request.url}")
        path = request.url.removeprefix(service.base)
        if (path.startswith("/app/audiorecords/") and path.count("/") == 3
                and request.method == "GET"):
            watch.card_requests.append(time.monotonic())

    page.on("console", on_console)
    page.on("pageerror", lambda error: watch.problems.append(f"page error: {error}"))
    page.on("request", on_request)
    return page, watch


async def until(condition: Callable[[], bool], seconds: float = 10) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def until_true_in_page(page: Page, expression: str, seconds: float = 10) -> None:
    """Poll a JavaScript expression until it is true.

    Playwright's `wait_for_function` evaluates its predicate with `eval` inside
    the page, which the app's CSP (`script-src 'self'`, no 'unsafe-eval') refuses
    in newer Chromium builds; `page.evaluate` goes through the DevTools protocol,
    which the page's CSP does not govern."""
    deadline = time.monotonic() + seconds
    while not await page.evaluate(expression):
        assert time.monotonic() < deadline, f"timed out waiting for {expression}"
        await asyncio.sleep(0.05)


async def watch_seeks(page: Page) -> None:
    """Record every position the page's player is sought to (`until_sought`).

    Where a player stands a moment after a seek depends on whether this browser
    may play (it moves on while it plays, and a loaded machine polls it late), so
    a test of a seek looks for the seek itself."""
    await page.evaluate("""() => {
        const audio = document.querySelector('audio');
        window.seeks = [];
        audio.addEventListener('seeking', () => window.seeks.push(audio.currentTime));
    }""")


async def until_sought(page: Page, seconds: float) -> None:
    """The player was sought to `seconds` since `watch_seeks`."""
    await until_true_in_page(
        page, f"window.seeks.some((at) => Math.abs(at - {seconds}) < 0.05)")


async def done_card(page: Page, service: Service, path: Path = AUDIO / "librivox_0880.mp3",
                    *, language: str | None = "ru", done: str = "Готово.") -> str:
    """Upload `path` through the upload page (transcribed in `language`; None: the
    default) and open its card once it is done, `done` being what the page says then in
    its language (the recognizer answers at once); the record's id."""
    from playwright.async_api import expect  # noqa: PLC0415

    service.recognizer.pending_checks = 0
    await page.goto(service.base + "/upload")
    if language is not None:
        await page.locator("#language").select_option(language)
    await page.locator("#file-input").set_input_files(path)
    await expect(page.locator(".upload-done")).to_have_count(1)
    await page.locator(".upload-done a").click()
    await page.wait_for_url("**/records/*")
    await expect(page.get_by_role("status").first).to_have_text(done, timeout=20_000)
    return page.url.rsplit("/", 1)[1]


async def put_transcript(service: Service, record_id: str,
                         utterances: Sequence[Utterance]) -> None:
    """Give the anonymous user's record the transcript `utterances` (a structure the fake
    recognizer does not make: speakers told apart, timed words), as a correction."""
    async with ClientSession() as session:
        card = await (await session.get(f"{service.base}/app/audiorecords/{record_id}")).json()
        me = await (await session.get(f"{service.base}/app/me")).json()
    await service.app[keys.WRITER].ask(CorrectTranscript(
        record_id=record_id, owner_id=me["id"], revision=card["revision"],
        structure_json=dump_structure(utterances), text=plain_text(utterances),
        revisions_max=service.app[keys.SETTINGS].storage.revisions_max))


async def upload(page: Page, path: Path | dict[str, Any]) -> None:
    await page.get_by_role("link", name="Upload", exact=True).first.click()
    await page.wait_for_url("**/upload")
    await page.locator("#file-input").set_input_files(path)  # type: ignore[arg-type]

