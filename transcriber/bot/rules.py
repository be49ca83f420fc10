"""Pure decisions of the Telegram door: no I/O here, only answers.

What a message is (a file to take in, something to refuse, a command to
answer, nothing to do), in a private chat or in a group chat (with the group's
link to a space, read by the door: docs/telegram.md "Group chats"), how long to
wait before the next try, what kind an error from the Bot API is, and how a
transcript goes back into the chat.
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
from transcriber.db.reads.telegram import LinkedGroup
from transcriber.domain.text import without_refused
from transcriber.domain.transcript_formats import TranscriptFormat
from transcriber.pipeline import policy
from transcriber.providers import media

# Telegram's limit on a message, counted in UTF-16 code units.
MESSAGE_MAX_UNITS = 4096
HELP_COMMANDS = frozenset({"/start", "/help"})
QUERY_COMMANDS = frozenset({"/status", "/last", "/ask", "/export"})
GROUP_COMMANDS = frozenset({"/link", "/unlink"})
# In a group only what is about the group's space is answered; these two name a
# record of the sender's own (or the latest of theirs), so they stay private.
PRIVATE_QUERIES = frozenset({"/last", "/export"})
# What `/export` sends (documents.render_bytes): the ones a person opens or subtitles.
EXPORT_FORMATS: tuple[TranscriptFormat, ...] = ("docx", "md", "txt", "srt")

IntakeRefusalReason = Literal["not_allowed", "not_audio", "too_large", "not_linked"]


@dataclass(frozen=True, slots=True, kw_only=True)
class TakeFile:
    """Audio to download and store: an allowed sender's, or any sender's in a group
    linked to a space (`group`; `login` None for a sender not listed)."""

    login: str | None
    file_id: str
    file_name: str
    size_bytes: int | None
    title: str
    language: texts.Language = "en"
    group: LinkedGroup | None = None
    """The group chat's live link: the record goes into its space."""


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
    group: LinkedGroup | None = None
    """Asked in a group linked to a space: answered about that space's records only."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupCommand:
    """`/link SPACE` or `/unlink` in a group chat (from anyone: the door checks who)."""

    command: Literal["/link", "/unlink"]
    login: str | None
    language: texts.Language
    argument: str = ""
    """`/link`'s space name."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Ignore:
    """Nothing to answer (a service message, a message without a sender)."""


MessageDecision = TakeFile | Refuse | ChatCommand | RunCommand | GroupCommand | Ignore


def is_group(message: Message) -> bool:
    """A group or supergroup chat (a channel is neither: the bot reads no channel)."""
    return message.chat.type in ("group", "supergroup")


def inspect_message(
    message: Message, *, allowed: Mapping[str, str], max_bytes: int, forced_language: str = "",
    group: LinkedGroup | None = None,
) -> MessageDecision:
    """What to do with a message; `group` is the chat's link to a space when the chat is
    a group (None: a private chat, or a group not linked)."""
    sender = message.from_user
    if sender is None or sender.is_bot:
        return Ignore()
    lang = texts.language_for(sender.language_code, forced=forced_language)
    login = allowed.get(str(sender.id))
    if is_group(message):
        return _in_group(message, login=login, lang=lang, max_bytes=max_bytes,
                         group=group if group is not None and group.live() else None)
    if message.chat.type != "private":
        return Ignore()
    if login is None:
        return Refuse(reason="not_allowed",
                      text=texts.say(lang, texts.T.NOT_ALLOWED, user_id=sender.id))
    candidate = _audio_of(message)
    if candidate is None:
        command = command_of(message.text)
        if command in HELP_COMMANDS:
            return ChatCommand(text=texts.help_text(lang, max_bytes))
        if command in GROUP_COMMANDS:
            return ChatCommand(text=texts.say(lang, texts.T.LINK_IN_PRIVATE))
        if command in QUERY_COMMANDS:
            return _query(message, command, login=login, lang=lang)
        if _is_service_message(message):
            return Ignore()
        return Refuse(reason="not_audio", text=texts.say(lang, texts.T.NOT_AUDIO))
    return _take(message, candidate, login=login, lang=lang, max_bytes=max_bytes)


def _in_group(message: Message, *, login: str | None, lang: texts.Language, max_bytes: int,
              group: LinkedGroup | None) -> MessageDecision:
    """In a group the bot may see every message: it speaks up only about `/link` and
    `/unlink` (to anyone: they are addressed to it), the commands of listed senders,
    and audio (any sender's in a linked group, a listed sender's refused in one not
    linked); never about the conversation, and only about the linked space's records."""
    command = command_of(message.text)
    if command in GROUP_COMMANDS:
        return GroupCommand(command="/link" if command == "/link" else "/unlink",
                            login=login, language=lang, argument=argument_of(message.text))
    candidate = _audio_of(message)
    if candidate is not None:
        if group is not None:
            return _take(message, candidate, login=login, lang=lang, max_bytes=max_bytes,
                         group=group)
        if login is None:
            return Ignore()
        return Refuse(reason="not_linked", text=texts.say(lang, texts.T.GROUP_NOT_LINKED))
    if login is None:
        return Ignore()
    if command in HELP_COMMANDS:
        state = (texts.say(lang, texts.T.GROUP_NOT_LINKED) if group is None
                 else texts.say(lang, texts.T.GROUP_LINKED_TO, space=group.space_name))
        return ChatCommand(text=texts.group_help(lang, max_bytes) + "\n\n" + state)
    if command in QUERY_COMMANDS:
        if group is None:
            return ChatCommand(text=texts.say(lang, texts.T.GROUP_NOT_LINKED))
        if command in PRIVATE_QUERIES:
            return ChatCommand(text=texts.say(lang, texts.T.GROUP_PRIVATE_ONLY))
        return _query(message, command, login=login, lang=lang, group=group)
    return Ignore()


def _query(message: Message, command: str, *, login: str, lang: texts.Language,
           group: LinkedGroup | None = None) -> RunCommand:
    argument = argument_of(message.text)
    if command == "/status":
        return RunCommand(command="/status", login=login, language=lang, group=group)
    if command == "/last":
        return RunCommand(command="/last", login=login, language=lang, group=group)
    if command == "/ask":
        return RunCommand(command="/ask", login=login, language=lang, argument=argument,
                          group=group)
    return RunCommand(command="/export", login=login, language=lang, argument=argument,
                      group=group)


def _take(message: Message, candidate: tuple[str, str, int | None, str], *,
          login: str | None, lang: texts.Language, max_bytes: int,
          group: LinkedGroup | None = None) -> MessageDecision:
    file_id, file_name, size, title = candidate
    if size is not None and size > max_bytes:
        return Refuse(reason="too_large", text=texts.too_large(lang, max_bytes))
    return TakeFile(login=login, file_id=file_id, file_name=file_name, size_bytes=size,
                    title=_clean_title(message.caption or title), language=lang, group=group)


def argument_of(text: str | None) -> str:
    """What follows a command: `/ask@bot what was said` → `what was said`."""
    rest = (text or "").split(maxsplit=1)[1:]
    return rest[0].strip() if rest else ""


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
