"""The `Notifier` port over the Bot API: transcripts and halt notices in the chat.

Every answer replies to the sender's original message (and still arrives if
that message was deleted). A transcript that fits one message (4096 UTF-16
units) is sent as text; a longer one is sent as a `.txt` document with a
short caption, so a six-hour recording does not flood the chat with a
hundred messages or run into Telegram's per-chat rate limits.

A send is tried `telegram.send_attempts` times on network errors, Telegram's
5xx and 429 (waiting its `retry_after`, when that is short); then it raises
`ReplyFailed`, which the delivery helper counts as undelivered (P6: it never
fails the step). A refusal (the sender blocked the bot, the chat is gone) is
not retried. Nothing of the text is logged.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import structlog
from aiogram import Bot
from aiogram.exceptions import TelegramAPIError, TelegramRetryAfter
from aiogram.types import BufferedInputFile, LinkPreviewOptions, ReplyParameters

from transcriber.bot import rules, texts
from transcriber.clock import Clock
from transcriber.errors import TranscriberError
from transcriber.ports import ReplyAddress, Undelivered
from transcriber.settings import TelegramSettings
from transcriber.stages import HaltReason

log = structlog.get_logger(__name__)

# Longer waits asked by a 429 are not sat out by a step actor: the reply is undelivered.
RETRY_AFTER_MAX_SECONDS = 30.0


class ReplyFailed(TranscriberError):
    """Telegram did not take the reply; `error` names the last failure's class."""

    def __init__(self, error: str) -> None:
        super().__init__(f"telegram refused or failed the reply ({error})")
        self.error = error


class TelegramNotifier:
    def __init__(self, bot: Bot, *, settings: TelegramSettings, clock: Clock) -> None:
        self._bot = bot
        self._settings = settings
        self._clock = clock

    async def send_transcript(self, address: ReplyAddress, text: str) -> None:
        chat_id, reply = _target(address)
        body = text.strip() or texts.EMPTY_TRANSCRIPT
        if rules.fits_in_message(body):
            await self._send(address, "transcript", lambda: self._bot.send_message(
                chat_id, body, reply_parameters=reply,
                link_preview_options=LinkPreviewOptions(is_disabled=True)))
            return
        document = BufferedInputFile(body.encode("utf-8"),
                                     filename=rules.transcript_file_name(address.record_id))
        caption = texts.TRANSCRIPT_AS_FILE.format(chars=len(body))
        await self._send(address, "transcript_file", lambda: self._bot.send_document(
            chat_id, document, caption=caption, reply_parameters=reply))

    async def send_halt_notice(self, address: ReplyAddress, reason: HaltReason) -> None:
        chat_id, reply = _target(address)
        await self._send(address, "halt_notice", lambda: self._bot.send_message(
            chat_id, texts.halt_notice(reason), reply_parameters=reply))

    async def _send(self, address: ReplyAddress, kind: str,
                    call: Callable[[], Awaitable[object]]) -> None:
        attempts = self._settings.send_attempts
        for attempt in range(1, attempts + 1):
            try:
                await call()
            except rules.TRANSIENT_API_ERRORS as exc:
                wait = rules.wait_before_retry(exc, attempt, base=self._settings.retry_base_seconds,
                                               cap=self._settings.retry_cap_seconds)
                last = attempt == attempts
                too_long = isinstance(exc, TelegramRetryAfter) and wait > RETRY_AFTER_MAX_SECONDS
                log.warning("telegram_send_failed", record_id=address.record_id, kind=kind,
                            attempt=attempt, error=type(exc).__name__,
                            retry_in=None if last or too_long else wait)
                if last or too_long:
                    raise ReplyFailed(type(exc).__name__) from None
                await self._clock.sleep(wait)
            except TelegramAPIError as exc:
                # Blocked by the user, chat not found, bad request: another try cannot help.
                log.warning("telegram_send_refused", record_id=address.record_id, kind=kind,
                            error=type(exc).__name__)
                raise ReplyFailed(type(exc).__name__) from None
            else:
                log.info("telegram_sent", record_id=address.record_id, kind=kind)
                return


def _target(address: ReplyAddress) -> tuple[int, ReplyParameters | None]:
    """The chat and the message to reply to (without one, a plain message)."""
    if address.tg_chat_id is None:
        raise Undelivered("chat_missing")
    if address.tg_message_id is None:
        return address.tg_chat_id, None
    return address.tg_chat_id, ReplyParameters(message_id=address.tg_message_id,
                                               allow_sending_without_reply=True)
