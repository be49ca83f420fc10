"""Reading a chat-completions stream (`stream: true`) line by line: what each line adds,
where it ends, and what is refused (an untrusted server)."""

from __future__ import annotations

import pytest

from transcriber.core.errors import PermanentFailure
from transcriber.providers.chat_completions import stream_line


def test_a_chunks_delta_content_is_its_text() -> None:
    line = (b'data: {"id":"c","object":"chat.completion.chunk","choices":[{"index":0,'
            b'"delta":{"content":" \xd1\x86\xd0\xb5\xd0\xbd\xd1\x8b"},"finish_reason":null}]}\r')
    assert stream_line(line) == " цены"


@pytest.mark.parametrize("line", [
    b"", b": keep-alive", b"event: message", b"id: 7",
    b'data: {"choices":[{"index":0,"delta":{"role":"assistant"}}]}',
    b'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}',
    b'data: {"choices":[],"usage":{"total_tokens":3}}',
    b'data: {"choices":[{"delta":{"content":null}}]}',
    b'data: {"choices":[{"delta":{"content":["not","text"]}}]}',
])
def test_lines_that_add_no_text(line: bytes) -> None:
    assert stream_line(line) == ""


def test_done_ends_the_stream() -> None:
    assert stream_line(b"data: [DONE]") is None
    assert stream_line(b"data:[DONE]\r") is None


@pytest.mark.parametrize("line", [b"data: {not json", b'data: {"error":{"message":"x"}}'])
def test_a_broken_or_failed_stream_is_refused(line: bytes) -> None:
    with pytest.raises(PermanentFailure):
        stream_line(line)
