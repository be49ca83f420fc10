"""A fake Telegram Bot API on loopback, following the real wire formats.

- `/bot<token>/<method>` (GET or POST; parameters in the query string, a JSON
  body, an urlencoded form or `multipart/form-data` with files, like the real
  one; JSON-typed fields of a form such as `reply_parameters` are JSON text).
  Answers `{"ok": true, "result": …}` or `{"ok": false, "error_code": …,
  "description": …[, "parameters": {"retry_after": …}]}`; a wrong token is 401.
- Methods: `getMe`, `getUpdates` (`offset` confirms every earlier update, as
  on the real service; `timeout` long-polls until an update arrives),
  `getFile` (400 "file is too big" above 20 MB), `sendMessage`,
  `sendDocument` (multipart upload).
- `editMessageText` (400 "message is not modified" for the same text, 400
  "message to edit not found" for an unknown message; `edits` records each),
  `setMyCommands` (`commands` keeps the menu per language code, after its scope).
- `/file/bot<token>/<file_path>`: the file's bytes.
- Local mode (`local_dir` set, as `telegram-bot-api --local`): `getFile`
  answers an absolute path under `local_dir`, where the file is written, and
  has no 20 MB limit; the bot reads the file in place.

Scriptable: `add_file`, `answer_path` (another `file_path` for a file),
`push_voice` / `push_audio` / `push_document` / `push_text` queue updates;
`sent` records what the bot sent; `fail_next`
answers a method with an error (500, 429 with `retry_after`, …), `drop_next`
cuts the connection, `drop_if` cuts those a predicate picks, `down` cuts every
connection; `before_call` runs before a method or a download (`"file"`) is
answered (to act at an exact moment, e.g. kill the bot).
"""

from __future__ import annotations

import asyncio
import itertools
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web

from transcriber.testing.bot_api_wire import (
    BASE_DATE,
    BOT_API_DOWNLOAD_MAX,
    BOT_USER,
    BotApiFault,
    BotApiFile,
    EditedMessage,
    RequestHook,
    SentMessage,
    error,
    ok,
    read_params,
)
from transcriber.testing.loopback import start_on_loopback

__all__ = ["FakeTelegram", "SentMessage"]


SUPERGROUP_IDS_BELOW = -1_000_000_000_000
"""Telegram writes a supergroup's id as -100 followed by its own."""


@dataclass
class FakeTelegram:
    token: str = "123456:TEST-fake-token"  # noqa: S105 - a fake's token
    updates: list[dict[str, Any]] = field(default_factory=list)
    confirmed_offset: int = 0
    sent: list[SentMessage] = field(default_factory=list)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    # Update ids in the order getUpdates answered them (a redelivery appears twice).
    answered: list[int] = field(default_factory=list)
    files: dict[str, BotApiFile] = field(default_factory=dict)
    faults: dict[str, deque[BotApiFault]] = field(default_factory=dict)
    down: bool = False
    # Cuts the connection of every call it answers True for (method, parameters).
    drop_if: Callable[[str, dict[str, Any]], bool] | None = None
    before_call: RequestHook | None = None
    base_url: str = ""
    edits: list[EditedMessage] = field(default_factory=list)
    # Errors the fake's own methods answered (bad parameters, not modified, …).
    errors: list[tuple[str, int]] = field(default_factory=list)
    commands: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    # Local Bot API mode: files live under this folder and getFile answers absolute paths.
    local_dir: Path | None = None
    _texts: dict[tuple[int, int], str] = field(default_factory=dict)
    _update_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1000))
    _message_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(5000))
    _file_ids: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _arrived: asyncio.Event = field(default_factory=asyncio.Event)
    _sent_changed: asyncio.Event = field(default_factory=asyncio.Event)
    _runner: web.AppRunner | None = None

    # -- scripting ----------------------------------------------------------------------

    def fail_next(self, method: str, status: int = 500, description: str = "Internal Server "
                  "Error", *, retry_after: int | None = None, times: int = 1) -> None:
        for _ in range(times):
            self.faults.setdefault(method, deque()).append(
                BotApiFault(status=status, description=description, retry_after=retry_after))

    def drop_next(self, method: str, *, times: int = 1) -> None:
        for _ in range(times):
            self.faults.setdefault(method, deque()).append(BotApiFault(drop=True))

    def add_file(self, content: bytes, *, declared_size: int | None = None,
                 folder: str = "voice", ext: str = ".oga") -> str:
        number = next(self._file_ids)
        file_id = f"AwACAgIAAxkBAAI{number:06d}"
        file_path = f"{folder}/file_{number}{ext}"
        if self.local_dir is not None:
            local = self.local_dir / self.token / file_path
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(content)
            file_path = str(local)
        self.files[file_id] = BotApiFile(
            file_id=file_id, file_unique_id=f"AgAD{number:06d}",
            file_path=file_path, content=content,
            declared_size=len(content) if declared_size is None else declared_size)
        return file_id

    def answer_path(self, file_id: str, file_path: str) -> None:
        """`getFile` answers `file_path` for this file from now on: what a compromised
        or buggy local Bot API could answer (a `..` escape, another folder)."""
        self.files[file_id].file_path = file_path

    def push_message(self, message: dict[str, Any]) -> int:
        """Queue an update carrying `message`; answers its update id.

        Pushing the same message again is a second delivery of one message.
        """
        update_id = next(self._update_ids)
        self.updates.append({"update_id": update_id, "message": message})
        self._arrived.set()
        return update_id

    def message(self, *, sender_id: int, chat_id: int | None = None, **content: Any
                ) -> dict[str, Any]:
        """A message as Telegram sends it (a private chat unless `chat_id` names a group:
        a basic group's id is negative, a supergroup's `-100…`)."""
        message_id = next(self._message_ids)
        chat: dict[str, Any] = {"id": sender_id, "type": "private", "first_name": "Sender"}
        if chat_id is not None and chat_id != sender_id:
            kind = "supergroup" if chat_id <= SUPERGROUP_IDS_BELOW else "group"
            chat = {"id": chat_id, "type": kind, "title": "A group"}
        return {"message_id": message_id, "date": BASE_DATE + message_id, "chat": chat,
                "from": {"id": sender_id, "is_bot": False, "first_name": "Sender"},
                **content}

    def push_voice(self, *, sender_id: int, file_id: str, chat_id: int | None = None,
                   caption: str | None = None, declare_size: bool = True
                   ) -> tuple[int, dict[str, Any]]:
        stored = self.files[file_id]
        voice: dict[str, Any] = {"file_id": file_id, "file_unique_id": stored.file_unique_id,
                                 "duration": 3, "mime_type": "audio/ogg"}
        if declare_size:
            voice["file_size"] = stored.declared_size
        extra = {"caption": caption} if caption is not None else {}
        message = self.message(sender_id=sender_id, chat_id=chat_id, voice=voice, **extra)
        return self.push_message(message), message

    def push_audio(self, *, sender_id: int, file_id: str, file_name: str = "talk.mp3",
                   mime_type: str = "audio/mpeg") -> tuple[int, dict[str, Any]]:
        stored = self.files[file_id]
        audio = {"file_id": file_id, "file_unique_id": stored.file_unique_id, "duration": 60,
                 "file_name": file_name, "mime_type": mime_type,
                 "file_size": stored.declared_size}
        message = self.message(sender_id=sender_id, audio=audio)
        return self.push_message(message), message

    def push_document(self, *, sender_id: int, file_id: str, file_name: str,
                      mime_type: str) -> tuple[int, dict[str, Any]]:
        stored = self.files[file_id]
        document = {"file_id": file_id, "file_unique_id": stored.file_unique_id,
                    "file_name": file_name, "mime_type": mime_type,
                    "file_size": stored.declared_size}
        message = self.message(sender_id=sender_id, document=document)
        return self.push_message(message), message

    def push_text(self, *, sender_id: int, text: str,
                  chat_id: int | None = None) -> tuple[int, dict[str, Any]]:
        message = self.message(sender_id=sender_id, chat_id=chat_id, text=text)
        return self.push_message(message), message

    def sent_to(self, chat_id: int) -> list[SentMessage]:
        return [m for m in self.sent if m.chat_id == chat_id]

    async def wait_sent(self, count: int) -> list[SentMessage]:
        """Wait until `count` messages were sent (wrap it in `asyncio.timeout`)."""
        while len(self.sent) < count:
            self._sent_changed.clear()
            await self._sent_changed.wait()
        return self.sent

    def _record_sent(self, message: SentMessage) -> None:
        self.sent.append(message)
        self._sent_changed.set()

    # -- serving ------------------------------------------------------------------------

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._method)
        app.router.add_get("/file/bot{token}/{path:.+}", self._file)
        return app

    async def start(self) -> str:
        self._runner, self.base_url = await start_on_loopback(
            self.app(), handler_cancellation=True)
        return self.base_url

    async def stop(self) -> None:
        self._arrived.set()  # long polls in progress answer now
        if self._runner is not None:
            await self._runner.cleanup()

    async def _method(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            return error(401, "Unauthorized")
        name = request.match_info["method"]
        handler = self._handlers().get(name.lower())
        if handler is None:
            return error(404, "Not Found: method not found")
        params, uploads = await read_params(request)
        self.calls.append((name, params))
        if self.before_call is not None:
            await self.before_call(name, params)
        fault = self._fault(name, params)
        if fault is not None:
            return self._apply(request, fault)
        response = await handler(params, uploads)
        if response.status >= 400:
            # Not an injected fault: the bot called wrongly (tests assert there is none).
            self.errors.append((name, response.status))
        return response

    def _fault(self, name: str, params: dict[str, Any]) -> BotApiFault | None:
        if self.down or (self.drop_if is not None and self.drop_if(name, params)):
            return BotApiFault(drop=True)
        queue = self.faults.get(name)
        return queue.popleft() if queue else None

    @staticmethod
    def _apply(request: web.Request, fault: BotApiFault) -> web.StreamResponse:
        if fault.drop:
            # The connection dies without an answer, as when a network path breaks.
            if request.transport is not None:
                request.transport.abort()
            raise asyncio.CancelledError
        return error(fault.status, fault.description, fault.retry_after)

    def _handlers(self) -> dict[str, Callable[[dict[str, Any], dict[str, tuple[str, bytes]]],
                                             Awaitable[web.Response]]]:
        return {"getme": self._get_me, "getupdates": self._get_updates,
                "getfile": self._get_file, "sendmessage": self._send_message,
                "senddocument": self._send_document, "editmessagetext": self._edit_text,
                "setmycommands": self._set_my_commands}

    # -- methods ------------------------------------------------------------------------

    async def _get_me(self, params: dict[str, Any], uploads: Any) -> web.Response:
        return ok({**BOT_USER, "can_join_groups": True, "can_read_all_group_messages": False,
                    "supports_inline_queries": False})

    async def _get_updates(self, params: dict[str, Any], uploads: Any) -> web.Response:
        offset = int(params.get("offset", 0) or 0)
        if offset > 0:
            self.confirmed_offset = max(self.confirmed_offset, offset)
            self.updates = [u for u in self.updates if u["update_id"] >= offset]
        limit = int(params.get("limit", 100) or 100)
        timeout = float(params.get("timeout", 0) or 0)
        if not self.updates and timeout > 0:
            self._arrived.clear()
            try:
                async with asyncio.timeout(timeout):
                    await self._arrived.wait()
            except TimeoutError:
                pass
        answer = self.updates[:limit]
        self.answered.extend(u["update_id"] for u in answer)
        return ok(answer)

    async def _get_file(self, params: dict[str, Any], uploads: Any) -> web.Response:
        stored = self.files.get(str(params.get("file_id", "")))
        if stored is None:
            return error(400, "Bad Request: invalid file_id")
        if stored.declared_size > BOT_API_DOWNLOAD_MAX and self.local_dir is None:
            return error(400, "Bad Request: file is too big")
        return ok({"file_id": stored.file_id, "file_unique_id": stored.file_unique_id,
                    "file_size": stored.declared_size, "file_path": stored.file_path})

    async def _file(self, request: web.Request) -> web.StreamResponse:
        if request.match_info["token"] != self.token:
            return error(401, "Unauthorized")
        path = request.match_info["path"]
        if self.before_call is not None:
            await self.before_call("file", {"path": path})
        fault = self._fault("file", {"path": path})
        if fault is not None:
            return self._apply(request, fault)
        stored = next((f for f in self.files.values() if f.file_path == path), None)
        if stored is None:
            return error(404, "Not Found")
        return web.Response(body=stored.content, content_type="application/octet-stream")

    def _reply_target(self, params: dict[str, Any]) -> int | None:
        reply = params.get("reply_parameters")
        if isinstance(reply, dict) and "message_id" in reply:
            return int(reply["message_id"])
        legacy = params.get("reply_to_message_id")
        if legacy is None or legacy == "":
            return None
        return int(legacy)

    def _message_result(self, chat_id: int, reply_to: int | None, **content: Any
                        ) -> dict[str, Any]:
        message_id = next(self._message_ids)
        result: dict[str, Any] = {
            "message_id": message_id, "date": BASE_DATE + message_id, "from": BOT_USER,
            "chat": {"id": chat_id, "type": "private", "first_name": "Sender"}, **content}
        if reply_to is not None:
            result["reply_to_message"] = {"message_id": reply_to, "date": BASE_DATE,
                                          "chat": result["chat"]}
        return result

    async def _send_message(self, params: dict[str, Any], uploads: Any) -> web.Response:
        text = str(params.get("text", ""))
        if not text:
            return error(400, "Bad Request: message text is empty")
        if len(text.encode("utf-16-le")) // 2 > 4096:
            return error(400, "Bad Request: message is too long")
        chat_id = int(params["chat_id"])
        reply_to = self._reply_target(params)
        result = self._message_result(chat_id, reply_to, text=text)
        self._record_sent(SentMessage(method="sendMessage", message_id=result["message_id"],
                                     chat_id=chat_id, text=text, reply_to=reply_to))
        self._texts[(chat_id, result["message_id"])] = text
        return ok(result)

    async def _edit_text(self, params: dict[str, Any], uploads: Any) -> web.Response:
        chat_id, message_id = int(params["chat_id"]), int(params["message_id"])
        text = str(params.get("text", ""))
        shown = self._texts.get((chat_id, message_id))
        if shown is None:
            return error(400, "Bad Request: message to edit not found")
        if not text:
            return error(400, "Bad Request: message text is empty")
        if shown == text:
            return error(400, "Bad Request: message is not modified: specified new message "
                          "content and reply markup are exactly the same as a current content "
                          "and reply markup of the message")
        self._texts[(chat_id, message_id)] = text
        self.edits.append(EditedMessage(message_id=message_id, chat_id=chat_id, text=text))
        self._sent_changed.set()
        result = {"message_id": message_id, "date": BASE_DATE + message_id, "from": BOT_USER,
                  "chat": {"id": chat_id, "type": "private", "first_name": "Sender"},
                  "text": text, "edit_date": BASE_DATE + message_id + 1}
        return ok(result)

    def shown_text(self, chat_id: int, message_id: int) -> str | None:
        """What the chat shows now for a message the bot sent (after its edits)."""
        return self._texts.get((chat_id, message_id))

    async def _set_my_commands(self, params: dict[str, Any], uploads: Any) -> web.Response:
        commands = params.get("commands")
        if not isinstance(commands, list) or not commands:
            return error(400, "Bad Request: commands must be a non-empty list")
        # Keyed by language ("" the default), after the scope's type when one is named
        # (`all_group_chats:ru`).
        scope = params.get("scope")
        language = str(params.get("language_code") or "")
        kind = scope.get("type") if isinstance(scope, dict) else None
        self.commands[language if kind in (None, "default") else f"{kind}:{language}"] = commands
        return ok(True)

    async def _send_document(self, params: dict[str, Any],
                             uploads: dict[str, tuple[str, bytes]]) -> web.Response:
        # The file is the part named `document`, or the part `attach://<name>` points at.
        reference = str(params.get("document", ""))
        name_of_part = reference.removeprefix("attach://") if reference.startswith(
            "attach://") else "document"
        upload = uploads.get(name_of_part)
        if upload is None:
            return error(400, "Bad Request: there is no document in the request")
        name, content = upload
        chat_id = int(params["chat_id"])
        reply_to = self._reply_target(params)
        caption = params.get("caption")
        number = next(self._file_ids)
        result = self._message_result(chat_id, reply_to, caption=caption, document={
            "file_id": f"BQACAgIAAxkBAAI{number:06d}", "file_unique_id": f"AgAD{number:06d}",
            "file_name": name, "mime_type": "text/plain", "file_size": len(content)})
        self._record_sent(SentMessage(method="sendDocument", message_id=result["message_id"],
                                     chat_id=chat_id, reply_to=reply_to, caption=caption,
                                     document_name=name, document=content))
        return ok(result)
