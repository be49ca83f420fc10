"""The Bot API's wire shapes for the fake: what it records, its answers, how it reads a call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import orjson
from aiohttp import BodyPartReader, web

BOT_API_DOWNLOAD_MAX = 20 * 1024 * 1024
BOT_USER = {"id": 777000111, "is_bot": True, "first_name": "Transcriber",
            "username": "transcriber_test_bot"}
BASE_DATE = 1_767_225_600  # 2026-01-01T00:00:00Z


@dataclass(frozen=True, slots=True, kw_only=True)
class SentMessage:
    method: str
    message_id: int
    chat_id: int
    text: str | None = None
    reply_to: int | None = None
    caption: str | None = None
    document_name: str | None = None
    document: bytes | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class EditedMessage:
    message_id: int
    chat_id: int
    text: str


@dataclass(slots=True)
class BotApiFile:
    file_id: str
    file_unique_id: str
    file_path: str
    content: bytes
    declared_size: int


@dataclass(slots=True, kw_only=True)
class BotApiFault:
    status: int = 500
    description: str = "Internal Server Error"
    retry_after: int | None = None
    drop: bool = False


RequestHook = Callable[[str, dict[str, Any]], Awaitable[None]]


def error(status: int, description: str, retry_after: int | None = None) -> web.Response:
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return web.Response(status=status, body=orjson.dumps(body), content_type="application/json")


def ok(result: Any) -> web.Response:
    return web.Response(body=orjson.dumps({"ok": True, "result": result}),
                        content_type="application/json")


def decode_field(value: str) -> Any:
    if value[:1] in ("{", "["):
        try:
            return orjson.loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


async def read_params(request: web.Request) -> tuple[dict[str, Any], dict[str, tuple[str, bytes]]]:
    params: dict[str, Any] = {k: decode_field(v) for k, v in request.query.items()}
    uploads: dict[str, tuple[str, bytes]] = {}
    if request.content_type == "application/json" and request.can_read_body:
        params.update(await request.json(loads=orjson.loads))
    elif request.content_type == "application/x-www-form-urlencoded":
        form = await request.post()
        params.update({k: decode_field(str(v)) for k, v in form.items()})
    elif request.content_type == "multipart/form-data":
        reader = await request.multipart()
        while (part := await reader.next()) is not None:
            assert isinstance(part, BodyPartReader)
            if part.filename is not None:
                uploads[part.name or ""] = (part.filename, await part.read())
            else:
                params[part.name or ""] = decode_field(await part.text())
    return params, uploads
