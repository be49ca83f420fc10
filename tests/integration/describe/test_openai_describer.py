"""The OpenAI-compatible describer against a fake chat-completions endpoint on loopback
(`transcriber.testing.fake_openai`, the wire format): a good answer, one repaired (too
long, seven topics), a malformed one asked again, a 500, a 429, a timeout, a refusal, a
transcript described in parts; the key sent, nothing of the text or the key logged."""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import AsyncIterator

import pytest
from structlog.testing import capture_logs

from tests.helpers.meetings import MEETING_EN, utterances
from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.domain.describe import BRIEF_MAX, TITLE_MAX
from transcriber.domain.transcripts import named_text
from transcriber.ports import Material
from transcriber.providers.describe.openai import OpenAIDescriber, chunks
from transcriber.settings import DescriberSettings, Secret
from transcriber.testing.fake_openai import FakeChatCompletions, Hang, RawBody, Status

KEY = "sk-SECRET-KEY-1234"
ANSWER = {"title": "Release of the mobile app", "brief": "The app ships next Tuesday.",
          "topics": ["Release", "mobile app"]}
OWNER_TOPICS = ("Release", "Budget")


@pytest.fixture
async def fake() -> AsyncIterator[FakeChatCompletions]:
    server = FakeChatCompletions(api_key=KEY)
    await server.start()
    yield server
    await server.stop()


def _settings(fake: FakeChatCompletions, **changes: object) -> DescriberSettings:
    base = DescriberSettings(provider="openai", base_url=fake.base_url, api_key=Secret(KEY),
                             model="llama3.1:8b", timeout_seconds=5.0)
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def _material(lines: tuple[str, ...] = MEETING_EN) -> Material:
    said = utterances(lines)
    return Material(record_id="r1", language="en", duration_ms=said[-1].end_ms,
                    utterances=tuple(said), owner_topics=OWNER_TOPICS)


async def _describe(fake: FakeChatCompletions, material: Material | None = None,
                    **changes: object) -> object:
    describer = OpenAIDescriber(_settings(fake, **changes))
    try:
        return await describer.describe(material or _material())
    finally:
        await describer.close()


async def test_a_good_answer_is_the_description(fake: FakeChatCompletions) -> None:
    fake.script(ANSWER)
    described = await _describe(fake)
    assert described == type(described)(  # type: ignore[call-arg]
        title="Release of the mobile app", brief="The app ships next Tuesday.",
        topics=("Release", "mobile app"), by="openai:llama3.1:8b")
    [request] = fake.requests
    assert request.headers["Authorization"] == f"Bearer {KEY}"
    assert request.headers["x-data-logging-enabled"] == "false"
    assert request.body["model"] == "llama3.1:8b"
    assert '["Release","Budget"]' in request.prompt  # the owner's topics travel
    assert "the release of the mobile app" in request.prompt  # and the transcript
    assert '"title"' in request.body["messages"][0]["content"]


async def test_too_long_fields_and_seven_topics_are_repaired(fake: FakeChatCompletions) -> None:
    fake.script({"title": "Word " * 40, "brief": "A sentence here. " * 60,
                 "topics": ["one", "two", "three", "four", "budget", "six", "seven"]})
    described = await _describe(fake)
    assert len(described.title) <= TITLE_MAX  # type: ignore[attr-defined]
    assert len(described.brief) <= BRIEF_MAX  # type: ignore[attr-defined]
    # Five at most, the owner's own topic first and as the owner writes it.
    assert described.topics == ("Budget", "one", "two", "three", "four")  # type: ignore[attr-defined]
    assert len(fake.requests) == 1  # repaired, not asked again


async def test_a_malformed_answer_is_asked_for_once_more(fake: FakeChatCompletions) -> None:
    fake.script('{"title": "Release", "brief": ', ANSWER)
    described = await _describe(fake)
    assert described.title == "Release of the mobile app"  # type: ignore[attr-defined]
    assert len(fake.requests) == 2
    first, retry = fake.requests[0].body["messages"], fake.requests[1].body["messages"]
    assert retry[:-1] == first  # the first request again, without the bad answer
    assert retry[-1]["role"] == "user"
    assert "JSON" in retry[-1]["content"]


@pytest.mark.parametrize("bad", [
    "not json at all",
    {"title": ["a list"], "brief": "B.", "topics": []},
    RawBody(b'{"object": "error"}'),
])
async def test_two_bad_answers_are_a_permanent_failure(fake: FakeChatCompletions,
                                                       bad: object) -> None:
    fake.script(bad, bad)  # type: ignore[arg-type]
    with pytest.raises(PermanentFailure):
        await _describe(fake)
    assert len(fake.requests) == 2


async def test_a_server_error_is_transient(fake: FakeChatCompletions) -> None:
    fake.script(Status(500))
    with pytest.raises(TransientFailure):
        await _describe(fake)


async def test_a_429_is_transient_with_its_retry_after(fake: FakeChatCompletions) -> None:
    fake.script(Status(429, retry_after=42))
    with pytest.raises(TransientFailure) as failed:
        await _describe(fake)
    assert failed.value.retry_after == 42


async def test_a_timeout_is_transient(fake: FakeChatCompletions) -> None:
    fake.script(Hang(seconds=5))
    with pytest.raises(TransientFailure, match="TimeoutError"):
        await _describe(fake, timeout_seconds=0.3)


async def test_a_refusal_is_permanent(fake: FakeChatCompletions) -> None:
    with pytest.raises(PermanentFailure, match="401"):
        await _describe(fake, api_key=Secret("wrong"))


async def test_nothing_listening_is_transient(fake: FakeChatCompletions) -> None:
    await fake.stop()
    with pytest.raises(TransientFailure):
        await _describe(fake)


async def test_a_long_transcript_is_described_in_parts_then_combined(
    fake: FakeChatCompletions,
) -> None:
    lines = MEETING_EN * 8  # about 16 000 characters
    count = len(chunks(named_text(utterances(lines)), 2000))
    assert count >= 6
    fake.script(*[{"title": f"Part {n}", "brief": f"Part {n} talks.", "topics": ["release"]}
                  for n in range(1, count + 1)], ANSWER)
    described = await _describe(fake, _material(lines), max_input_chars=2000)
    assert described.title == "Release of the mobile app"  # type: ignore[attr-defined]
    *part_requests, combined = fake.requests
    assert len(part_requests) == count
    for number, request in enumerate(part_requests, 1):
        user = request.body["messages"][-1]["content"]
        assert f"part {number} of {len(part_requests)}" in user
        transcript = user.split("Transcript:\n", 1)[1]
        assert len(transcript) <= 2000
    summary = combined.body["messages"][-1]["content"]
    assert "consecutive parts" in summary
    assert "Part 1" in summary
    assert f"Part {len(part_requests)}" in summary


async def test_nothing_of_the_text_or_the_key_is_logged(
    fake: FakeChatCompletions, caplog: pytest.LogCaptureFixture,
) -> None:
    secrets = [KEY, "mobile app", "beta testing", "Release of the mobile app"]
    caplog.set_level(logging.DEBUG)
    fake.script("garbage", "more garbage", Status(503), ANSWER)
    with capture_logs() as logs:
        with pytest.raises(PermanentFailure) as permanent:
            await _describe(fake)
        with pytest.raises(TransientFailure) as transient:
            await _describe(fake)
        await _describe(fake)
    assert logs, "nothing was logged: the test would prove nothing"
    said = [repr(entry) for entry in logs] + [
        record.getMessage() + repr(record.args) for record in caplog.records] + [
        str(permanent.value), str(transient.value)]
    for text in said:
        for secret in secrets:
            assert secret not in text, (secret, text)
    assert KEY not in repr(_settings(fake))
