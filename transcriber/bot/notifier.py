"""The `Notifier` port over the Bot API: transcripts and halt notices in the chat.

Every answer replies to the sender's original message (and still arrives if
that message was deleted). A transcript's reply starts with the record's
title (and, for a recording over a minute, its brief) when there is one. A
transcript that fits one message (4096 UTF-16 units) is sent as text; a
longer one is sent as a `.txt` document with a short caption, so a six-hour
recording does not flood the chat with a hundred messages or run into
Telegram's per-chat rate limits.

A send is tried `telegram.send_attempts` times on network errors, Telegram's
5xx and 429 (waiting its `retry_after`, when that is short); then it raises
`ReplyFailed` (transient: the outbox tries again later, with backoff). A
refusal another try cannot change raises `Undelivered`: 403 (the sender
blocked the bot) `blocked`, 400 "chat not found" `chat_not_found`, any other
4xx `refused`. The sent message's id is returned for the outbox row. Texts
come from the sender's catalogue (`address.language`). Nothing of the text
is logged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
from aiogram import Bot
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramForbiddenError,
    TelegramRetryAfter,
)
from aiogram.types import BufferedInputFile, LinkPreviewOptions, Message, ReplyParameters

from transcriber.bot import rules, texts
from transcriber.core.clock import Clock
from transcriber.core.errors import TransientFailure
from transcriber.domain.quality import Quality
from transcriber.domain.stages import HaltReason
from transcriber.ports import ReplyAddress, Undelivered, UndeliveredReason
from transcriber.settings import TelegramSettings

log = structlog.get_logger(__name__)

# Longer waits asked by a 429 are not sat out by a step actor: the reply is undelivered.
RETRY_AFTER_MAX_SECONDS = 30.0


class ReplyFailed(TransientFailure):
    """Telegram did not take the reply this time; `error` names the last failure's class."""

    def __init__(self, error: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"telegram failed the reply ({error})", retry_after=retry_after)
        self.error = error


class TelegramNotifier:
    def __init__(self, bot: Bot, *, settings: TelegramSettings, clock: Clock) -> None:
        self._bot = bot
        self._settings = settings
        self._clock = clock

    def _language(self, address: ReplyAddress) -> texts.Language:
        return texts.as_language(address.language, forced=self._settings.language)

    async def send_transcript(self, address: ReplyAddress, text: str, *, title: str = "",
                              brief: str = "", quality: Quality | None = None) -> int | None:
        chat_id, reply = _target(address)
        lang = self._language(address)
        warning = texts.quality_line(lang, quality)
        # A transcript not to be trusted says so first; an empty one is not "no speech
        # was recognised" when speech was heard and could not be made out.
        said = text.strip()
        if warning:
            body = f"{warning}\n\n{said}" if said else warning
        else:
            body = said or texts.say(lang, texts.T.EMPTY_TRANSCRIPT)
        head = rules.heading(title, brief)
        whole = rules.with_heading(head, body)
        if rules.fits_in_message(whole):
            return await self._send(address, "transcript", lambda: self._bot.send_message(
                chat_id, whole, reply_parameters=reply,
                link_preview_options=LinkPreviewOptions(is_disabled=True)))
        # The file is the transcript under its title (as the TXT export); the caption
        # carries the heading, so the chat shows what the recording is about.
        document = BufferedInputFile(rules.with_heading(title.strip(), body).encode("utf-8"),
                                     filename=rules.transcript_file_name(address.record_id))
        caption = rules.caption(head, texts.say(lang, texts.T.TRANSCRIPT_AS_FILE,
                                                chars=len(body)))
        return await self._send(address, "transcript_file", lambda: self._bot.send_document(
            chat_id, document, caption=caption, reply_parameters=reply))

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> int | None:
        chat_id, reply = _target(address)
        text = texts.halt_notice(self._language(address), reason)
        return await self._send(address, "halt_notice", lambda: self._bot.send_message(
            chat_id, text, reply_parameters=reply))

    async def _send(self, address: ReplyAddress, kind: str,
                    call: Callable[[], Awaitable[Message]]) -> int | None:
        attempts = self._settings.send_attempts
        for attempt in range(1, attempts + 1):
            try:
                sent = await call()
            except rules.TRANSIENT_API_ERRORS as exc:
                wait = rules.wait_before_retry(exc, attempt, base=self._settings.retry_base_seconds,
                                               cap=self._settings.retry_cap_seconds)
                last = attempt == attempts
                too_long = isinstance(exc, TelegramRetryAfter) and wait > RETRY_AFTER_MAX_SECONDS
                log.warning("telegram_send_failed", record_id=address.record_id, kind=kind,
                            attempt=attempt, error=type(exc).__name__,
                            retry_in=None if last or too_long else wait)
                if last or too_long:
                    asked = float(exc.retry_after) if isinstance(exc, TelegramRetryAfter) else None
                    raise ReplyFailed(type(exc).__name__, retry_after=asked) from None
                await self._clock.sleep(wait)
            except TelegramAPIError as exc:
                reason = refusal_reason(exc)
                log.warning("telegram_send_refused", record_id=address.record_id, kind=kind,
                            error=type(exc).__name__, reason=reason)
                raise Undelivered(reason) from None
            else:
                log.info("telegram_sent", record_id=address.record_id, kind=kind)
                return sent.message_id
        raise AssertionError("unreachable: the last attempt raises")  # pragma: no cover


def refusal_reason(error: TelegramAPIError) -> UndeliveredReason:
    """A permanent refusal by its kind (no text of Telegram's answer is kept)."""
    if isinstance(error, TelegramForbiddenError):
        return "blocked"
    if isinstance(error, TelegramBadRequest) and "chat not found" in error.message.lower():
        return "chat_not_found"
    return "refused"


def _target(address: ReplyAddress) -> tuple[int, ReplyParameters | None]:
    """The chat and the message to reply to (without one, a plain message)."""
    if address.tg_chat_id is None:
        raise Undelivered("chat_missing")
    if address.tg_message_id is None:
        return address.tg_chat_id, None
    return address.tg_chat_id, ReplyParameters(message_id=address.tg_message_id,
                                               allow_sending_without_reply=True)
