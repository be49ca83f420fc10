"""`/status`, `/last` and `/export`: the sender's records, answered from the archive.

`/start` and `/help` are plain answers decided in `rules`; these two read the
database. `/status` lists the sender's last five records with their stage
(or halt reason); `/last` sends the latest finished transcript again, as the
outbox would (text, or a `.txt` document when it does not fit a message),
directly: it is an answer to a command, not a delivery to make durable.
`/export docx|md|txt|srt [record id]` sends the latest transcript (or the named
record's, if it is the sender's) as a document made as the web app's download makes it
(`documents.render_bytes`: the current correction, the record's title, date, duration
and speaker names).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence

import structlog
from aiogram import Bot
from aiogram.types import BufferedInputFile, Message, ReplyParameters

from transcriber.bot import rules, texts
from transcriber.bot.notifier import TelegramNotifier
from transcriber.bot.status import ProgressSource, StatusProgress, stage_text
from transcriber.bot.texts import T
from transcriber.core.clock import Clock
from transcriber.core.errors import TranscriberError
from transcriber.db import reads
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.telegram import RecentRecord
from transcriber.db.writer import Writer
from transcriber.domain import documents
from transcriber.domain.transcripts import BadStructure
from transcriber.followups.reply import transcript_for_reply
from transcriber.ports import ReplyAddress
from transcriber.settings import TelegramSettings

log = structlog.get_logger(__name__)

STATUS_RECORDS = 5
NAME_MAX_CHARS = 60

# The menu registered with setMyCommands, each with its description's text.
MENU: tuple[tuple[str, T], ...] = (
    ("start", T.COMMAND_START), ("help", T.COMMAND_HELP),
    ("status", T.COMMAND_STATUS), ("last", T.COMMAND_LAST), ("export", T.COMMAND_EXPORT),
)


async def answer(bot: Bot, message: Message, decision: rules.RunCommand, *,
                 settings: TelegramSettings, readers: ReaderPool, writer: Writer,
                 clock: Clock, progress: ProgressSource | None = None) -> None:
    lang = decision.language
    user = await writer.ask(EnsureUser(login=decision.login))
    if decision.command == "/status":
        records = await reads.telegram.latest_of_owner(readers, owner_id=user.id,
                                                       limit=STATUS_RECORDS)
        shown: dict[str, StatusProgress] = {}
        if progress is not None:
            for record in records:
                found = None if record.halted_at is not None else await progress(record.id)
                if found is not None:
                    shown[record.id] = found
        await _send(bot, message, status_list(lang, records, shown))
        return
    if decision.command == "/export":
        await export(bot, message, decision, user_id=user.id, readers=readers)
        return
    latest = await reads.telegram.latest_transcript(readers, owner_id=user.id)
    if latest is None:
        await _send(bot, message, texts.say(lang, T.LAST_NONE))
        return
    record_id = latest.record_id
    address = ReplyAddress(record_id=record_id, source="telegram", tg_chat_id=message.chat.id,
                           tg_message_id=message.message_id, language=lang)
    notifier = TelegramNotifier(bot, settings=settings, clock=clock)
    try:
        await notifier.send_transcript(address, await transcript_for_reply(readers, record_id))
    except TranscriberError as exc:
        log.warning("telegram_last_not_sent", record_id=record_id, error=type(exc).__name__)


def status_list(lang: texts.Language, records: Sequence[RecentRecord],
                progress: Mapping[str, StatusProgress] | None = None) -> str:
    """The `/status` answer: one line per record, newest first, with the
    recognition progress of those on their way."""
    if not records:
        return texts.say(lang, T.STATUS_NONE)
    lines = [texts.say(lang, T.STATUS_HEADER)]
    for record in records:
        name = record.title or record.original_filename or texts.say(lang, T.UNTITLED)
        if len(name) > NAME_MAX_CHARS:
            name = name[:NAME_MAX_CHARS - 1] + "…"
        stage = stage_text(lang, state=record.state, halted=record.halted_at is not None,
                           halt_reason=record.halt_reason,
                           progress=(progress or {}).get(record.id))
        lines.append(texts.say(lang, T.STATUS_LINE, name=name, stage=stage))
    return "\n".join(lines)


async def export(bot: Bot, message: Message, decision: rules.RunCommand, *, user_id: str,
                 readers: ReaderPool) -> None:
    """`/export`: the asked record's transcript as a document, or why not."""
    lang = decision.language
    asked = rules.export_asked(decision.arguments)
    if asked is None:
        await _send(bot, message, texts.say(lang, T.EXPORT_USAGE))
        return
    record_id = asked.record_id
    if record_id is None:
        latest = await reads.telegram.latest_transcript(readers, owner_id=user_id)
        if latest is None:
            await _send(bot, message, texts.say(lang, T.LAST_NONE))
            return
        record_id = latest.record_id
    record = await reads.records.card(readers, record_id=record_id, owner_id=user_id)
    if record is None:
        await _send(bot, message, texts.say(lang, T.EXPORT_NONE))
        return
    try:
        utterances = await reads.transcripts.utterances(readers, record_id=record_id)
    except BadStructure:
        log.error("transcript_bad_structure", record_id=record_id)
        utterances = None
    if utterances is None:
        await _send(bot, message, texts.say(lang, T.EXPORT_NOT_READY))
        return
    quality = None if record.quality is None else record.quality.as_dict()
    body = await asyncio.to_thread(
        documents.render_bytes, utterances, asked.fmt, record.speaker_names,
        title=record.title, quality=quality, date=record.created_at,
        duration_ms=record.duration_ms)
    try:
        await bot.send_document(
            message.chat.id, BufferedInputFile(body, f"transcript-{record_id}.{asked.fmt}"),
            reply_parameters=ReplyParameters(message_id=message.message_id,
                                             allow_sending_without_reply=True))
    except rules.ANY_API_ERRORS as exc:
        log.warning("telegram_export_failed", record_id=record_id, error=type(exc).__name__)
        return
    log.info("telegram_exported", record_id=record_id, format=asked.fmt)


async def _send(bot: Bot, message: Message, text: str) -> None:
    try:
        await bot.send_message(message.chat.id, text, reply_parameters=ReplyParameters(
            message_id=message.message_id, allow_sending_without_reply=True))
    except rules.ANY_API_ERRORS as exc:
        log.warning("telegram_reply_failed", chat_id=message.chat.id,
                    message_id=message.message_id, error=type(exc).__name__)
