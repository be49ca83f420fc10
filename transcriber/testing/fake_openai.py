"""A fake OpenAI-compatible chat-completions endpoint on loopback, following the wire format.

- `POST /v1/chat/completions`: a JSON body with `model` and `messages` (each a `role`
  of system, user or assistant and a string `content`); 400 with OpenAI's error shape
  (`{"error": {"message", "type", "param", "code"}}`) when they are missing; 401 when
  `api_key` is set and the `Authorization: Bearer` header does not carry it. The answer
  is a `chat.completion` object: `id`, `object`, `created`, `model`, `choices`
  (`index`, `message {role: assistant, content}`, `finish_reason: stop`) and `usage`.
- What the assistant says comes from `answers`, a queue of scripted replies, each one of:
  a `dict` (sent as its JSON text: the description), a `str` (sent as the content as
  it is: malformed JSON, prose, a fenced block), `Status(code)` (an error answer with
  OpenAI's error body), `Hang()` (no answer until the client gives up: a timeout) or
  `RawBody(bytes)` (a 200 whose body is not a chat completion). With the queue empty it
  answers `default`.
- Hostile answers (an endpoint is not trusted): `Huge(size)` streams `size` bytes of a
  never-ending JSON string, generated chunk by chunk, never held (with or without a
  `Content-Length`, or as a server-sent stream whose first line never ends; `sent`
  counts what went out before the client hung up);
  `Redirect(location, code)` answers a 3xx pointing elsewhere; `Trickle(interval)`
  sends the head, then one byte every `interval` seconds for as long as the client reads.
- `stream: true` in the request: the content is sent as OpenAI streams it, server-sent
  `chat.completion.chunk` events (`data: {...}` lines: the first chunk's `delta` names
  the role, then one chunk per word with `delta.content`, then an empty `delta` with
  `finish_reason: stop`), then `data: [DONE]`. `Held(content, release, after)` stops
  such a stream after its first `after` words until the test sets `release`. Status,
  redirect and hostile answers are sent as they are without `stream`.
- `hits` counts every request to any path, before any check: a server that must receive
  nothing (the target of a redirect) shows it.
- Every request is kept in `requests` (its JSON body and headers), so a test can read
  what the describer asked, and that the prompt carried the owner's topics.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any

import orjson
from aiohttp import web

from transcriber.testing.loopback import start_on_loopback


@dataclass(frozen=True, slots=True)
class Status:
    code: int
    retry_after: int | None = None


@dataclass(frozen=True, slots=True)
class Hang:
    seconds: float = 3600.0


@dataclass(frozen=True, slots=True)
class RawBody:
    body: bytes


@dataclass(frozen=True, slots=True)
class Huge:
    size: int
    declare_length: bool = False
    # Sent as a server-sent stream whose first `data:` line never ends.
    event_stream: bool = False


@dataclass(frozen=True, slots=True)
class Redirect:
    location: str
    code: int = 307


@dataclass(frozen=True, slots=True)
class Trickle:
    interval: float = 0.05
    limit: int = 100_000


@dataclass(frozen=True, slots=True)
class Held:
    content: str
    release: asyncio.Event
    after: int = 1


ScriptedAnswer = (dict[str, Any] | str | Status | Hang | RawBody | Huge | Redirect | Trickle
                  | Held)
_CHUNK = 64 * 1024


@dataclass(frozen=True, slots=True)
class Request:
    body: dict[str, Any]
    headers: dict[str, str]

    @property
    def prompt(self) -> str:
        """Everything the messages say, in order (system, user, assistant)."""
        return "\n".join(str(message.get("content", "")) for message in self.body["messages"])


def _error(status: int, message: str, kind: str, code: str | None = None) -> web.Response:
    body = {"error": {"message": message, "type": kind, "param": None, "code": code}}
    return web.Response(status=status, body=orjson.dumps(body),
                        content_type="application/json")


@dataclass(slots=True)
class FakeChatCompletions:
    api_key: str | None = None
    default: ScriptedAnswer = field(default_factory=lambda: {
        "title": "A recording", "brief": "Someone talks.", "topics": []})
    answers: deque[ScriptedAnswer] = field(default_factory=deque)
    requests: list[Request] = field(default_factory=list)
    base_url: str = ""
    hits: int = 0
    sent: int = 0
    _runner: web.AppRunner | None = None
    _ids: Any = field(default_factory=lambda: itertools.count(1))

    def script(self, *answers: ScriptedAnswer) -> None:
        self.answers.extend(answers)

    def app(self) -> web.Application:
        app = web.Application(middlewares=[self._count])
        app.router.add_post("/v1/chat/completions", self._complete)
        return app

    @web.middleware
    async def _count(self, request: web.Request, handler: Any) -> web.StreamResponse:
        self.hits += 1
        response: web.StreamResponse = await handler(request)
        return response

    async def start(self) -> str:
        """Serve; answers the base URL to configure (`…/v1`, as `describer.base_url`)."""
        self._runner, root = await start_on_loopback(self.app())
        self.base_url = f"{root}/v1"
        return self.base_url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _complete(self, request: web.Request) -> web.StreamResponse:
        if self.api_key is not None and request.headers.get(
                "Authorization") != f"Bearer {self.api_key}":
            return _error(401, "Incorrect API key provided.", "invalid_request_error",
                          "invalid_api_key")
        try:
            body = orjson.loads(await request.read())
        except orjson.JSONDecodeError:
            return _error(400, "We could not parse the JSON body of your request.",
                          "invalid_request_error")
        messages = body.get("messages") if isinstance(body, dict) else None
        if not isinstance(body, dict) or not isinstance(body.get("model"), str) or \
                not isinstance(messages, list) or not messages or not all(
                    isinstance(m, dict) and m.get("role") in ("system", "user", "assistant")
                    and isinstance(m.get("content"), str) for m in messages):
            return _error(400, "Invalid request: model and messages are required.",
                          "invalid_request_error")
        self.requests.append(Request(body=body, headers=dict(request.headers)))
        answer = self.answers.popleft() if self.answers else self.default
        if isinstance(answer, Hang):
            await asyncio.sleep(answer.seconds)
            answer = self.default
        if isinstance(answer, Status):
            response = _error(answer.code, f"scripted status {answer.code}",
                              "server_error" if answer.code >= 500 else "invalid_request_error")
            if answer.retry_after is not None:
                response.headers["Retry-After"] = str(answer.retry_after)
            return response
        if isinstance(answer, Redirect):
            raise web.HTTPTemporaryRedirect(answer.location) if answer.code == 307 else \
                web.HTTPFound(answer.location)
        if isinstance(answer, Huge | Trickle):
            return await self._stream(request, answer)
        if isinstance(answer, RawBody):
            return web.Response(body=answer.body, content_type="application/json")
        if isinstance(answer, Held):
            content = answer.content
        else:
            content = answer if isinstance(answer, str) else orjson.dumps(answer).decode()
        if body.get("stream") is True:
            return await self._chunks(request, body["model"], content,
                                      answer if isinstance(answer, Held) else None)
        return web.Response(body=orjson.dumps({
            "id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion",
            "created": int(time.time()), "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                         "logprobs": None, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }), content_type="application/json")

    async def _chunks(self, request: web.Request, model: str, content: str,
                      held: Held | None) -> web.StreamResponse:
        """`content` as OpenAI streams a chat completion: a chunk per word, then [DONE]."""
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream; "
                                                               "charset=utf-8"})
        await response.prepare(request)
        head = {"id": f"chatcmpl-{next(self._ids)}", "object": "chat.completion.chunk",
                "created": int(time.time()), "model": model, "system_fingerprint": None}

        def chunk(delta: dict[str, str], finish: str | None = None) -> bytes:
            choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
            return b"data: " + orjson.dumps({**head, "choices": [choice]}) + b"\n\n"

        await response.write(chunk({"role": "assistant", "content": ""}))
        for n, word in enumerate(re.findall(r"\s*\S+|\s+", content)):
            if held is not None and n == held.after:
                await held.release.wait()
            await response.write(chunk({"content": word}))
        await response.write(chunk({}, "stop"))
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response

    async def _stream(self, request: web.Request, answer: Huge | Trickle) -> web.StreamResponse:
        """A 200 whose body never ends as a chat completion: `{"choices": [{"message":
        {"content": "xxxx…` for `size` bytes, or a byte per `interval`."""
        streamed = isinstance(answer, Huge) and answer.event_stream
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream" if streamed else "application/json"})
        if isinstance(answer, Huge) and answer.declare_length:
            response.content_length = answer.size
        await response.prepare(request)
        head = (b'data: {"choices": [{"delta": {"content": "' if streamed else
                b'{"choices": [{"message": {"role": "assistant", "content": "')
        try:
            await response.write(head)
            self.sent += len(head)
            if isinstance(answer, Trickle):
                for _ in range(answer.limit):
                    await asyncio.sleep(answer.interval)
                    await response.write(b"x")
                    self.sent += 1
                return response
            chunk = b"x" * _CHUNK
            left = answer.size - len(head)
            while left > 0:
                piece = chunk[:min(left, _CHUNK)]
                await response.write(piece)
                self.sent += len(piece)
                left -= len(piece)
        except (ConnectionError, RuntimeError):
            pass  # the client hung up: what it took is counted in `sent`
        return response
