"""`/status`, `/last`, `/ask` and `/export`: the sender's records, answered from the archive.

`/start` and `/help` are plain answers decided in `rules`; these two read the
database. `/status` lists the sender's last five records with their stage
(or halt reason); `/last` sends the latest finished transcript again, as the
outbox would (text, or a `.txt` document when it does not fit a message),
directly: it is an answer to a command, not a delivery to make durable.
`/ask QUESTION` answers from the sender's own records (`ask.retrieval`: the
search's read): the model's answer when one is configured, then the passages'
marked sentences, each with its record's title, day and moment (docs/ask.md).
`/export docx|md|txt|srt [record id]` sends the latest transcript (or the named
record's, if it is the sender's) as a document made as the web app's download makes it
(`documents.render_bytes`: the current correction, the record's title, date, duration
and speaker names).

In a group linked to a space (`RunCommand.group`) the answer is about that space only,
never the sender's own records, and only when the sender is a member of the space
(what the group is told is what a member asked for): `/status` lists the space's last
five, `/ask` answers from what the sender may see within the space (`rules` keeps
`/last` and `/export`, which name the sender's own records, to a private chat).
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from datetime import date

import structlog
from aiogram import Bot
from aiogram.types import BufferedInputFile, Message, ReplyParameters

from transcriber.ask.answers import answer as ask_answer
from transcriber.ask.retrieval import retrieve
from transcriber.bot import rules, texts
from transcriber.bot.notifier import TelegramNotifier
from transcriber.bot.status import ProgressSource, StatusProgress, stage_text
from transcriber.bot.texts import T
from transcriber.core.clock import Clock
from transcriber.core.errors import QueryTooBroad, TranscriberError
from transcriber.db import reads
from transcriber.db.commands.users import EnsureUser
from transcriber.db.readers import ReaderPool
from transcriber.db.reads.telegram import RecentRecord
from transcriber.db.writer import Writer
from transcriber.domain import documents
from transcriber.domain.ask import QUESTION_MAX, AskScope, read_question
from transcriber.domain.transcripts import BadStructure
from transcriber.followups.reply import transcript_for_reply
from transcriber.ports import Answerer, ReplyAddress
from transcriber.settings import TelegramSettings

log = structlog.get_logger(__name__)

STATUS_RECORDS = 5
NAME_MAX_CHARS = 60

# The menu registered with setMyCommands, each with its description's text.
MENU: tuple[tuple[str, T], ...] = (
    ("start", T.COMMAND_START), ("help", T.COMMAND_HELP),
    ("status", T.COMMAND_STATUS), ("last", T.COMMAND_LAST), ("ask", T.COMMAND_ASK),
    ("export", T.COMMAND_EXPORT),
)
# The menu of group chats (setMyCommands' scope `all_group_chats`): linking a group to a
# space is what a group does here; the private commands answer in the private chat.
GROUP_MENU: tuple[tuple[str, T], ...] = (
    ("link", T.COMMAND_LINK), ("unlink", T.COMMAND_UNLINK), ("help", T.COMMAND_HELP),
)
ASK_PASSAGES = 5
"""Passages an `/ask` answer lists at most."""
MESSAGE_MAX_CHARS = 4000  # Telegram's limit is 4096


async def answer(bot: Bot, message: Message, decision: rules.RunCommand, *,
                 settings: TelegramSettings, readers: ReaderPool, writer: Writer,
                 clock: Clock, progress: ProgressSource | None = None,
                 answerer: Answerer | None = None, ask_prompt_chars: int = 12000) -> None:
    lang = decision.language
    user = await writer.ask(EnsureUser(login=decision.login))
    group = decision.group
    if group is not None and await reads.access.role_in_space(
            readers, space_id=group.space_id, user_id=user.id) is None:
        # The group hears about the space only when one of its members asks.
        await _send(bot, message, texts.say(lang, T.GROUP_MEMBERS_ONLY, space=group.space_name))
        return
    if decision.command == "/ask":
        await _send(bot, message, await ask_text(
            readers, owner_id=user.id, question=decision.argument, lang=lang,
            today=clock.now().date(), answerer=answerer, max_prompt_chars=ask_prompt_chars,
            space_id=None if group is None else group.space_id))
        return
    if decision.command == "/status":
        if group is not None:
            records = await reads.telegram.latest_of_space(readers, space_id=group.space_id,
                                                           limit=STATUS_RECORDS)
        else:
            records = await reads.telegram.latest_of_owner(readers, owner_id=user.id,
                                                           limit=STATUS_RECORDS)
        shown: dict[str, StatusProgress] = {}
        if progress is not None:
            for record in records:
                found = None if record.halted_at is not None else await progress(record.id)
                if found is not None:
                    shown[record.id] = found
        await _send(bot, message, status_list(
            lang, records, shown, space=None if group is None else group.space_name))
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


async def ask_text(readers: ReaderPool, *, owner_id: str, question: str,
                   lang: texts.Language, today: date, answerer: Answerer | None,
                   max_prompt_chars: int, space_id: str | None = None) -> str:
    """The `/ask` answer: the model's text (if any), then the passages' marked
    sentences (plain text: Telegram shows it as it is); with `space_id`, from that
    space's records only."""
    if not question:
        return texts.say(lang, T.ASK_EMPTY)
    try:
        read = read_question(question[:QUESTION_MAX], today=today,
                             scope=None if space_id is None else AskScope(space=space_id))
    except QueryTooBroad:
        return texts.say(lang, T.ASK_TOO_BROAD)
    found = await retrieve(readers, owner_id=owner_id, question=read)
    result = await ask_answer(read, found, answerer=answerer,
                              max_prompt_chars=max_prompt_chars)
    if not result.passages:
        return texts.say(lang, T.ASK_NONE)
    lines = [result.text, ""] if result.text else []
    for number, passage in enumerate(result.passages[:ASK_PASSAGES], start=1):
        seconds = passage.best.start_ms // 1000
        speaker = f" {passage.best.speaker}" if passage.best.speaker else ""
        lines.append(texts.say(
            lang, T.ASK_PASSAGE, number=number,
            title=(passage.title or texts.say(lang, T.UNTITLED))[:NAME_MAX_CHARS],
            day=passage.created_at[:10], speaker=speaker, quote=passage.quote,
            moment=f"{seconds // 3600:d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"))
    text = "\n".join(lines)
    return text if len(text) <= MESSAGE_MAX_CHARS else text[:MESSAGE_MAX_CHARS - 1] + "…"


def status_list(lang: texts.Language, records: Sequence[RecentRecord],
                progress: Mapping[str, StatusProgress] | None = None, *,
                space: str | None = None) -> str:
    """The `/status` answer: one line per record, newest first, with the
    recognition progress of those on their way (`space`: a group's space's records)."""
    if not records:
        return texts.say(lang, T.STATUS_NONE) if space is None \
            else texts.say(lang, T.GROUP_STATUS_NONE, space=space)
    lines = [texts.say(lang, T.STATUS_HEADER) if space is None
             else texts.say(lang, T.GROUP_STATUS_HEADER, space=space)]
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
    asked = rules.export_asked(decision.argument)
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
