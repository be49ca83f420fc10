"""The model's answer streamed token by token (`POST /app/ask` with `Accept:
text/event-stream`): the fake chat-completions server speaks OpenAI's `stream: true`
wire format (read here by the real `openai` package), the web app's events are
`passages`, the model's `delta`s as it writes them, then the checked `answer`, which
corrects the streamed text where a citation failed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import openai
import orjson
import pytest
from structlog.testing import capture_logs

from tests.helpers.web import Client, StartApi, advance, transcribe, upload
from transcriber.ports import Utterance
from transcriber.testing.fake_openai import FakeChatCompletions, Held, Huge

LINES = (
    ("S1", "Good morning, let's start the supplier review."),
    ("S2", "The packaging supplier raised prices by twelve percent this quarter."),
)


@pytest.fixture
async def fake() -> AsyncIterator[FakeChatCompletions]:
    server = FakeChatCompletions(default="Nothing to add.")
    await server.start()
    yield server
    await server.stop()


async def _client(start_api: StartApi, fake: FakeChatCompletions) -> Client:
    client = await start_api(ask={"provider": "openai", "base_url": fake.base_url,
                                  "model": "m"})
    record_id = str((await upload(client))["id"])
    await transcribe(client, record_id, [
        Utterance(start_ms=n * 4000, end_ms=n * 4000 + 3000, channel=0, text=text,
                  speaker=label) for n, (label, text) in enumerate(LINES)])
    await advance(client, record_id)
    return client


def _events(text: str) -> list[tuple[str, Any]]:
    events = []
    for block in text.strip().split("\n\n"):
        name, data = block.split("\n", 1)
        events.append((name.removeprefix("event: "), orjson.loads(data.removeprefix("data: "))))
    return events


async def _ask_streamed(client: Client, question: str) -> list[tuple[str, Any]]:
    response = await client.post("/app/ask", json={"question": question},
                                 headers={"Accept": "text/event-stream"})
    assert response.status == 200
    assert response.headers["Content-Type"].startswith("text/event-stream")
    return _events(await response.text())


async def test_the_fake_speaks_openais_stream_as_the_openai_package_reads_it(
        fake: FakeChatCompletions) -> None:
    said = "Prices rose by twelve percent [1]."
    fake.script(said)
    async with openai.AsyncOpenAI(base_url=fake.base_url, api_key="k",
                                  max_retries=0) as client:
        stream = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "?"}], stream=True)
        chunks = [chunk async for chunk in stream]
    assert all(chunk.object == "chat.completion.chunk" for chunk in chunks)
    assert chunks[0].choices[0].delta.role == "assistant"
    pieces = [c.choices[0].delta.content for c in chunks if c.choices[0].delta.content]
    assert len(pieces) == len(said.split())
    assert "".join(pieces) == said
    assert chunks[-1].choices[0].finish_reason == "stop"


async def test_deltas_come_as_the_model_writes_then_the_checked_answer(
        start_api: StartApi, fake: FakeChatCompletions) -> None:
    client = await _client(start_api, fake)
    said = "Twelve percent [1]: «the packaging supplier raised prices by twelve percent» [1]."
    fake.script(said)
    events = await _ask_streamed(client, "How much did the supplier raise prices?")
    names = [name for name, _ in events]
    assert names[0] == "passages"
    assert names[-1] == "answer"
    assert set(names[1:-1]) == {"delta"}
    assert len(names) - 2 == len(said.split())
    assert "".join(data["text"] for name, data in events if name == "delta") == said
    assert fake.requests[-1].body["stream"] is True
    final = events[-1][1]
    assert final["answer"] == said
    assert final["unchecked"] == 0
    assert final["citations"]


async def test_a_failed_citation_is_corrected_by_the_answer_after_the_stream(
        start_api: StartApi, fake: FakeChatCompletions) -> None:
    client = await _client(start_api, fake)
    said = "They agreed «to pay double for every delivery» [1]. See also [7]."
    fake.script(said)
    events = await _ask_streamed(client, "What about the supplier prices?")
    streamed = "".join(data["text"] for name, data in events if name == "delta")
    assert streamed == said  # as written: unchecked
    final = events[-1][1]
    assert final["unchecked"] == 2
    assert "[7]" not in final["answer"]
    assert "pay double" not in final["answer"]
    assert final["citations"] == []


async def test_the_first_words_arrive_before_the_model_finished(
        start_api: StartApi, fake: FakeChatCompletions) -> None:
    client = await _client(start_api, fake)
    release = asyncio.Event()
    fake.script(Held("Twelve percent [1].", release, after=1))
    response = await client.post("/app/ask", json={"question": "supplier prices"},
                                 headers={"Accept": "text/event-stream"})
    assert response.status == 200
    seen: list[str] = []
    while not any(line.startswith("event: delta") for line in seen):
        seen.append((await response.content.readline()).decode())
    data = (await response.content.readline()).decode()
    assert orjson.loads(data.removeprefix("data: ")) == {"text": "Twelve"}
    # The rest of the answer is still held by the model.
    assert not release.is_set()
    release.set()
    rest = _events((await response.content.read()).decode())
    assert [name for name, _ in rest] == ["delta", "delta", "answer"]
    assert rest[-1][1]["answer"] == "Twelve percent [1]."


async def test_a_flooding_stream_still_answers_with_the_passages(
        start_api: StartApi, fake: FakeChatCompletions) -> None:
    client = await _client(start_api, fake)
    # A whole answer past the byte cap, then a stream whose first line never ends.
    fake.script(Huge(3 << 20), Huge(3 << 20, event_stream=True))
    with capture_logs() as logs:
        for _ in range(2):
            events = await _ask_streamed(client, "supplier prices")
            assert [name for name, _ in events] == ["passages", "answer"]
            assert events[-1][1]["answer"] is None  # the passages instead
            assert events[-1][1]["passages"]
    refused = [entry["event"] for entry in logs if entry["event"].startswith("ask_")
               and entry["log_level"] == "warning"]
    assert refused == ["ask_answer_too_large", "ask_model_failed",
                       "ask_stream_line_too_long", "ask_model_failed"]
