"""The Telegram door: a long-polling actor that turns messages into records.

At-least-once intake (docs/telegram.md): an update is confirmed to Telegram (by the
`offset` of the next `getUpdates`) only after it was dealt with — its record
stored, or the sender refused. A crash before that makes Telegram deliver it
again; a repeated update (same chat and message id) finds the record stored
before and creates nothing (`AcceptRecord` dedups too, for a race).

Updates are handled one at a time, in order. A failure a later try may not
meet (network, Telegram's 5xx/429, a cut download, a busy disk) retries the
same update with backoff; after `telegram.update_attempts` tries the sender
is asked to send it again and the update is confirmed, so one poisoned update
cannot block the queue forever. A programming error is not retried: it
leaves `run` and the supervisor stops the service loudly, as does a token
Telegram does not know (401).

In a group chat the door reads the group's link to a space first (`bot.groups`,
docs/telegram.md "Group chats"): a linked group's audio becomes a record of the
space, replied to in the group; a group not linked is told so once (per run of
the service) when a listed sender sends audio there, and keeps nothing.

Logged: update ids, record ids, reasons and error class names; never the
text, caption or name of what was sent.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TypeVar

import structlog
from aiogram import Bot
from aiogram.exceptions import TelegramBadRequest, TelegramConflictError
from aiogram.types import (
    BotCommand,
    BotCommandScopeAllGroupChats,
    Message,
    ReplyParameters,
    Update,
)

from transcriber.bot import commands, groups, rules, texts
from transcriber.bot.client import file_url, local_file_chunks
from transcriber.bot.status import ProgressSource
from transcriber.bot.texts import T as Text
from transcriber.core.clock import Clock
from transcriber.core.errors import (
    PermanentFailure,
    QuotaExceeded,
    StorageFull,
    TooLarge,
    UnsafePath,
)
from transcriber.core.observability import TELEGRAM_POLL_FAILURES, TELEGRAM_UPDATES
from transcriber.db import reads
from transcriber.db.commands.telegram import NoteStatus
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.db.writer import Writer
from transcriber.pipeline.intake import (
    AudioLimits,
    AudioRefused,
    EmptyInput,
    Intake,
    accept_stream,
)
from transcriber.ports import Answerer, RecordFiles, Transcoder
from transcriber.settings import TelegramSettings

log = structlog.get_logger(__name__)

ALLOWED_UPDATES = ["message"]
DOWNLOAD_CHUNK_BYTES = 64 * 1024
CONFIRM_TIMEOUT_SECONDS = 5

T = TypeVar("T")


@dataclass(frozen=True, slots=True, kw_only=True)
class DoorParts:
    """What the door needs from the rest of the service."""

    writer: Writer
    readers: ReaderPool
    files: RecordFiles
    transcoder: Transcoder
    clock: Clock
    limits: AudioLimits
    # A record's recognition progress, for `/status` (none: stages only).
    progress: ProgressSource | None = None
    # The language model `/ask` answers with (none: the passages, offline).
    answerer: Answerer | None = None
    ask_prompt_chars: int = 12000


class TelegramDoor:
    def __init__(self, bot: Bot, *, settings: TelegramSettings, parts: DoorParts) -> None:
        self._bot = bot
        self._settings = settings
        self._parts = parts
        self.offset: int | None = None
        """The id after the last update dealt with: what the next poll confirms."""
        self.busy = False
        """True while an update is being dealt with (the stop waits for it)."""
        self._told_not_linked: set[int] = set()
        """Group chats told they are not linked (once each: the bot does not nag)."""

    # -- the loop -----------------------------------------------------------------------

    async def run(self, stopping: asyncio.Event) -> None:
        """Poll until `stopping` is set (or the task is cancelled)."""
        await self._retrying("get_me", self._bot.get_me, stopping)
        await self.register_commands()
        log.info("telegram_polling_started", allowed_senders=len(self._settings.allowed))
        while not stopping.is_set():
            updates = await self._retrying("get_updates", self._poll, stopping)
            for update in updates or ():
                self.busy = True
                try:
                    await self._deal_with(update)
                finally:
                    self.busy = False
                self.offset = update.update_id + 1
                if stopping.is_set():
                    return

    async def register_commands(self) -> None:
        """`setMyCommands` in English (the default) and in Russian, for private chats
        and for group chats; best effort."""
        menus = ((commands.MENU, None), (commands.GROUP_MENU, BotCommandScopeAllGroupChats()))
        for lang in texts.LANGUAGES:
            for menu, scope in menus:
                listed = [BotCommand(command=name, description=texts.say(lang, key))
                          for name, key in menu]
                try:
                    await self._bot.set_my_commands(
                        listed, scope=scope, language_code=None if lang == "en" else lang)
                except rules.ANY_API_ERRORS as exc:
                    log.warning("telegram_commands_not_set", language=lang,
                                error=type(exc).__name__)

    async def confirm(self) -> None:
        """Tell Telegram about the updates dealt with (on a graceful stop)."""
        if self.offset is None:
            return
        try:
            await self._bot.get_updates(offset=self.offset, timeout=0, limit=1,
                                        allowed_updates=ALLOWED_UPDATES,
                                        request_timeout=CONFIRM_TIMEOUT_SECONDS)
        except rules.ANY_API_ERRORS as exc:
            # Not fatal: those updates come again at the next start and are found stored.
            log.warning("telegram_confirm_failed", offset=self.offset, error=type(exc).__name__)

    async def _poll(self) -> list[Update]:
        timeout = self._settings.poll_timeout_seconds
        return await self._bot.get_updates(
            offset=self.offset, timeout=timeout, allowed_updates=ALLOWED_UPDATES,
            request_timeout=timeout + self._settings.request_timeout_seconds,
        )

    async def _retrying(
        self, call: str, make: Callable[[], Awaitable[T]], stopping: asyncio.Event
    ) -> T | None:
        """Retry transient Bot API failures with backoff; None once `stopping` is set."""
        failures = 0
        while not stopping.is_set():
            try:
                result = await make()
            except rules.TRANSIENT_API_ERRORS as exc:
                failures += 1
                TELEGRAM_POLL_FAILURES.labels(call).inc()
                wait = rules.wait_before_retry(exc, failures,
                                               base=self._settings.retry_base_seconds,
                                               cap=self._settings.retry_cap_seconds)
                # 409: another process polls with this token, or a webhook is set.
                report = log.error if isinstance(exc, TelegramConflictError) else log.warning
                report("telegram_poll_failed", call=call, failures=failures,
                       error=type(exc).__name__, retry_in=wait)
                await self._parts.clock.sleep(wait)
                continue
            if failures:
                log.info("telegram_poll_recovered", call=call, failures=failures)
            return result
        return None

    # -- one update ---------------------------------------------------------------------

    async def _deal_with(self, update: Update) -> None:
        message = update.message
        if message is None:
            return
        tries = 0
        while True:
            try:
                outcome = await self._handle(message)
            except rules.TRANSIENT_INTAKE_ERRORS as exc:
                tries += 1
                if tries >= self._settings.update_attempts:
                    TELEGRAM_UPDATES.labels("abandoned").inc()
                    log.error("telegram_update_abandoned", update_id=update.update_id,
                              tries=tries, error=type(exc).__name__)
                    await self._reply(message, texts.say(self._language(message), Text.TRY_AGAIN))
                    return
                wait = rules.wait_before_retry(exc, tries, base=self._settings.retry_base_seconds,
                                               cap=self._settings.retry_cap_seconds)
                log.warning("telegram_update_retry", update_id=update.update_id, tries=tries,
                            error=type(exc).__name__, retry_in=wait)
                await self._parts.clock.sleep(wait)
                continue
            TELEGRAM_UPDATES.labels(outcome).inc()
            return

    async def _handle(self, message: Message) -> str:
        """Deal with one message; the answer is the outcome for the metric."""
        chat_id = message.chat.id
        group = None
        if rules.is_group(message):
            group = await reads.telegram.group_of_chat(self._parts.readers, chat_id=chat_id)
        decision = rules.inspect_message(message, allowed=self._settings.allowed,
                                         max_bytes=self._settings.download_limit,
                                         forced_language=self._settings.language, group=group)
        if isinstance(decision, rules.Ignore):
            return "ignored"
        if isinstance(decision, rules.ChatCommand):
            await self._reply(message, decision.text)
            return "answered"
        if isinstance(decision, rules.GroupCommand):
            text, linked = await groups.answer(decision, chat_id=chat_id,
                                               readers=self._parts.readers,
                                               writer=self._parts.writer)
            if linked:
                self._told_not_linked.discard(chat_id)
            await self._reply(message, text)
            return "answered"
        if isinstance(decision, rules.Refuse):
            if decision.reason == "not_linked":
                if chat_id in self._told_not_linked:
                    return "ignored"
                self._told_not_linked.add(chat_id)
            return await self._refuse(message, decision.reason, decision.text)
        if isinstance(decision, rules.RunCommand):
            await commands.answer(self._bot, message, decision, settings=self._settings,
                                  readers=self._parts.readers, writer=self._parts.writer,
                                  clock=self._parts.clock, progress=self._parts.progress,
                                  answerer=self._parts.answerer,
                                  ask_prompt_chars=self._parts.ask_prompt_chars)
            return "answered"
        return await self._take(message, decision)

    def _language(self, message: Message) -> texts.Language:
        code = message.from_user.language_code if message.from_user is not None else None
        return texts.language_for(code, forced=self._settings.language)

    async def _take(self, message: Message, decision: rules.TakeFile) -> str:
        parts, lang, group = self._parts, decision.language, decision.group
        if group is not None:
            owner_id = await groups.owner_of(decision, group, readers=parts.readers,
                                             writer=parts.writer)
        else:
            assert decision.login is not None  # rules: a private chat's sender is listed
            owner_id = (await parts.writer.ask(EnsureUser(login=decision.login))).id
        stored = await reads.records.by_telegram_message(
            parts.readers, chat_id=message.chat.id, message_id=message.message_id)
        if stored is not None:
            log.info("telegram_repeated_update", record_id=stored)
            if group is not None:  # an earlier try stored it and may not have filed it
                await groups.file_into_space(stored, group, owner_id=owner_id,
                                             readers=parts.readers, writer=parts.writer)
            await self._reply(message, texts.say(lang, Text.ACCEPTED))
            return "repeated"
        limit = self._settings.download_limit
        try:
            telegram_file = await self._bot.get_file(decision.file_id)
        except TelegramBadRequest as exc:
            if "too big" in exc.message.lower():
                return await self._refuse(message, "too_large", texts.too_large(lang, limit))
            return await self._refuse(message, "not_downloadable",
                                      texts.say(lang, Text.NOT_DOWNLOADABLE))
        if not telegram_file.file_path:
            return await self._refuse(message, "not_downloadable",
                                      texts.say(lang, Text.NOT_DOWNLOADABLE))
        intake = Intake(owner_id=owner_id, original_name=decision.file_name, source="telegram",
                        title=decision.title, tg_chat_id=message.chat.id,
                        tg_message_id=message.message_id)
        try:
            async with contextlib.aclosing(self._download(telegram_file.file_path)) as stream:
                accepted = await accept_stream(
                    intake, stream, files=parts.files, writer=parts.writer,
                    transcoder=parts.transcoder, limit=limit,
                    limits=parts.limits,
                    expected_size=decision.size_bytes or telegram_file.file_size,
                )
        except TooLarge:
            return await self._refuse(message, "too_large", texts.too_large(lang, limit))
        except StorageFull:
            log.warning("storage_full", door="telegram")
            return await self._refuse(message, "storage_full",
                                      texts.say(lang, Text.STORAGE_FULL))
        except EmptyInput:
            return await self._refuse(message, "empty", texts.say(lang, Text.EMPTY))
        except AudioRefused as exc:
            return await self._refuse(message, exc.refusal, texts.audio_refused(
                lang, exc.refusal, parts.limits.max_seconds,
                max_sample_rate=parts.limits.max_sample_rate,
                max_channels=parts.limits.max_channels))
        except QuotaExceeded as exc:
            return await self._refuse(message, "quota_exceeded", texts.quota_exceeded(
                lang, exc.queued_ms, exc.limit_ms))
        except PermanentFailure:
            return await self._refuse(message, "not_readable", texts.say(lang, Text.NOT_READABLE))
        except UnsafePath:
            # A local server's answer outside telegram.local_files_dir (or through a
            # symlink): not the sender's file. Logged by reason only, never the path.
            return await self._refuse(message, "outside_local_files",
                                      texts.say(lang, Text.NOT_DOWNLOADABLE))
        if group is not None:
            await groups.file_into_space(accepted.record_id, group, owner_id=owner_id,
                                         readers=parts.readers, writer=parts.writer)
        log.info("telegram_record_stored", record_id=accepted.record_id,
                 created=accepted.created)
        first = texts.say(lang, Text.ACCEPTED)
        answer = await self._reply(message, first)
        if accepted.created:
            # The first answer becomes the record's living status message (bot/status.py);
            # without one the row still keeps the sender's language for the reply.
            await parts.writer.ask(NoteStatus(
                record_id=accepted.record_id, chat_id=message.chat.id,
                message_id=answer.message_id if answer is not None else None,
                language=lang, shown_text=first))
        return "accepted" if accepted.created else "repeated"

    def _download(self, file_path: str) -> AsyncGenerator[bytes]:
        """The file's bytes: read in place from a local Bot API server's disk, or over HTTP."""
        if self._settings.local_mode and PurePosixPath(file_path).is_absolute():
            root = self._settings.local_files_dir
            if root is None:  # the settings check requires it with local_mode
                raise UnsafePath("telegram.local_files_dir is not set")
            return local_file_chunks(root, file_path, DOWNLOAD_CHUNK_BYTES)
        return self._bot.session.stream_content(
            file_url(self._bot, file_path), timeout=self._settings.download_timeout_seconds,
            chunk_size=DOWNLOAD_CHUNK_BYTES, raise_for_status=True)

    async def _refuse(self, message: Message, reason: str, text: str) -> str:
        log.info("telegram_refused", chat_id=message.chat.id, message_id=message.message_id,
                 reason=reason)
        await self._reply(message, text)
        return f"refused_{reason}"

    async def _reply(self, message: Message, text: str) -> Message | None:
        """Best effort: an answer that does not go out must not hold the queue."""
        try:
            return await self._bot.send_message(
                message.chat.id, text,
                reply_parameters=ReplyParameters(message_id=message.message_id,
                                                 allow_sending_without_reply=True),
            )
        except rules.ANY_API_ERRORS as exc:
            log.warning("telegram_reply_failed", chat_id=message.chat.id,
                        message_id=message.message_id, error=type(exc).__name__)
            return None

