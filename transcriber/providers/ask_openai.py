"""The answerer on any OpenAI-compatible chat-completions endpoint (`ask.provider =
openai`): `POST {ask.base_url}/chat/completions`, the describer's rules for an
untrusted server (providers/describe/openai.py, docs/hostile-input.md).

Every request sends `max_tokens` and `temperature` 0 and says
`x-data-logging-enabled: false`; the answer is read in chunks and given up past
`ANSWER_MAX_BYTES` (a declared longer `Content-Length` before any is read), never
decompressed; a redirect is not followed (the passages would go to the host it
names). No connection, a timeout, 429 and 5xx are `TransientFailure`; any other
refusal, a redirect, an oversized or unreadable answer `PermanentFailure`.
Nothing of the prompt, the answer or the key is logged or put in an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import aiohttp
import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.ports import ChatMessage
from transcriber.providers.describe.openai import ANSWER_MAX_BYTES, message_content
from transcriber.settings import AskSettings

log = structlog.get_logger(__name__)

PROVIDER = "openai"
_CHUNK_BYTES = 64 * 1024


class OpenAIAnswerer:
    def __init__(self, settings: AskSettings) -> None:
        self._settings = settings
        self.name = f"{PROVIDER}:{settings.model}"
        self._url = settings.base_url.rstrip("/") + "/chat/completions"
        self._session: aiohttp.ClientSession | None = None

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _client(self) -> aiohttp.ClientSession:
        if self._session is None:
            headers = {"x-data-logging-enabled": "false", "Accept-Encoding": "identity"}
            if self._settings.api_key is not None:
                headers["Authorization"] = f"Bearer {self._settings.api_key.value}"
            self._session = aiohttp.ClientSession(
                headers=headers, auto_decompress=False,
                timeout=aiohttp.ClientTimeout(total=self._settings.timeout_seconds))
        return self._session

    async def complete(self, messages: Sequence[ChatMessage]) -> str:
        body = {"model": self._settings.model, "temperature": 0, "stream": False,
                "max_tokens": self._settings.max_answer_tokens,
                "messages": [{"role": m.role, "content": m.content} for m in messages]}
        try:
            async with self._client().post(self._url, json=body,
                                           allow_redirects=False) as response:
                if 300 <= response.status < 400:
                    log.warning("ask_endpoint_redirected", status=response.status)
                    raise PermanentFailure(f"the endpoint answered a redirect "
                                           f"({response.status}), which is not followed")
                if response.status == 429 or response.status >= 500:
                    log.warning("ask_endpoint_failed", status=response.status)
                    raise TransientFailure(f"the endpoint answered {response.status}")
                if response.status >= 400:
                    log.warning("ask_endpoint_refused", status=response.status)
                    raise PermanentFailure(f"the endpoint refused the request "
                                           f"({response.status})")
                raw = await _read_capped(response)
        except (aiohttp.ClientError, TimeoutError) as exc:
            log.warning("ask_endpoint_unreachable", error=type(exc).__name__)
            raise TransientFailure(f"the endpoint could not be reached ({type(exc).__name__})") \
                from None
        content = message_content(raw)
        if not content.strip():
            raise PermanentFailure("the endpoint's answer holds no text")
        return content


async def _read_capped(response: aiohttp.ClientResponse) -> bytes:
    declared = response.content_length
    if declared is None or declared <= ANSWER_MAX_BYTES:
        body = bytearray()
        async for chunk in response.content.iter_chunked(_CHUNK_BYTES):
            body += chunk
            if len(body) > ANSWER_MAX_BYTES:
                break
        else:
            return bytes(body)
    log.warning("ask_answer_too_large", limit=ANSWER_MAX_BYTES)
    raise PermanentFailure(f"the endpoint's answer is longer than {ANSWER_MAX_BYTES} bytes")
