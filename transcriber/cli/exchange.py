"""The command-line client's talk with its server, each answer under the rules of
`cli/answers.py`.

`Link` sends a request and reads its answer under one deadline (`--timeout`
for the whole answer, re-armed by each chunk of an upload's body, so a slow
uplink is never cut short but a silent or trickling server is), reads a body
only up to its cap (counted, never held whole: a 512 MiB answer stops at the
cap), refuses a compressed answer (none is asked for: no decompression bomb),
follows redirects only within the server's origin, and asks a busy server
again a bounded number of times.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Never, TextIO
from urllib.parse import quote

import aiohttp
from tqdm import tqdm
from yarl import URL

from transcriber.cli.answers import (
    BODY_KEEPING_REDIRECTS,
    ERROR_MAX_BYTES,
    MIB,
    REDIRECTS,
    REDIRECTS_MAX,
    RETRY_MAX_SECONDS,
    BadServerAnswer,
    Bounds,
    Unreachable,
    error_message,
    redirect_target,
    retry_seconds,
)
from transcriber.cli.shown import shown, tell
from transcriber.cli.texts import say

# Each chunk sent re-arms the deadline: 256 KiB within --timeout (120 s) is 2 KiB/s,
# far below the server's own floor (8 KiB/s), so a slow uplink is never cut short.
CHUNK_BYTES = 256 * 1024
READ_CHUNK_BYTES = 64 * 1024
# A busy or briefly failing server is asked again this many times (Retry-After honoured).
TRIES = 6
# Asked again on a read: the server's own "come back", and a proxy's trouble.
BUSY = frozenset({429, 502, 503, 504})


@dataclass(frozen=True, slots=True, kw_only=True)
class ServerAnswer:
    status: int
    reason: str
    body: bytes | None  # None: an error answer over ERROR_MAX_BYTES, not read
    location: str | None
    retry_after: str | None


@dataclass(frozen=True, slots=True)
class Body:
    """An upload's body, sent again from its start for each try or same-origin 307/308."""

    path: Path
    size: int
    err: TextIO

    async def chunks(self, alive: Callable[[], None]) -> AsyncIterator[bytes]:
        bar: tqdm[Never] = tqdm(total=self.size, desc=shown(self.path.name), unit="B",
                                unit_scale=True, unit_divisor=1024, file=self.err,
                                disable=not self.err.isatty(), leave=False)
        try:
            with self.path.open("rb") as handle:
                while chunk := await asyncio.to_thread(handle.read, CHUNK_BYTES):
                    bar.update(len(chunk))
                    alive()
                    yield chunk
            alive()  # the answer's deadline runs from the body's end
        finally:
            bar.close()


@dataclass(frozen=True, slots=True, kw_only=True)
class Link:
    """The client's session with its one server."""

    session: aiohttp.ClientSession
    server: URL
    bounds: Bounds
    err: TextIO

    async def get(self, url: str, cap: int) -> ServerAnswer:
        """GET with patience: a busy server is asked again; a lost connection too, a few
        times, before the server counts as unreachable. A slow answer is not asked again:
        `Unreachable` at once."""
        for attempt in range(TRIES):
            try:
                answer = await self.exchange(URL(url), cap=cap)
            except aiohttp.ClientConnectionError:
                if attempt + 1 == TRIES:
                    raise
                await asyncio.sleep(min(2.0 ** attempt, RETRY_MAX_SECONDS))
                continue
            if answer.status in BUSY and attempt + 1 < TRIES:
                if answer.status != 429:
                    tell(self.err, "upload.server_trouble", status=answer.status)
                await asyncio.sleep(retry_seconds(answer.retry_after, attempt))
                continue
            return answer
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def exchange(self, url: URL, *, body: Body | None = None, cap: int) -> ServerAnswer:
        """A request and its redirects, each within the server's origin
        (`redirect_target`): the token never goes anywhere else, and an upload is sent
        again only on 307/308."""
        for _ in range(REDIRECTS_MAX + 1):
            answer = await self.once(url, body=body, cap=cap)
            if answer.status not in REDIRECTS:
                return answer
            if body is not None and answer.status not in BODY_KEEPING_REDIRECTS:
                raise BadServerAnswer(say("answer.redirect_upload", status=answer.status))
            url = redirect_target(url, answer.location, self.server)
        raise BadServerAnswer(say("answer.redirects", count=REDIRECTS_MAX))

    async def once(self, url: URL, *, body: Body | None, cap: int) -> ServerAnswer:
        """One request under one deadline: the whole answer within `--timeout`, re-armed
        by each chunk of an upload's body; a 2xx body within `cap` or `BadServerAnswer`."""
        loop = asyncio.get_running_loop()
        limit = self.bounds.timeout_seconds
        deadline = asyncio.timeout(limit)

        def alive() -> None:
            deadline.reschedule(loop.time() + limit)

        try:
            async with deadline:
                try:
                    answer = await self._request(url, body=body, cap=cap, alive=alive)
                except (aiohttp.ClientConnectionError, BadServerAnswer):
                    raise
                except aiohttp.ClientError as exc:  # a malformed head, a broken chunked body
                    raise BadServerAnswer(say("answer.broken", kind=type(exc).__name__)) from None
        except TimeoutError:
            # Ours (the whole answer took too long), not aiohttp's connect timeout.
            if deadline.expired():
                raise Unreachable(say("upload.too_slow", seconds=f"{limit:g}")) from None
            raise
        if answer.status in (401, 403):
            raise Unreachable(say("upload.refused_auth", status=answer.status,
                                  message=shown(error_message(answer.body, answer.reason))))
        return answer

    async def _request(self, url: URL, *, body: Body | None, cap: int,
                       alive: Callable[[], None]) -> ServerAnswer:
        request = (self.session.get(url, allow_redirects=False) if body is None else
                   self.session.post(url, data=body.chunks(alive), allow_redirects=False,
                                     headers={"Content-Type": "application/octet-stream",
                                              "Content-Length": str(body.size),
                                              "X-Filename": quote(body.path.name)}))
        async with request as response:
            encoding = response.headers.get("Content-Encoding", "identity").lower()
            if encoding not in ("", "identity"):
                raise BadServerAnswer(say("answer.encoded", encoding=encoding))
            ok = 200 <= response.status < 300
            content = await read_capped(response, cap if ok else ERROR_MAX_BYTES)
            if content is None:
                response.close()  # the rest is never read: the connection goes
                if ok:
                    raise BadServerAnswer(say("answer.too_large", mib=max(cap // MIB, 1)))
            return ServerAnswer(status=response.status, reason=response.reason or "",
                          body=content, location=response.headers.get("Location"),
                          retry_after=response.headers.get("Retry-After"))


async def read_capped(response: aiohttp.ClientResponse, cap: int) -> bytes | None:
    """The body, or None once it is declared or counted over `cap` (never held whole)."""
    declared = response.content_length
    if declared is not None and declared > cap:
        return None
    buffer = bytearray()
    async for chunk in response.content.iter_chunked(READ_CHUNK_BYTES):
        buffer += chunk
        if len(buffer) > cap:
            return None
    return bytes(buffer)
