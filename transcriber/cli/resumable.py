"""`transcriber upload`'s resumable path: a file of `RESUMABLE_MIN_BYTES` or more goes
through the server's tus 1.0 endpoint (`/app/uploads/`, docs/api.md "Resumable
uploads") in pieces of `PIECE_BYTES`, one `PATCH` each.

A piece that fails on the way (a dropped connection, a proxy's timeout or 502, a
server restarted, 408 or 409) costs only itself: the client asks the server
(`HEAD`) how many bytes it kept and goes on from there, backing off, until
`TRIES` failures in a row made no progress. The server's answers are judged as
the one-shot upload's are (`cli/answers.py`): the upload's `Location` must stay
within the server's origin, each offset must be a number between the last one
and the file's size, the record's id must be an id; a 401/403 is `Unreachable`.
"""

from __future__ import annotations

import asyncio
import base64
import os
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Never, TextIO

import aiohttp
from tqdm import tqdm
from yarl import URL

from transcriber.cli import remembered
from transcriber.cli.answers import (
    ERROR_MAX_BYTES,
    MIB,
    RETRY_MAX_SECONDS,
    BadServerAnswer,
    Unreachable,
    error_message,
    redirect_target,
    retry_seconds,
)
from transcriber.cli.exchange import CHUNK_BYTES, TRIES, read_capped
from transcriber.cli.shown import shown, tell
from transcriber.cli.texts import say
from transcriber.core.ids import parse_id

# Below this a file goes in one request (as before); above it a dropped connection
# near the end would cost the whole file again.
RESUMABLE_MIN_BYTES = 64 * MIB
# One PATCH's share: a failed piece costs at most this much again; 16 MiB pieces keep
# an 8 GiB file at 512 requests, well inside the server's rate limit at any speed.
PIECE_BYTES = 16 * MIB
TUS = {"Tus-Resumable": "1.0.0"}
# Answers after which the client asks where the upload stands and goes on.
AGAIN = frozenset({408, 409, 429, 500, 502, 503, 504})


@dataclass(frozen=True, slots=True, kw_only=True)
class TusAnswer:
    status: int
    reason: str
    body: bytes | None
    offset: str | None
    record_id: str | None
    location: str | None
    retry_after: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class ResumableResult:
    """The record the file became, or the server's refusal (status and its words)."""

    record_id: str | None = None
    status: int = 0
    message: str = ""
    unsupported: bool = False
    """The server has no resumable uploads (an older one: 404 or 405 at creation)."""


async def send(session: aiohttp.ClientSession, server: URL, path: Path, size: int, *,
               language: str | None, timeout_seconds: float, err: TextIO,
               space: str | None = None) -> ResumableResult:
    """The file through tus; an upload a stopped run left is continued (`remembered`).
    `space`: the upload's `space` metadata (None: the person's default space)."""
    link = _Tus(session=session, server=server, limit=timeout_seconds)
    memory, key = remembered.memory_file(os.environ), remembered.key_of(str(server), path, size)
    result = await _send(link, server, path, size, language=language, space=space, err=err,
                         memory=memory, key=key)
    remembered.forget(memory, key)  # done or refused: nothing to come back to
    return result


async def _send(link: _Tus, server: URL, path: Path, size: int, *, language: str | None,
                space: str | None, err: TextIO, memory: Path, key: str) -> ResumableResult:
    root = server / "app" / "uploads" / ""
    location: URL | None = None
    offset = 0
    known = remembered.recall(memory, key)
    if known is not None:
        try:
            location = redirect_target(root, known, server)
            offset = await link.where(location, size)
            tell(err, "upload.continuing", name=path.name, percent=offset * 100 // size)
        except BadServerAnswer:
            location, offset = None, 0  # the server forgot it (expired): start again
    if location is None:
        created = await link.create(path.name, size, language, space)
        if created.status != 201:
            return ResumableResult(status=created.status,
                                   message=error_message(created.body, created.reason),
                                   unsupported=created.status in (404, 405))
        location = redirect_target(root, created.location, server)
        remembered.remember(memory, key, str(location))
    failures = 0
    bar: tqdm[Never] = tqdm(total=size, desc=shown(path.name), unit="B", unit_scale=True,
                            unit_divisor=1024, file=err, disable=not err.isatty(),
                            leave=False)
    try:
        while True:
            bar.n = offset
            bar.refresh()
            try:
                answer = await link.patch(location, path, offset,
                                          min(PIECE_BYTES, size - offset), bar.update)
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError,
                    TimeoutError, Unreachable) as exc:
                if isinstance(exc, Unreachable) and not isinstance(exc.__cause__,
                                                                   TimeoutError):
                    raise
                answer = None
                reason = type(exc.__cause__ or exc).__name__
            if answer is not None and answer.status == 204:
                moved = _offset(answer.offset, low=offset, size=size)
                failures = 0 if moved > offset else failures + 1
                offset = moved
                if answer.record_id is not None:
                    return ResumableResult(record_id=_record_id(answer.record_id))
                if offset == size:
                    raise BadServerAnswer(say("answer.tus", what="X-Record-Id"))
                if failures < TRIES:
                    continue
                reason = "no progress"
            elif answer is not None and answer.status not in AGAIN:
                return ResumableResult(status=answer.status,
                               message=error_message(answer.body, answer.reason))
            elif answer is not None:
                reason = f"HTTP {answer.status}"
            failures += 1
            if failures >= TRIES:
                raise Unreachable(say("upload.resume_gave_up", name=shown(path.name),
                                      reason=reason))
            tell(err, "upload.resuming", name=path.name, reason=reason,
                 percent=offset * 100 // size)
            await asyncio.sleep(retry_seconds(answer.retry_after if answer else None,
                                              failures - 1))
            offset = await link.where(location, size)
    finally:
        bar.close()


def _offset(text: str | None, *, low: int, size: int) -> int:
    """The server's `Upload-Offset`: digits, not behind what it said before (`low`,
    unless it lost bytes, which a HEAD reports), never past the file."""
    if text is None or not text.isascii() or not text.isdigit() or len(text) > 19:
        raise BadServerAnswer(say("answer.tus", what="Upload-Offset"))
    value = int(text)
    if not low <= value <= size:
        raise BadServerAnswer(say("answer.tus", what="Upload-Offset"))
    return value


def _record_id(text: str) -> str:
    found = parse_id(text)
    if found is None:
        raise BadServerAnswer(say("answer.no_id"))
    return found


def _metadata(name: str, language: str | None, space: str | None) -> str:
    # An absent `space` is the person's default space; an empty one, none (as `?space=`).
    pairs = {"filename": name, **({"language": language} if language else {}),
             **({"space": space} if space is not None else {})}
    # A key alone is an empty value (tus).
    return ",".join(f"{key} {base64.b64encode(value.encode()).decode()}" if value else key
                    for key, value in pairs.items())


@dataclass(frozen=True, slots=True, kw_only=True)
class _Tus:
    session: aiohttp.ClientSession
    server: URL
    limit: float

    async def create(self, name: str, size: int, language: str | None,
                     space: str | None) -> TusAnswer:
        for attempt in range(TRIES):
            answer = await self._call("POST", self.server / "app" / "uploads" / "", headers={
                "Upload-Length": str(size), "Upload-Metadata": _metadata(name, language, space)})
            if answer.status in (429, 503) and attempt + 1 < TRIES:
                await asyncio.sleep(retry_seconds(answer.retry_after, attempt))
                continue
            return answer
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns

    async def where(self, location: URL, size: int) -> int:
        """The offset the server kept (HEAD), asked again while it cannot be reached."""
        for attempt in range(TRIES):
            try:
                answer = await self._call("HEAD", location)
            except (aiohttp.ClientConnectionError, TimeoutError):
                if attempt + 1 == TRIES:
                    raise
                await asyncio.sleep(min(2.0 ** attempt, RETRY_MAX_SECONDS))
                continue
            if answer.status == 200:
                return _offset(answer.offset, low=0, size=size)
            if answer.status in AGAIN and attempt + 1 < TRIES:
                await asyncio.sleep(retry_seconds(answer.retry_after, attempt))
                continue
            raise BadServerAnswer(say("answer.tus_lost", status=answer.status,
                                      message=shown(error_message(answer.body,
                                                                  answer.reason))))
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises

    async def patch(self, location: URL, path: Path, offset: int, length: int,
                    sent: Callable[[int], object]) -> TusAnswer:
        return await self._call("PATCH", location, headers={
            "Upload-Offset": str(offset), "Content-Length": str(length),
            "Content-Type": "application/offset+octet-stream"},
            body=(path, offset, length, sent))

    async def _call(self, method: str, url: URL, *, headers: dict[str, str] | None = None,
                    body: tuple[Path, int, int, Callable[[int], object]] | None = None,
                    ) -> TusAnswer:
        """One request under one deadline, re-armed by each chunk sent (as `Link.once`)."""
        loop = asyncio.get_running_loop()
        deadline = asyncio.timeout(self.limit)

        def alive() -> None:
            deadline.reschedule(loop.time() + self.limit)

        data = None if body is None else _piece(*body, alive=alive)
        try:
            async with deadline, self.session.request(
                    method, url, headers={**TUS, **(headers or {})}, data=data,
                    allow_redirects=False) as response:
                content = await read_capped(response, ERROR_MAX_BYTES)
                answer = TusAnswer(
                    status=response.status, reason=response.reason or "", body=content,
                    offset=response.headers.get("Upload-Offset"),
                    record_id=response.headers.get("X-Record-Id"),
                    location=response.headers.get("Location"),
                    retry_after=response.headers.get("Retry-After"))
        except TimeoutError as exc:
            if deadline.expired():
                raise Unreachable(say("upload.too_slow", seconds=f"{self.limit:g}")) from exc
            raise
        if answer.status in (401, 403):
            raise Unreachable(say("upload.refused_auth", status=answer.status,
                                  message=shown(error_message(answer.body, answer.reason))))
        return answer


async def _piece(path: Path, offset: int, length: int, sent: Callable[[int], object], *,
                 alive: Callable[[], None]) -> AsyncIterator[bytes]:
    with path.open("rb") as handle:
        handle.seek(offset)
        left = length
        while left > 0:
            chunk = await asyncio.to_thread(handle.read, min(CHUNK_BYTES, left))
            if not chunk:
                return
            left -= len(chunk)
            sent(len(chunk))
            alive()
            yield chunk
    alive()  # the answer's deadline runs from the body's end
