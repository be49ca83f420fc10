"""Pure decisions of the Telegram door: no I/O here, only answers.

What a message is (a file to take in, something to refuse, a command to
answer, nothing to do), how long to wait before the next try, what kind an
error from the Bot API is, and how a transcript goes back into the chat.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import Literal

import aiohttp
from aiogram.exceptions import (
    ClientDecodeError,
    TelegramAPIError,
    TelegramConflictError,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
)
from aiogram.types import Message

from transcriber.bot import texts
from transcriber.core.errors import IncompleteInput, TransientFailure
from transcriber.domain.text import without_refused
from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.pipeline import policy
from transcriber.providers import media

# Telegram's limit on a message, counted in UTF-16 code units.
MESSAGE_MAX_UNITS = 4096
HELP_COMMANDS = frozenset({"/start", "/help"})
QUERY_COMMANDS = frozenset({"/status", "/last", "/ask", "/export"})
# What `/export` sends (documents.render_bytes): the ones a person opens or subtitles.
EXPORT_FORMATS: tuple[TranscriptFormat, ...] = ("docx", "md", "txt", "srt")

IntakeRefusalReason = Literal["not_allowed", "not_audio", "too_large"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TakeFile:
    """An allowed sender's audio: download it and store a record."""

    login: str
    file_id: str
    file_name: str
    size_bytes: int | None
    title: str
    language: texts.Language = "en"


@dataclass(frozen=True, slots=True, kw_only=True)
class Refuse:
    reason: IntakeRefusalReason
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ChatCommand:
    """A command from an allowed sender (`/start`, `/help`)."""

    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class RunCommand:
    """`/status`, `/last`, `/ask …` or `/export …` from an allowed sender: answered from
    the archive."""

    command: Literal["/status", "/last", "/ask", "/export"]
    login: str
    language: texts.Language
    argument: str = ""
    """What follows the command (`/ask`'s question, `/export`'s `docx 01J…`)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ignore:
    """Nothing to answer (a service message, a message without a sender)."""


MessageDecision = TakeFile | Refuse | ChatCommand | RunCommand | Ignore


def inspect_message(
    message: Message, *, allowed: Mapping[str, str], max_bytes: int, forced_language: str = ""
) -> MessageDecision:
    sender = message.from_user
    if sender is None or sender.is_bot:
        return Ignore()
    lang = texts.language_for(sender.language_code, forced=forced_language)
    # In a group the bot may see every message: it speaks up only about audio
    # from listed senders and about commands, never about the conversation.
    private = message.chat.type == "private"
    login = allowed.get(str(sender.id))
    if login is None:
        if not private:
            return Ignore()
        return Refuse(reason="not_allowed",
                      text=texts.say(lang, texts.T.NOT_ALLOWED, user_id=sender.id))
    candidate = _audio_of(message)
    if candidate is None:
        command = command_of(message.text)
        if command in HELP_COMMANDS:
            return ChatCommand(text=texts.help_text(lang, max_bytes))
        if command == "/status":
            return RunCommand(command="/status", login=login, language=lang)
        if command == "/last":
            return RunCommand(command="/last", login=login, language=lang)
        if command == "/ask":
            question = (message.text or "").split(maxsplit=1)[1:]
            return RunCommand(command="/ask", login=login, language=lang,
                              argument=question[0].strip() if question else "")
        if command == "/export":
            rest = (message.text or "").split(maxsplit=1)
            return RunCommand(command="/export", login=login, language=lang,
                              argument=rest[1] if len(rest) > 1 else "")
        if _is_service_message(message) or not private:
            return Ignore()
        return Refuse(reason="not_audio", text=texts.say(lang, texts.T.NOT_AUDIO))
    file_id, file_name, size, title = candidate
    if size is not None and size > max_bytes:
        return Refuse(reason="too_large", text=texts.too_large(lang, max_bytes))
    return TakeFile(login=login, file_id=file_id, file_name=file_name, size_bytes=size,
                    title=_clean_title(message.caption or title), language=lang)


@dataclass(frozen=True, slots=True, kw_only=True)
class ExportAsked:
    """What `/export` asks for: a format, and a record (None: the latest transcript)."""

    fmt: TranscriptFormat
    record_id: str | None


def export_asked(arguments: str) -> ExportAsked | None:
    """Pure: `docx`, `MD 01J…` → what to send; None when the words are not a format
    and at most one record id."""
    words = arguments.split()
    if not 1 <= len(words) <= 2:
        return None
    fmt = next((f for f in EXPORT_FORMATS if f == words[0].lower().lstrip(".")), None)
    if fmt is None:
        return None
    return ExportAsked(fmt=fmt, record_id=words[1] if len(words) == 2 else None)


def command_of(text: str | None) -> str:
    """`/status@some_bot extra` → `/status`; not a command → empty."""
    if not text or not text.startswith("/"):
        return ""
    return text.split(maxsplit=1)[0].split("@")[0].lower()


def is_audio_document(mime_type: str | None, file_name: str | None) -> bool:
    mime = (mime_type or "").lower()
    if mime.startswith("audio/") or mime in media.SENDER_MEDIA_TYPES:
        return True
    return PurePosixPath(file_name or "").suffix.lower() in media.SENDER_EXTENSIONS


def _audio_of(message: Message) -> tuple[str, str, int | None, str] | None:
    """(file id, name to keep, declared size, title) of the message's audio, if any."""
    if message.voice is not None:
        voice = message.voice
        return voice.file_id, voice_file_name(message.date), voice.file_size, ""
    if message.audio is not None:
        audio = message.audio
        name = audio.file_name or f"audio{_extension_for(audio.mime_type)}"
        title = " – ".join(part for part in (audio.performer, audio.title) if part)
        return audio.file_id, name, audio.file_size, title
    document = message.document
    if document is not None and is_audio_document(document.mime_type, document.file_name):
        name = document.file_name or f"audio{_extension_for(document.mime_type)}"
        return document.file_id, name, document.file_size, ""
    return None


def voice_file_name(sent_at: datetime) -> str:
    """Voice messages have no name; the time they were sent tells them apart."""
    return f"voice-{sent_at.strftime('%Y-%m-%d_%H-%M-%S')}.ogg"


def _extension_for(mime_type: str | None) -> str:
    return media.SENDER_MEDIA_TYPES.get((mime_type or "").lower(), "")


def _clean_title(raw: str) -> str:
    # The web's title rule (`domain.text`), stripped here: nobody can be asked to send again.
    return without_refused(" ".join(raw.split()))[:255]


def _is_service_message(message: Message) -> bool:
    """A member joined, a title changed…: nothing the sender typed or sent."""
    return not any((message.text, message.caption, message.photo, message.video,
                    message.video_note, message.sticker, message.document, message.animation,
                    message.contact, message.location, message.poll))


# -- waiting and kinds of errors --------------------------------------------------------

def retry_seconds(failures: int, *, base: float, cap: float) -> float:
    """Pause after the `failures`-th failure in a row: `base · 2^(failures-1)`, capped."""
    return policy.backoff_base_seconds(failures, base=base, cap=cap)


TRANSIENT_API_ERRORS: tuple[type[BaseException], ...] = (
    TelegramNetworkError, TelegramServerError, TelegramRetryAfter, TelegramConflictError,
    ClientDecodeError,
)
"""Bot API failures worth another try: the network, Telegram's 5xx and 429, a
concurrent poller during a restart (409), an answer that is not JSON."""

ANY_API_ERRORS: tuple[type[BaseException], ...] = (TelegramAPIError, ClientDecodeError)
"""Whatever a Bot API call can fail with, transient or not."""

TRANSIENT_INTAKE_ERRORS: tuple[type[BaseException], ...] = (
    *TRANSIENT_API_ERRORS, aiohttp.ClientError, asyncio.TimeoutError, TransientFailure,
    IncompleteInput, OSError, sqlite3.OperationalError,
)
"""Failures while taking a file in that a later try may not meet: the download
broke or was cut short, the disk is full, the database was busy."""


def wait_before_retry(error: BaseException, failures: int, *, base: float, cap: float) -> float:
    """Telegram's own `retry_after` when it sends one, else the backoff."""
    if isinstance(error, TelegramRetryAfter):
        return float(max(error.retry_after, 0))
    return retry_seconds(failures, base=base, cap=cap)


# -- transcripts back into the chat -----------------------------------------------------

def utf16_units(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def fits_in_message(text: str) -> bool:
    return utf16_units(text) <= MESSAGE_MAX_UNITS


CAPTION_MAX_UNITS = 1024
"""A document's caption, in UTF-16 units (the Bot API's limit)."""


def heading(title: str, brief: str) -> str:
    """What a reply starts with: the record's title, then its brief (each when given)."""
    return "\n".join(part for part in (title.strip(), brief.strip()) if part)


def with_heading(head: str, body: str) -> str:
    return f"{head}\n\n{body}" if head else body


def caption(head: str, note: str) -> str:
    """A document's caption: the heading and the note, the heading shortened to fit."""
    text = with_heading(head, note)
    while head and utf16_units(text) > CAPTION_MAX_UNITS:
        head = head[:-20].rstrip()
        text = with_heading(head + "…", note)
    return text


def transcript_file_name(record_id: str) -> str:
    return f"transcript-{record_id}.txt"
