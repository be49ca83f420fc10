"""The language model that answers a question from numbered passages (docs/ask.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatMessage:
    role: Literal["system", "user", "assistant"]
    content: str


class Answerer(Protocol):
    """Writes an answer to the messages (the passages and the question are in them).

    Raises `TransientFailure` when the endpoint cannot be reached or is busy and
    `PermanentFailure` when it refuses or answers something unusable; never logs or
    raises with the prompt's or the answer's text."""

    name: str

    async def complete(self, messages: Sequence[ChatMessage]) -> str: ...

    async def close(self) -> None: ...


@runtime_checkable
class StreamsAnswers(Protocol):
    """An answerer that also gives its answer piece by piece as the model writes it
    (OpenAI's `stream: true`): the pieces joined are the whole answer. The same
    failures as `complete`, raised where the stream breaks (pieces may have come)."""

    def stream(self, messages: Sequence[ChatMessage]) -> AsyncIterator[str]: ...
