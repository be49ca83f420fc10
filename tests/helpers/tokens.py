"""Personal access tokens and a whole service to use them on, for the tests of the ways in.

`make_token` stores a token through the writer, as `transcriber token create`
does. `live_service` runs the service in the test's process on a free
loopback port with the real steps (ffmpeg) and the fake recognizer, so a
record really goes from upload to done in a second.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from aiohttp import web

from tests.helpers.processes import free_port
from tests.helpers.settings import SettingsFactory
from transcriber.core.clock import stamp
from transcriber.db.commands.tokens import CreateToken
from transcriber.db.commands.users import EnsureUser
from transcriber.domain.tokens import new_token
from transcriber.ports import Utterance
from transcriber.service.app import build_app
from transcriber.testing.recognizer import FakeRecognizer
from transcriber.web import keys

SPEECH = (
    Utterance(start_ms=0, end_ms=1200, channel=0, text="He was not an ill disposed"),
    Utterance(start_ms=1200, end_ms=2600, channel=0, text="young man, said the archivist."),
)


async def make_token(app: web.Application, login: str = "alice", *, scope: str = "write",
                     expires_in_seconds: float | None = None, name: str = "") -> str:
    """A token for `login` (created when new), stored through the app's writer."""
    writer = app[keys.WRITER]
    user = await writer.ask(EnsureUser(login=login))
    made = new_token()
    expires = (None if expires_in_seconds is None
               else stamp(app[keys.CLOCK], plus_seconds=expires_in_seconds))
    await writer.ask(CreateToken(user_id=user.id, token_name=name, scope=scope,
                                 token_hash=made.hash, expires_at=expires))
    return made.text


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


@dataclass
class LiveService:
    base: str
    app: web.Application
    recognizer: FakeRecognizer


@contextlib.asynccontextmanager
async def live_service(make_settings: SettingsFactory, *,
                       recognizer: FakeRecognizer | None = None,
                       **sections: dict[str, Any]) -> AsyncIterator[LiveService]:
    """The service on 127.0.0.1:<free port>: real steps and ffmpeg, the fake recognizer."""
    port = free_port()
    # A card may be polled every 6000 / (120 · 1/8) = 400 ms (`poll_after_ms`).
    server = {"port": port, "rate_limit_window_seconds": 6.0, **sections.pop("server", {})}
    pipeline = {"workers": 1, "idle_sleep_seconds": 0.05, "poll_first_delay_seconds": 0.1,
                "poll_delay_seconds": 0.1, **sections.pop("pipeline", {})}
    # Speakers are not told apart: the speaker model stays unloaded.
    recognizer_section = {"diarization": "off", **sections.pop("recognizer", {})}
    settings = make_settings(server=server, pipeline=pipeline, recognizer=recognizer_section,
                             **sections)
    recognizer = recognizer or FakeRecognizer(utterances=SPEECH)
    app = build_app(settings, recognizer=recognizer)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield LiveService(base=f"http://127.0.0.1:{port}", app=app, recognizer=recognizer)
    finally:
        await runner.cleanup()
