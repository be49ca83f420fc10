"""A describer on any OpenAI-compatible chat-completions endpoint (Ollama, llama.cpp's server,
vLLM, Yandex's foundation models): `POST {describer.base_url}/chat/completions`.

The request asks for one JSON object `{"title", "brief", "topics"}` in the transcript's
language and passes the owner's topics, to be preferred over new ones. The answer is
checked: a title or brief too long, or more than five topics, is repaired
(`describe.fitted` cuts them); an answer that is not that object (not JSON, wrong
types) is asked for once more; a second bad one is a `PermanentFailure`, and the actor
answers with the extractive description. A transcript longer than
`describer.max_input_chars` is described in parts, and the parts' descriptions are
combined by one more request (again in parts while they are too long).

Failures carry their kind: no connection, a timeout, 429 and 5xx are transient (the
job retries with backoff); any other refusal (401, 404, 400…) is permanent. Nothing of
the transcript, of the answer or of the key is logged or put in an error: only the
record id, the status and the error's class. Every request carries
`x-data-logging-enabled: false`, which Yandex's endpoint reads as "do not keep this
prompt" (others ignore it).

The endpoint is not trusted (docs/hostile-input.md): every request sends `max_tokens`;
the answer is read in chunks and given up past `ANSWER_MAX_BYTES` (a declared longer
`Content-Length` before any is read), never decompressed (a gzip bomb would bypass the
count); a redirect is not followed (the transcript would go to the host it names) and is
a permanent failure; the retry after a bad answer sends the first request again with a
reminder, never the answer itself; and one record's description, all its requests
together, ends at `describer.deadline_seconds`.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Sequence
from typing import Any

import orjson
import structlog

from transcriber.core.errors import PermanentFailure, TransientFailure
from transcriber.domain import describe as descriptions
from transcriber.domain import transcripts
from transcriber.domain.describe import Description
from transcriber.ports import Material
from transcriber.providers.chat_completions import ChatEndpoint, message_content
from transcriber.settings import DescriberSettings

log = structlog.get_logger(__name__)

PROVIDER = "openai"
_FENCE_RE = re.compile(r"^\s*```(?:json)?\s*|\s*```\s*$")

INSTRUCTIONS = (
    "You describe a recording from its transcript. Answer with one JSON object and nothing "
    'else: {"title": string, "brief": string, "topics": [string]}. '
    f"title: what the recording is about, at most {descriptions.TITLE_MAX} characters, "
    "one line. "
    f"brief: one to three sentences, at most {descriptions.BRIEF_MAX} characters. "
    f"topics: at most {descriptions.TOPICS_MAX} short names, each at most "
    f"{descriptions.TOPIC_NAME_MAX} characters; take them from the owner's topics when any "
    "fits, and add new ones only for what none of them covers. "
    "Write the title, the brief and new topics in the language of the transcript."
)
PART_NOTE = ("This is part {number} of {parts} of one recording: describe this part.")
COMBINE_NOTE = ("These are descriptions of consecutive parts of one recording, in order: "
                "describe the whole recording from them.")
RETRY_NOTE = ('Your previous answer was not the JSON object asked for. Answer with only '
              '{"title": string, "brief": string, "topics": [string]}.')


class BadModelAnswer(Exception):
    """The endpoint's answer is not the JSON object asked for (the text is never kept)."""


class OpenAIDescriber:
    def __init__(self, settings: DescriberSettings) -> None:
        self._settings = settings
        self.name = f"{PROVIDER}:{settings.model}"
        self._endpoint = ChatEndpoint(
            base_url=settings.base_url, api_key=settings.api_key,
            timeout_seconds=settings.timeout_seconds, events="describe",
            setting="describer.base_url")

    async def close(self) -> None:
        await self._endpoint.close()

    async def describe(self, material: Material) -> Description:
        deadline = self._settings.deadline_seconds
        try:
            async with asyncio.timeout(deadline):
                return await self._describe(material)
        except TimeoutError:
            log.warning("describe_deadline_passed", record_id=material.record_id,
                        seconds=deadline)
            raise TransientFailure(f"the description took longer than {deadline:g} s "
                                   "(describer.deadline_seconds)") from None

    async def _describe(self, material: Material) -> Description:
        limit = self._settings.max_input_chars
        parts = chunks(transcripts.named_text(material.utterances), limit)
        if len(parts) == 1:
            answer = await self._ask(material, parts[0])
        else:
            answers = [await self._ask(material, part, note=PART_NOTE.format(
                number=number, parts=len(parts))) for number, part in enumerate(parts, 1)]
            answer = await self._combine(material, answers)
        return descriptions.fitted(title=answer["title"], brief=answer["brief"],
                                   topics=answer["topics"], owner_topics=material.owner_topics,
                                   by=self.name,
                                   said=" ".join(u.text for u in material.utterances))

    async def _combine(self, material: Material, answers: list[dict[str, Any]]) -> dict[str, Any]:
        """One description of the parts' descriptions (asked in parts while too long)."""
        limit = self._settings.max_input_chars
        while True:
            text = "\n\n".join(
                f"{number}. {answer['title']}\n{answer['brief']}\n"
                f"Topics: {', '.join(answer['topics'])}"
                for number, answer in enumerate(answers, 1))
            parts = chunks(text, limit)
            if len(parts) == 1 or len(parts) >= len(answers):
                return await self._ask(material, parts[0][:limit], note=COMBINE_NOTE)
            answers = [await self._ask(material, part, note=COMBINE_NOTE) for part in parts]

    async def _ask(self, material: Material, text: str, *, note: str = "") -> dict[str, Any]:
        """One description from the endpoint, its answer checked (asked once more when it
        is not the object asked for; `PermanentFailure` after the second)."""
        topics = orjson.dumps(list(material.owner_topics)).decode()
        language = material.language or "unknown (the transcript's own)"
        prompt = (f"{note}\nOwner's topics: {topics}\nLanguage: {language}\n\n"
                  f"Transcript:\n{text}").lstrip()
        messages: list[dict[str, str]] = [{"role": "system", "content": INSTRUCTIONS},
                                          {"role": "user", "content": prompt}]
        content = await self._complete(material.record_id, messages)
        try:
            return parse_answer(content)
        except BadModelAnswer:
            log.warning("describe_answer_unusable", record_id=material.record_id, retry=True)
        # The first answer is not sent back: a hostile model's text would travel again (as
        # large as the cap) and steer the retry.
        messages += [{"role": "user", "content": RETRY_NOTE}]
        content = await self._complete(material.record_id, messages)
        try:
            return parse_answer(content)
        except BadModelAnswer:
            log.warning("describe_answer_unusable", record_id=material.record_id, retry=False)
            raise PermanentFailure("the endpoint answered twice without the JSON asked for") \
                from None

    async def _complete(self, record_id: str, messages: list[dict[str, str]]) -> str:
        body = {"model": self._settings.model, "messages": messages, "temperature": 0,
                "stream": False, "max_tokens": self._settings.max_answer_tokens}
        return message_content(await self._endpoint.post(body, record_id=record_id))


def parse_answer(content: str) -> dict[str, Any]:
    """`{"title": str, "brief": str, "topics": [str]}` from a model's answer (a fenced code
    block, or prose around the object, is tolerated); `BadModelAnswer` for anything else.
    Lengths and the number of topics are repaired later (`describe.fitted`)."""
    text = _FENCE_RE.sub("", content.strip())
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        raise BadModelAnswer
    try:
        data = orjson.loads(text[start:end + 1])
    except orjson.JSONDecodeError:
        raise BadModelAnswer from None
    if not isinstance(data, dict):
        raise BadModelAnswer
    title, brief, topics = data.get("title"), data.get("brief"), data.get("topics", [])
    if not isinstance(title, str) or not isinstance(brief, str) or not isinstance(topics, list):
        raise BadModelAnswer
    if not all(isinstance(topic, str) for topic in topics):
        raise BadModelAnswer
    return {"title": title, "brief": brief, "topics": topics}


def chunks(text: str, limit: int) -> list[str]:
    """`text` in parts of at most `limit` characters, cut between lines (a line longer
    than that between words, or anywhere)."""
    parts: list[str] = []
    current: list[str] = []
    size = 0
    for line in _lines(text, limit):
        extra = len(line) + (1 if current else 0)
        if current and size + extra > limit:
            parts.append("\n".join(current))
            current, size = [], 0
            extra = len(line)
        current.append(line)
        size += extra
    if current or not parts:
        parts.append("\n".join(current))
    return parts


def _lines(text: str, limit: int) -> Sequence[str]:
    lines: list[str] = []
    for whole in text.split("\n"):
        line = whole
        while len(line) > limit:
            cut = line.rfind(" ", 0, limit)
            cut = cut if cut > 0 else limit
            lines.append(line[:cut])
            line = line[cut:].lstrip()
        lines.append(line)
    return lines
