"""One OpenAI-compatible chat-completions endpoint under the rules for an untrusted
server, shared by the describer (providers/describe/openai.py) and the answerer
(providers/ask_openai.py); docs/hostile-input.md says why each rule is there.

Every request says `x-data-logging-enabled: false`; the answer is read in chunks and
given up past `ANSWER_MAX_BYTES` (a declared longer `Content-Length` before any is
read), never decompressed; a redirect is not followed (the text sent would go to the
host it names). No connection, a timeout, 429 and 5xx are `TransientFailure` (with the
answer's `Retry-After`); any other refusal, a redirect, an oversized answer
`PermanentFailure`. Nothing of the request, the answer or the key is logged.
"""

from __future__ import annotations

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
        events = self._events
        try:
            async with self._client().post(self._url, json=body,
                                           allow_redirects=False) as response:
                if 300 <= response.status < 400:
                    log.warning(f"{events}_endpoint_redirected", **fields,
                                status=response.status)
                    raise PermanentFailure(
                        f"the endpoint answered a redirect ({response.status}), which is not "
                        f"followed: set {self._setting} to the endpoint itself")
                if response.status == 429 or response.status >= 500:
                    log.warning(f"{events}_endpoint_failed", **fields, status=response.status)
                    raise TransientFailure(f"the endpoint answered {response.status}",
                                           retry_after=_retry_after(response))
                if response.status >= 400:
                    log.warning(f"{events}_endpoint_refused", **fields, status=response.status)
                    raise PermanentFailure(f"the endpoint refused the request "
                                           f"({response.status})")
                return await self._read_capped(response, fields)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning(f"{events}_endpoint_unreachable", **fields, error=type(exc).__name__)
            raise TransientFailure(f"the endpoint could not be reached ({type(exc).__name__})") \
                from None

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
