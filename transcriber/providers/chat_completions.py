"""One OpenAI-compatible chat-completions endpoint under the rules for an untrusted
server, shared by the describer (providers/describe/openai.py) and the answerer
(providers/ask_openai.py); docs/hostile-input.md says why each rule is there.

Every request says `x-data-logging-enabled: false`; the answer is read in chunks and
given up past `ANSWER_MAX_BYTES` (a declared longer `Content-Length` before any is
read), never decompressed; a redirect is not followed (the text sent would go to the
host it names). No connection, a timeout, 429 and 5xx are `TransientFailure` (with the
answer's `Retry-After`); any other refusal, a redirect, an oversized answer
`PermanentFailure`. Nothing of the request, the answer or the key is logged. A streamed
answer (`stream`) is read under the same byte cap, a line at a time, each line at most
`LINE_MAX_BYTES`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import orjson
import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.settings import Secret

log = structlog.get_logger(__name__)

# A good answer is under 2 KB; 1 MiB leaves room for a verbose model and bounds memory.
ANSWER_MAX_BYTES = 1 << 20
_CHUNK_BYTES = 64 * 1024
# One streamed chunk is a few hundred bytes; a line past this is not a chat stream.
LINE_MAX_BYTES = 64 * 1024


class ChatEndpoint:
    """`POST {base_url}/chat/completions` through one lazily made session; `events`
    prefixes the log events (`describe`, `ask`), `setting` names the base URL's key."""

    def __init__(self, *, base_url: str, api_key: Secret | None, timeout_seconds: float,
                 events: str, setting: str) -> None:
        self._url = base_url.rstrip("/") + "/chat/completions"
        self._api_key = api_key
        self._timeout = timeout_seconds
        self._events = events
        self._setting = setting
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            # identity: with decompression off, the byte cap counts what is held
            headers = {"x-data-logging-enabled": "false", "Accept-Encoding": "identity"}
            if self._api_key is not None:
                headers["Authorization"] = f"Bearer {self._api_key.value}"
            self._session = aiohttp.ClientSession(
                headers=headers, auto_decompress=False,
                timeout=aiohttp.ClientTimeout(total=self._timeout))
        return self._session

    async def post(self, body: dict[str, Any], **fields: str) -> bytes:
        """The answer's raw body; `fields` (a record id) join the log events."""
        try:
            async with self._client().post(self._url, json=body,
                                           allow_redirects=False) as response:
                self._check_status(response, fields)
                return await self._read_capped(response, fields)
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise self._unreachable(exc, fields) from None

    async def stream(self, body: dict[str, Any], **fields: str) -> AsyncIterator[str]:
        """The answer's text piece by piece (`body` asks `stream: true`): each server-sent
        `data:` chunk's first choice's `delta.content`, until `data: [DONE]`. An endpoint
        that answers a whole completion instead gives its text at once. The byte cap
        counts the whole stream; a line longer than `LINE_MAX_BYTES` is refused."""
        try:
            async with self._client().post(self._url, json=body,
                                           allow_redirects=False) as response:
                self._check_status(response, fields)
                if response.content_type != "text/event-stream":
                    content = message_content(await self._read_capped(response, fields))
                    if content:
                        yield content
                    return
                async for piece in self._deltas(response, fields):
                    yield piece
        except (aiohttp.ClientError, TimeoutError) as exc:
            raise self._unreachable(exc, fields) from None

    def _check_status(self, response: aiohttp.ClientResponse, fields: dict[str, str]) -> None:
        events = self._events
        if 300 <= response.status < 400:
            log.warning(f"{events}_endpoint_redirected", **fields, status=response.status)
            raise PermanentFailure(
                f"the endpoint answered a redirect ({response.status}), which is not "
                f"followed: set {self._setting} to the endpoint itself")
        if response.status == 429 or response.status >= 500:
            log.warning(f"{events}_endpoint_failed", **fields, status=response.status)
            raise TransientFailure(f"the endpoint answered {response.status}",
                                   retry_after=_retry_after(response))
        if response.status >= 400:
            log.warning(f"{events}_endpoint_refused", **fields, status=response.status)
            raise PermanentFailure(f"the endpoint refused the request ({response.status})")

    def _unreachable(self, exc: BaseException, fields: dict[str, str]) -> TransientFailure:
        log.warning(f"{self._events}_endpoint_unreachable", **fields, error=type(exc).__name__)
        return TransientFailure(f"the endpoint could not be reached ({type(exc).__name__})")

    async def _deltas(self, response: aiohttp.ClientResponse,
                      fields: dict[str, str]) -> AsyncIterator[str]:
        """The stream's text pieces, its lines read from chunks under the byte caps."""
        pending = b""
        total = 0
        async for chunk in response.content.iter_chunked(_CHUNK_BYTES):
            total += len(chunk)
            if total > ANSWER_MAX_BYTES:
                log.warning(f"{self._events}_answer_too_large", **fields,
                            limit=ANSWER_MAX_BYTES)
                raise PermanentFailure(
                    f"the endpoint's answer is longer than {ANSWER_MAX_BYTES} bytes")
            *lines, pending = (pending + chunk).split(b"\n")
            if len(pending) > LINE_MAX_BYTES:
                log.warning(f"{self._events}_stream_line_too_long", **fields,
                            limit=LINE_MAX_BYTES)
                raise PermanentFailure("the endpoint's stream has a line longer than "
                                       f"{LINE_MAX_BYTES} bytes")
            for line in lines:
                piece = stream_line(line)
                if piece is None:  # data: [DONE]
                    return
                if piece:
                    yield piece


    async def _read_capped(self, response: aiohttp.ClientResponse,
                           fields: dict[str, str]) -> bytes:
        """The answer's body, or `PermanentFailure` once it passes `ANSWER_MAX_BYTES` (read
        in chunks: a hostile answer never sits whole in memory)."""
        declared = response.content_length
        if declared is None or declared <= ANSWER_MAX_BYTES:
            body = bytearray()
            async for chunk in response.content.iter_chunked(_CHUNK_BYTES):
                body += chunk
                if len(body) > ANSWER_MAX_BYTES:
                    break
            else:
                return bytes(body)
        log.warning(f"{self._events}_answer_too_large", **fields, limit=ANSWER_MAX_BYTES)
        raise PermanentFailure(f"the endpoint's answer is longer than {ANSWER_MAX_BYTES} bytes")


def _retry_after(response: aiohttp.ClientResponse) -> float | None:
    value = response.headers.get("Retry-After", "")
    return float(value) if value.isdigit() else None


def message_content(raw: bytes) -> str:
    """The first choice's message text of a chat-completions answer ("" when it has none:
    then the answer is unusable)."""
    try:
        data = orjson.loads(raw)
        content = data["choices"][0]["message"]["content"]
    except (orjson.JSONDecodeError, KeyError, IndexError, TypeError):
        return ""
    return content if isinstance(content, str) else ""


def stream_line(line: bytes) -> str | None:
    """Pure: one line of a chat-completions stream: the text its `data:` chunk adds (""
    for a comment, a blank line, another field or a chunk without text); None for
    `data: [DONE]`, the stream's end.
    A chunk that is not JSON, or that reports an error, is `PermanentFailure`."""
    line = line.rstrip(b"\r")
    if not line.startswith(b"data:"):
        return ""
    data = line[5:].strip()
    if data == b"[DONE]":
        return None
    try:
        chunk = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise PermanentFailure("the endpoint's stream is not chat-completion chunks") from None
    if isinstance(chunk, dict) and "error" in chunk:
        raise PermanentFailure("the endpoint's stream ended with an error")
    try:
        content = chunk["choices"][0]["delta"].get("content")
    except (KeyError, IndexError, TypeError, AttributeError):
        return ""  # a chunk without a choice (usage, a keep-alive) adds nothing
    return content if isinstance(content, str) else ""
