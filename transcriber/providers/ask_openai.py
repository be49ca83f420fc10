"""The answerer on any OpenAI-compatible chat-completions endpoint (`ask.provider =
openai`): `POST {ask.base_url}/chat/completions`, the describer's rules for an
untrusted server (providers/chat_completions.py, docs/hostile-input.md).

Every request sends `max_tokens` and `temperature` 0 and says
`x-data-logging-enabled: false`; the answer is read in chunks and given up past
`ANSWER_MAX_BYTES` (a declared longer `Content-Length` before any is read), never
decompressed; a redirect is not followed (the passages would go to the host it
names). No connection, a timeout, 429 and 5xx are `TransientFailure`; any other
refusal, a redirect, an oversized or unreadable answer `PermanentFailure`. `stream`
asks for the answer token by token (`stream: true`) under the same rules.
Nothing of the prompt, the answer or the key is logged or put in an error.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any

import structlog

from transcriber.core.errors import PermanentFailure
from transcriber.ports import ChatMessage
from transcriber.providers.chat_completions import ChatEndpoint, message_content
from transcriber.settings import AskSettings

log = structlog.get_logger(__name__)

PROVIDER = "openai"
_CHUNK_BYTES = 64 * 1024


class OpenAIAnswerer:
    def __init__(self, settings: AskSettings) -> None:
        self._settings = settings
        self.name = f"{PROVIDER}:{settings.model}"
        self._endpoint = ChatEndpoint(
            base_url=settings.base_url, api_key=settings.api_key,
            timeout_seconds=settings.timeout_seconds, events="ask", setting="ask.base_url")

    async def close(self) -> None:
        await self._endpoint.close()

    def _body(self, messages: Sequence[ChatMessage], *, stream: bool) -> dict[str, Any]:
        return {"model": self._settings.model, "temperature": 0, "stream": stream,
                "max_tokens": self._settings.max_answer_tokens,
                "messages": [{"role": m.role, "content": m.content} for m in messages]}

    async def complete(self, messages: Sequence[ChatMessage]) -> str:
        content = message_content(await self._endpoint.post(self._body(messages, stream=False)))
        if not content.strip():
            raise PermanentFailure("the endpoint's answer holds no text")
        return content

    async def stream(self, messages: Sequence[ChatMessage]) -> AsyncIterator[str]:
        """The answer as the model writes it (`stream: true`, read by
        `ChatEndpoint.stream`); a stream that ends with no text is unusable."""
        said = False
        async for piece in self._endpoint.stream(self._body(messages, stream=True)):
            said = said or bool(piece.strip())
            yield piece
        if not said:
            raise PermanentFailure("the endpoint's answer holds no text")
