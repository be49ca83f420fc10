"""The language model that answers a question from numbered passages (docs/ask.md)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol


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
