"""The wait of a `/v1/audio/transcriptions` request for its record (whole answer or stream).

The step actors announce a settled record in this process (`keys.SETTLED`), and
the record's stage is read again on each announcement and every `LOOK_SECONDS`
besides (a record settled elsewhere, a deletion). The token is read again at each
look, so a token revoked (or expired) while its request waits ends the wait, and
a client that hung up ends it too: nobody would read the answer.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Literal

from aiohttp import web

from transcriber.core.clock import rest
from transcriber.db import reads
from transcriber.db.reads.records import RecordState
from transcriber.domain.stages import Stage
from transcriber.web import keys
from transcriber.web.bearer import TOKEN_CHECK, presented

# How often a waiting request reads its record's stage without news of it.
LOOK_SECONDS = 2.0
# Answers that stored a record tell OpenAI's SDKs not to send the request again: a
# retry would upload the file once more.
NO_RETRY = {"x-should-retry": "false"}
Waited = RecordState | Literal["timed_out", "deleted", "client_gone", "revoked"]


def outcome(waited: Waited) -> str:
    """Pure: the wait's end as the metric and the log name it."""
    if isinstance(waited, str):
        return waited
    return "halted" if waited.halted_at is not None else "done"


async def wait_settled(app: web.Application, record_id: str, *, seconds: float,
                       gone: Callable[[], bool], since: float | None = None,
                       allowed: Callable[[], Awaitable[bool]] | None = None) -> Waited:
    """The record once it is done or halted; or why the wait ended without it.
    `since`: when the wait's `seconds` began on the app's clock (default: now);
    `allowed`: whether the asker may still have the answer, asked at each look."""
    clock = app[keys.CLOCK]
    deadline = (clock.monotonic() if since is None else since) + seconds
    with app[keys.SETTLED].watch(record_id) as news:
        while True:
            if allowed is not None and not await allowed():
                return "revoked"
            state = await reads.records.state(app[keys.READERS], record_id=record_id)
            if state is None:
                return "deleted"
            if state.halted_at is not None or state.state == Stage.DONE.value:
                return state
            left = deadline - clock.monotonic()
            if left <= 0:
                return "timed_out"
            if gone():
                return "client_gone"
            await rest(clock, min(LOOK_SECONDS, left), news)
            news.clear()


def token_valid(request: web.Request) -> Callable[[], Awaitable[bool]]:
    """Whether the request's token is still valid (read again: revoked elsewhere too)."""
    text = presented(request)

    async def valid() -> bool:
        if text is None:
            return False
        return not isinstance(await request.app[TOKEN_CHECK].verify(request.app, text), str)
    return valid


def client_gone(request: web.Request) -> Callable[[], bool]:
    def gone() -> bool:
        transport = request.transport
        return transport is None or transport.is_closing()
    return gone
