"""Bounded request bodies: uploads and JSON bodies, how many arrive at once,
how slowly one may come, and in which coding.

A body being received holds a descriptor (an upload also a temporary file)
for as long as it takes, so a client that opens many and sends nothing would
hold them all. `BodySlots` counts bodies receiving in total and per user;
one more is answered before its body is read (503 or 429 with
`Retry-After`). A watchdog follows each body: no byte for
`upload_idle_seconds`, or fewer than `upload_min_bytes_per_second` on
average over the last `upload_rate_window_seconds`, and the body's stream
fails with `BodyTooSlow`, so the handler stops reading and answers 408.
Uploads and JSON bodies share these pace limits; each has its own slots.

`Expect: 100-continue` is answered when the body is about to be read, in
`guarded_body`, not when the head arrives: aiohttp runs a route's expect
handler before any middleware, so answering there would tell a client with no
identity, from another site or past its rate limit, what its head alone
earns (`413`/`507` by the declared size: the free disk space by binary
search). `expect_handler` only notes it as owed; every route with a body
(`web.api`) has it; an answer given while it is owed closes the connection
(`close_unless_continued`, and the error middleware).

A body in a content coding (`Content-Encoding` other than identity) is
refused with 415 before a byte of it is read: aiohttp would inflate it, so
a small request could become gigabytes on disk or in memory, and the size
checks would see only the compressed length.
"""

from __future__ import annotations

import asyncio
from collections import Counter, deque
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

from aiohttp import web
from multidict import CIMultiDictProxy

from transcriber.core.errors import IncompleteInput
from transcriber.settings import ServerSettings
from transcriber.web import keys
from transcriber.web.errors import CONTINUE_OWED, ApiError, answer_for

RETRY_AFTER_SECONDS = 30
IDENTITY = frozenset({"", "identity"})
# A multipart part's Content-Transfer-Encoding: these three leave the bytes as they are.
UNCODED_TRANSFER = frozenset({"", "binary", "8bit", "7bit"})


class BodyTooSlow(IncompleteInput):
    """The body stalled or crawled below the minimum rate."""


class BodySlots:
    """Bodies receiving at once: `total` in all, `per_user` for one user (None: no own cap)."""

    def __init__(self, *, total: int, per_user: int | None = None,
                 what: str = "uploads", full_status: int = 503) -> None:
        self._total = total
        # 503 says the service is busy; the OpenAI door answers 429 for either cap, as its
        # clients expect of a rate of requests (DESIGN.md section 12).
        self._full_status = full_status
        self._per_user = per_user
        self._what = what
        self._by_user: Counter[str] = Counter()

    @classmethod
    def for_uploads(cls, settings: ServerSettings) -> BodySlots:
        return cls(total=settings.uploads_max, per_user=settings.uploads_per_user_max)

    @classmethod
    def for_json(cls, settings: ServerSettings) -> BodySlots:
        # No cap of its own per user: every anonymous request is the same user.
        return cls(total=settings.json_bodies_max, what="request bodies")

    @property
    def receiving(self) -> int:
        return self._by_user.total()

    @asynccontextmanager
    async def hold(self, user_id: str) -> AsyncIterator[None]:
        retry = {"Retry-After": str(RETRY_AFTER_SECONDS)}
        # The sender's own cap first: it is theirs to wait for.
        if self._per_user is not None and self._by_user[user_id] >= self._per_user:
            raise ApiError(429, f"too_many_{self._what.replace(' ', '_')}",
                           f"at most {self._per_user} {self._what} at once; "
                           "wait for one to finish", headers=retry, close=True)
        if self.receiving >= self._total:
            raise ApiError(self._full_status, "busy",
                           f"too many {self._what} are arriving; try again shortly",
                           headers=retry, close=True)
        self._by_user[user_id] += 1
        try:
            yield
        finally:
            self._by_user[user_id] -= 1
            if self._by_user[user_id] <= 0:
                del self._by_user[user_id]


@dataclass(frozen=True, slots=True, kw_only=True)
class Pace:
    idle_seconds: float
    min_bytes_per_second: int
    window_seconds: float

    @classmethod
    def from_settings(cls, settings: ServerSettings) -> Pace:
        return cls(idle_seconds=settings.upload_idle_seconds,
                   min_bytes_per_second=settings.upload_min_bytes_per_second,
                   window_seconds=settings.upload_rate_window_seconds)

    @property
    def tick_seconds(self) -> float:
        return max(min(self.idle_seconds, self.window_seconds) / 4, 0.05)


class PaceWatch:
    """Pure bookkeeping of (time, bytes so far) samples; `verdict` says when to cut."""

    def __init__(self, pace: Pace, now: float) -> None:
        self._pace = pace
        self._started = now
        self._last_progress = now
        self._last_bytes = 0
        self._samples: deque[tuple[float, int]] = deque([(now, 0)])

    def verdict(self, now: float, received: int) -> str | None:
        if received != self._last_bytes:
            self._last_bytes = received
            self._last_progress = now
        elif now - self._last_progress >= self._pace.idle_seconds:
            return "idle"
        self._samples.append((now, received))
        window = self._pace.window_seconds
        # Keep the newest sample at least a window old: the average is over
        # at least a whole window, and the first window is a grace period.
        while len(self._samples) > 1 and now - self._samples[1][0] >= window:
            self._samples.popleft()
        then, before = self._samples[0]
        if now - then >= window and self._pace.min_bytes_per_second:
            rate = (received - before) / (now - then)
            if rate < self._pace.min_bytes_per_second:
                return "slow"
        return None


@asynccontextmanager
async def paced_body(request: web.Request, pace: Pace,
                     clock: Callable[[], float]) -> AsyncIterator[None]:
    """Watch the request body while the block reads it; cut it when it stalls."""
    content = request.content
    watch = PaceWatch(pace, clock())

    async def watchdog() -> None:
        while not content.is_eof():
            await asyncio.sleep(pace.tick_seconds)
            reason = watch.verdict(clock(), content.total_bytes)
            if reason is not None:
                # Wakes the reader with this error wherever it waits.
                content.set_exception(BodyTooSlow(reason))
                return

    task = asyncio.create_task(watchdog(), name="body-pace")
    try:
        yield
    finally:
        task.cancel()
        with suppress(asyncio.CancelledError):
            await task


@asynccontextmanager
async def guarded_body(request: web.Request, slots: BodySlots,
                       user_id: str) -> AsyncIterator[None]:
    """A slot held and the pace watched while the block reads the body.

    Enter it before a byte of the body is read: a refused body costs nothing."""
    pace = Pace.from_settings(request.app[keys.SETTINGS].server)
    async with slots.hold(user_id):
        await send_continue(request)
        async with paced_body(request, pace, asyncio.get_running_loop().time):
            yield


async def expect_handler(request: web.Request) -> web.StreamResponse | None:
    """`Expect: 100-continue`: owed, sent by `send_continue` once every check passed.

    aiohttp runs this before the middlewares, so nothing here may depend on who asks."""
    if request.headers.get("Expect", "").lower() != "100-continue":
        return answer_for(request, 417, "expectation_failed", "only 100-continue is understood")
    request[CONTINUE_OWED] = True
    return None


async def close_unless_continued(request: web.Request, response: web.StreamResponse) -> None:
    """A response-prepare hook: an answer given while `100 Continue` is still owed closes
    the connection (the client may send the body it held back; nobody reads it)."""
    if request.get(CONTINUE_OWED):
        response.force_close()


async def send_continue(request: web.Request) -> None:
    """The owed `100 Continue`, right before the body is read (nothing when none is owed)."""
    if not request.get(CONTINUE_OWED):
        return
    request[CONTINUE_OWED] = False
    if request.version >= (1, 1):
        await request.writer.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        request.writer.output_size = 0


def too_slow(code: str, what: str) -> ApiError:
    return ApiError(408, code, f"the {what} stalled or came too slowly; send it again",
                    close=True)


def _tokens(values: Iterable[str]) -> set[str]:
    return {token.strip().lower() for value in values for token in value.split(",")}


def refuse_coded(headers: CIMultiDictProxy[str]) -> None:
    """415 unless the body (or a multipart part) is sent as it is: no content coding,
    no transfer encoding of a part (RFC 7578 §4.7: form data has none)."""
    codings = _tokens(headers.getall("Content-Encoding", []))
    transfer = _tokens(headers.getall("Content-Transfer-Encoding", []))
    if codings <= IDENTITY and transfer <= UNCODED_TRANSFER:
        return
    # RFC 7694: 415 names the codings that are accepted.
    raise ApiError(415, "unsupported_encoding",
                   "send the body as it is, without Content-Encoding",
                   headers={"Accept-Encoding": "identity"}, close=True)


UPLOAD_SLOTS = web.AppKey("upload_slots", BodySlots)
JSON_SLOTS = web.AppKey("json_slots", BodySlots)
