"""What the OpenAI-compatible describer reads out of an answer, and how it cuts a long
transcript (pure parts; the wire is tested against the fake endpoint)."""

from __future__ import annotations

import orjson
import pytest

from transcriber.providers.chat_completions import message_content
from transcriber.providers.describe.openai import (
    BadModelAnswer,
    chunks,
    parse_answer,
)

GOOD = {"title": "Release plan", "brief": "The app ships Tuesday.", "topics": ["release"]}


@pytest.mark.parametrize("content", [
    orjson.dumps(GOOD).decode(),
    "```json\n" + orjson.dumps(GOOD).decode() + "\n```",
    "Here you go: " + orjson.dumps(GOOD).decode() + " Hope it helps.",
])
def test_the_object_is_read_out_of_prose_and_fences(content: str) -> None:
    assert parse_answer(content) == GOOD


def test_topics_may_be_missing() -> None:
    assert parse_answer('{"title": "T", "brief": "B."}')["topics"] == []


@pytest.mark.parametrize("content", [
    "", "no json at all", '{"title": "T", "brief": ', "[1, 2]",
    '{"title": 5, "brief": "B", "topics": []}',
    '{"title": "T", "brief": null, "topics": []}',
    '{"title": "T", "brief": "B", "topics": "one, two"}',
    '{"title": "T", "brief": "B", "topics": [1, 2]}',
    '{"brief": "B", "topics": []}',
])
def test_anything_else_is_a_bad_answer(content: str) -> None:
    with pytest.raises(BadModelAnswer):
        parse_answer(content)


def test_the_message_is_read_from_the_first_choice() -> None:
    body = {"choices": [{"index": 0, "message": {"role": "assistant", "content": "hi"}}]}
    assert message_content(orjson.dumps(body)) == "hi"
    assert message_content(b"not json") == ""
    assert message_content(b'{"choices": []}') == ""
    assert message_content(b'{"choices": [{"message": {"content": null}}]}') == ""


def test_a_long_text_is_cut_between_lines_within_the_limit() -> None:
    lines = [f"S1: line number {n} of the meeting" for n in range(200)]
    parts = chunks("\n".join(lines), 500)
    assert len(parts) > 1
    assert all(len(part) <= 500 for part in parts)
    assert "\n".join(parts).split("\n") == lines  # nothing lost, nothing cut mid-line
    one_line = "word " * 400
    assert all(len(part) <= 300 for part in chunks(one_line, 300))
    assert chunks("short", 300) == ["short"]
    assert chunks("", 300) == [""]
