"""Everything the bot says, per language (plain text: nothing is parsed as markup).

Two catalogues, English and Russian, keyed by `T`; `tests/unit/bot/test_texts.py`
fails on a key missing from either, or on a text whose `{fields}` differ
between them. The language of a sender comes from their Telegram
`language_code` (`language_for`), unless `telegram.language` forces one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import StrEnum
from typing import Literal

from transcriber.domain.quality import Quality
from transcriber.domain.stages import HaltReason
from transcriber.ports import Span

Language = Literal["ru", "en"]
LANGUAGES: tuple[Language, ...] = ("en", "ru")
# Senders whose Telegram is set to one of these read Russian most easily.
RUSSIAN_READERS = frozenset({"ru", "uk", "be", "kk"})


class T(StrEnum):
    ACCEPTED = "accepted"
    HELP = "help"
    NOT_ALLOWED = "not_allowed"
    NOT_AUDIO = "not_audio"
    NOT_READABLE = "not_readable"
    EMPTY = "empty"
    TOO_LARGE = "too_large"
    TOO_LONG = "too_long"
    SAMPLE_RATE_TOO_LOW = "sample_rate_too_low"
    SAMPLE_RATE_TOO_HIGH = "sample_rate_too_high"
    TOO_MANY_CHANNELS = "too_many_channels"
    QUOTA_EXCEEDED = "quota_exceeded"
    NOT_DOWNLOADABLE = "not_downloadable"
    TRY_AGAIN = "try_again"
    STORAGE_FULL = "storage_full"
    EMPTY_TRANSCRIPT = "empty_transcript"
    QUALITY_UNCLEAR = "quality_unclear"
    QUALITY_UNSURE = "quality_unsure"
    QUALITY_POOR = "quality_poor"
    QUALITY_NO_TEXT = "quality_no_text"
    TRANSCRIPT_AS_FILE = "transcript_as_file"
    HALT_NOTICE = "halt_notice"
    HALT_STEP_FAILED = "halt_step_failed"
    HALT_ATTEMPTS_EXHAUSTED = "halt_attempts_exhausted"
    HALT_STUCK = "halt_stuck"
    HALT_UNKNOWN = "halt_unknown"
    STAGE_UPLOADED = "stage_uploaded"
    STAGE_PREPARING = "stage_preparing"
    STAGE_NORMALIZED = "stage_normalized"
    STAGE_SUBMITTED = "stage_submitted"
    STAGE_TRANSCRIBED = "stage_transcribed"
    STAGE_DONE = "stage_done"
    STAGE_HALTED = "stage_halted"
    STATUS_MESSAGE = "status_message"
    PROGRESS = "progress"
    PROGRESS_ETA = "progress_eta"
    STATUS_HEADER = "status_header"
    STATUS_LINE = "status_line"
    STATUS_NONE = "status_none"
    LAST_NONE = "last_none"
    UNTITLED = "untitled"
    COMMAND_START = "command_start"
    COMMAND_HELP = "command_help"
    COMMAND_STATUS = "command_status"
    COMMAND_LAST = "command_last"
    COMMAND_ASK = "command_ask"
    ASK_EMPTY = "ask_empty"
    ASK_NONE = "ask_none"
    ASK_PASSAGE = "ask_passage"
    ASK_TOO_BROAD = "ask_too_broad"
    COMMAND_EXPORT = "command_export"
    EXPORT_USAGE = "export_usage"
    EXPORT_NONE = "export_none"
    EXPORT_NOT_READY = "export_not_ready"
    MEGABYTES = "megabytes"
    GIGABYTES = "gigabytes"
    HOURS = "hours"
    MINUTES = "minutes"
    SECONDS = "seconds"


EN: Mapping[T, str] = {
    T.ACCEPTED: "Accepted, transcribing… I will reply here with the transcript.",
    T.HELP: (
        "Send me a voice message, an audio file or an audio document (up to {limit}) "
        "and I will reply with its transcript. Your recordings also appear in the web "
        "archive.\n\n/status — your last five recordings\n/last — the latest transcript again\n"
        "/ask QUESTION — where your recordings say it\n"
        "/export docx|md|txt|srt — the latest transcript as a document"
    ),
    T.NOT_ALLOWED: (
        "Sorry, this bot transcribes recordings only for the people its owner has listed. "
        "If you should have access, ask the owner to add your Telegram id {user_id}."
    ),
    T.NOT_AUDIO: (
        "I can only transcribe voice messages, audio files and audio documents "
        "(mp3, m4a, ogg, opus, wav, flac, …). Nothing was stored."
    ),
    T.NOT_READABLE: "This file does not contain audio I can read. Nothing was stored.",
    T.EMPTY: "This file is empty. Nothing was stored.",
    T.TOO_LARGE: (
        "This file is larger than {limit}, the most this bot may download. "
        "Please upload it through the web archive instead, or send a shorter or more "
        "compressed recording."
    ),
    T.TOO_LONG: (
        "This recording is longer than {limit}, the longest I transcribe. Nothing was stored. "
        "Please send it in shorter pieces."
    ),
    T.SAMPLE_RATE_TOO_LOW: (
        "This recording is sampled too coarsely to carry speech (below 8 kHz). "
        "Nothing was stored."
    ),
    T.SAMPLE_RATE_TOO_HIGH: (
        "This recording is sampled faster than I take (above {limit} kHz). "
        "Nothing was stored. Please convert it to an ordinary rate such as 48 kHz."
    ),
    T.TOO_MANY_CHANNELS: (
        "This recording has more channels than I take (more than {limit}). "
        "Nothing was stored. Please send a mono or stereo copy."
    ),
    T.QUOTA_EXCEEDED: (
        "Your recordings still waiting to be transcribed already hold {queued} of audio; "
        "with this one they would pass the limit of {limit}. Nothing was stored. "
        "Please send it again when some of them are done."
    ),
    T.NOT_DOWNLOADABLE: "Telegram did not let me download this file. Nothing was stored.",
    T.TRY_AGAIN: (
        "I could not take this recording in right now (a temporary problem). "
        "Please send it again in a few minutes."
    ),
    T.STORAGE_FULL: (
        "The archive has no room for this recording right now. Nothing was stored. "
        "Please send it again later; the service owner has been told."
    ),
    T.EMPTY_TRANSCRIPT: "The recording is transcribed, but no speech was recognised in it.",
    T.QUALITY_UNCLEAR: "⚠ Parts of this recording were unclear: {spans} — listen there.",
    T.QUALITY_UNSURE: "⚠ Parts of this text may be wrong (the recognizer was unsure of "
                      "them): check them against the recording.",
    T.QUALITY_POOR: "⚠ Most of the speech in this recording was unclear, so this text is "
                    "incomplete: {spans}.",
    T.QUALITY_NO_TEXT: "⚠ There is speech in this recording, but none of it could be made "
                       "out.",
    T.TRANSCRIPT_AS_FILE: (
        "The transcript is too long for a message ({chars} characters), "
        "so it is attached as a file."
    ),
    T.HALT_NOTICE: (
        "Sorry, I could not transcribe this recording: {why}. "
        "The service owner has been told and can retry it."
    ),
    T.HALT_STEP_FAILED: (
        "the recording could not be processed (the file may be damaged or not supported)"
    ),
    T.HALT_ATTEMPTS_EXHAUSTED: "transcription kept failing after several attempts",
    T.HALT_STUCK: "transcription took far longer than it should",
    T.HALT_UNKNOWN: "an unexpected problem",
    T.STAGE_UPLOADED: "received, waiting to be prepared",
    T.STAGE_PREPARING: "being prepared",
    T.STAGE_NORMALIZED: "prepared, waiting for recognition",
    T.STAGE_SUBMITTED: "being recognised",
    T.STAGE_TRANSCRIBED: "recognised, finishing",
    T.STAGE_DONE: "done",
    T.STAGE_HALTED: "stopped: {why}",
    T.STATUS_MESSAGE: "Recording: {stage}",
    T.PROGRESS: "{stage}, {percent}%",
    T.PROGRESS_ETA: "{stage}, {percent}%, about {eta} left",
    T.STATUS_HEADER: "Your latest recordings:",
    T.STATUS_LINE: "• {name} — {stage}",
    T.STATUS_NONE: "You have no recordings yet. Send me a voice message or an audio file.",
    T.LAST_NONE: "You have no finished transcript yet.",
    T.UNTITLED: "untitled recording",
    T.COMMAND_START: "What this bot does",
    T.COMMAND_HELP: "How to use it and the size limit",
    T.COMMAND_STATUS: "Your last five recordings",
    T.COMMAND_LAST: "The latest transcript again",
    T.COMMAND_ASK: "Ask your recordings a question",
    T.ASK_EMPTY: "Write the question after the command: /ask what did we decide about the "
                 "supplier?",
    T.ASK_NONE: "Nothing in your recordings answers this.",
    T.ASK_PASSAGE: "[{number}] {title}, {day}, {moment}{speaker}: «{quote}»",
    T.ASK_TOO_BROAD: "The question has a word typed in part that is too short (word*).",
    T.COMMAND_EXPORT: "The latest transcript as a document: docx, md, txt or srt",
    T.EXPORT_USAGE: ("Send /export with a format: docx, md, txt or srt, and optionally a "
                     "record's id, e.g. /export docx"),
    T.EXPORT_NONE: "There is no such recording of yours.",
    T.EXPORT_NOT_READY: "That recording has no transcript yet.",
    T.MEGABYTES: "{n} MB",
    T.GIGABYTES: "{n} GB",
    T.HOURS: "{n} h",
    T.MINUTES: "{n} min",
    T.SECONDS: "{n} s",
}

RU: Mapping[T, str] = {
    T.ACCEPTED: "Принято, расшифровываю… Пришлю расшифровку ответом сюда.",
    T.HELP: (
        "Пришлите голосовое сообщение, аудиофайл или аудиодокумент (до {limit}), "
        "и я отвечу его расшифровкой. Ваши записи также появляются в веб-архиве.\n\n"
        "/status — пять последних записей\n/last — последняя расшифровка ещё раз\n"
        "/ask ВОПРОС — где в ваших записях об этом говорилось\n"
        "/export docx|md|txt|srt — последняя расшифровка документом"
    ),
    T.NOT_ALLOWED: (
        "Извините, этот бот расшифровывает записи только для тех, кого указал его владелец. "
        "Если у вас должен быть доступ, попросите владельца добавить ваш Telegram id {user_id}."
    ),
    T.NOT_AUDIO: (
        "Я расшифровываю только голосовые сообщения, аудиофайлы и аудиодокументы "
        "(mp3, m4a, ogg, opus, wav, flac, …). Ничего не сохранено."
    ),
    T.NOT_READABLE: "В этом файле нет звука, который я могу прочитать. Ничего не сохранено.",
    T.EMPTY: "Этот файл пуст. Ничего не сохранено.",
    T.TOO_LARGE: (
        "Этот файл больше {limit} — это предел, который бот может скачать. "
        "Загрузите его через веб-архив или пришлите запись короче или сильнее сжатую."
    ),
    T.TOO_LONG: (
        "Эта запись длиннее {limit} — это самая длинная запись, которую я расшифровываю. "
        "Ничего не сохранено. Пришлите её частями покороче."
    ),
    T.SAMPLE_RATE_TOO_LOW: (
        "У этой записи слишком низкая частота дискретизации для речи (ниже 8 кГц). "
        "Ничего не сохранено."
    ),
    T.SAMPLE_RATE_TOO_HIGH: (
        "У этой записи слишком высокая частота дискретизации (выше {limit} кГц). "
        "Ничего не сохранено. Перекодируйте её в обычную частоту, например 48 кГц."
    ),
    T.TOO_MANY_CHANNELS: (
        "В этой записи больше каналов, чем я принимаю (больше {limit}). "
        "Ничего не сохранено. Пришлите моно- или стереокопию."
    ),
    T.QUOTA_EXCEEDED: (
        "Ваши записи, ещё ждущие расшифровки, уже содержат {queued} звука; "
        "с этой они превысят предел в {limit}. Ничего не сохранено. "
        "Пришлите её снова, когда часть из них будет готова."
    ),
    T.NOT_DOWNLOADABLE: "Telegram не дал мне скачать этот файл. Ничего не сохранено.",
    T.TRY_AGAIN: (
        "Сейчас я не смог принять эту запись (временная неполадка). "
        "Пришлите её ещё раз через несколько минут."
    ),
    T.STORAGE_FULL: (
        "Сейчас в архиве нет места для этой записи. Ничего не сохранено. "
        "Пришлите её позже; владелец сервиса уже знает."
    ),
    T.EMPTY_TRANSCRIPT: "Запись расшифрована, но речи в ней не найдено.",
    T.QUALITY_UNCLEAR: "⚠ Некоторые места записи неразборчивы: {spans} — послушайте их.",
    T.QUALITY_UNSURE: "⚠ В части текста распознаватель не уверен: сверьте её с записью.",
    T.QUALITY_POOR: "⚠ Большая часть речи в записи неразборчива, поэтому текст неполный: "
                    "{spans}.",
    T.QUALITY_NO_TEXT: "⚠ В записи есть речь, но разобрать её не удалось.",
    T.TRANSCRIPT_AS_FILE: (
        "Расшифровка слишком длинная для сообщения ({chars} символов), поэтому она во вложении."
    ),
    T.HALT_NOTICE: (
        "Извините, не получилось расшифровать эту запись: {why}. "
        "Владелец сервиса уже знает и может запустить её снова."
    ),
    T.HALT_STEP_FAILED: (
        "запись не удалось обработать (файл может быть повреждён или не поддерживается)"
    ),
    T.HALT_ATTEMPTS_EXHAUSTED: "расшифровка не удалась после нескольких попыток",
    T.HALT_STUCK: "расшифровка шла намного дольше, чем должна",
    T.HALT_UNKNOWN: "непредвиденная неполадка",
    T.STAGE_UPLOADED: "получена, ждёт подготовки",
    T.STAGE_PREPARING: "готовится",
    T.STAGE_NORMALIZED: "подготовлена, ждёт распознавания",
    T.STAGE_SUBMITTED: "распознаётся",
    T.STAGE_TRANSCRIBED: "распознана, завершаю",
    T.STAGE_DONE: "готово",
    T.STAGE_HALTED: "остановлена: {why}",
    T.STATUS_MESSAGE: "Запись: {stage}",
    T.PROGRESS: "{stage}, {percent}%",
    T.PROGRESS_ETA: "{stage}, {percent}%, осталось около {eta}",
    T.STATUS_HEADER: "Ваши последние записи:",
    T.STATUS_LINE: "• {name} — {stage}",
    T.STATUS_NONE: "У вас пока нет записей. Пришлите голосовое сообщение или аудиофайл.",
    T.LAST_NONE: "У вас пока нет готовой расшифровки.",
    T.UNTITLED: "запись без названия",
    T.COMMAND_START: "Что умеет этот бот",
    T.COMMAND_HELP: "Как пользоваться и предел размера",
    T.COMMAND_STATUS: "Пять последних записей",
    T.COMMAND_LAST: "Последняя расшифровка ещё раз",
    T.COMMAND_ASK: "Спросить свои записи",
    T.ASK_EMPTY: "Напишите вопрос после команды: /ask что решили про поставщика?",
    T.ASK_NONE: "В ваших записях ответа на это нет.",
    T.ASK_PASSAGE: "[{number}] {title}, {day}, в {moment}{speaker}: «{quote}»",
    T.ASK_TOO_BROAD: "В вопросе слишком короткое слово с * (слово*).",
    T.COMMAND_EXPORT: "Последняя расшифровка документом: docx, md, txt или srt",
    T.EXPORT_USAGE: ("Отправьте /export с форматом: docx, md, txt или srt, и, если нужно, "
                     "id записи, например /export docx"),
    T.EXPORT_NONE: "У вас нет такой записи.",
    T.EXPORT_NOT_READY: "У этой записи ещё нет расшифровки.",
    T.MEGABYTES: "{n} МБ",
    T.GIGABYTES: "{n} ГБ",
    T.HOURS: "{n} ч",
    T.MINUTES: "{n} мин",
    T.SECONDS: "{n} с",
}

CATALOGUES: Mapping[Language, Mapping[T, str]] = {"en": EN, "ru": RU}

_HALTS = {
    HaltReason.STEP_FAILED: T.HALT_STEP_FAILED,
    HaltReason.ATTEMPTS_EXHAUSTED: T.HALT_ATTEMPTS_EXHAUSTED,
    HaltReason.STUCK: T.HALT_STUCK,
}


def language_for(language_code: str | None, *, forced: str = "") -> Language:
    """Russian for `ru`, `uk`, `be`, `kk` (any region), English otherwise."""
    if forced in LANGUAGES:
        return "ru" if forced == "ru" else "en"
    base = (language_code or "").split("-")[0].lower()
    return "ru" if base in RUSSIAN_READERS else "en"


def as_language(value: str, *, forced: str = "") -> Language:
    """A stored catalogue name back to a `Language` (empty: the default)."""
    if forced in LANGUAGES:
        return "ru" if forced == "ru" else "en"
    return "ru" if value == "ru" else "en"


def say(lang: Language, key: T, **fields: object) -> str:
    text = CATALOGUES[lang][key]
    return text.format(**fields) if fields else text


def halt_reason_text(lang: Language, reason: str | None) -> str:
    try:
        key = _HALTS[HaltReason(reason or "")]
    except (ValueError, KeyError):
        key = T.HALT_UNKNOWN
    return say(lang, key)


def halt_notice(lang: Language, reason: HaltReason) -> str:
    return say(lang, T.HALT_NOTICE, why=halt_reason_text(lang, reason))


# The spans a reply names (the card lists them all).
REPLY_SPANS_MAX = 3


def clock_time(ms: int) -> str:
    """`m:ss` (`h:mm:ss` from an hour): how a player shows a position."""
    minutes, seconds = divmod(max(ms, 0) // 1000, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


def spans_text(spans: Sequence[Span]) -> str:
    shown = ", ".join(f"{clock_time(s.start_ms)}–{clock_time(s.end_ms)}"
                      for s in spans[:REPLY_SPANS_MAX])
    return shown + (", …" if len(spans) > REPLY_SPANS_MAX else "")


def quality_line(lang: Language, quality: Quality | None) -> str:
    """The reply's one line about a transcript not to be trusted ("" when it is good
    or has no report): where it was unclear, or why it is not to be relied on."""
    if quality is None or quality.verdict == "good":
        return ""
    if "no_text" in quality.reasons:
        return say(lang, T.QUALITY_NO_TEXT)
    spans = spans_text(quality.unclear_spans)
    if quality.verdict == "poor":
        return say(lang, T.QUALITY_POOR, spans=spans)
    if quality.unclear_spans:
        return say(lang, T.QUALITY_UNCLEAR, spans=spans)
    return say(lang, T.QUALITY_UNSURE)


def megabytes(lang: Language, size_bytes: int) -> str:
    if size_bytes >= 1024 ** 3:
        return say(lang, T.GIGABYTES, n=f"{size_bytes / 1024 ** 3:g}")
    return say(lang, T.MEGABYTES, n=f"{size_bytes / (1024 * 1024):g}")


def duration(lang: Language, seconds: float) -> str:
    if seconds >= 3600:
        return say(lang, T.HOURS, n=f"{seconds / 3600:.3g}")
    if seconds >= 60:
        return say(lang, T.MINUTES, n=f"{round(seconds / 60):d}")
    return say(lang, T.SECONDS, n=f"{round(seconds):d}")


def hours(lang: Language, seconds: int) -> str:
    if seconds >= 3600:
        return say(lang, T.HOURS, n=f"{seconds / 3600:g}")
    return say(lang, T.SECONDS, n=f"{seconds:g}")


def audio_refused(lang: Language, refusal: str, max_seconds: int, *,
                  max_sample_rate: int = 192000, max_channels: int = 8) -> str:
    """The answer to readable audio refused at intake (`intake.Refusal`)."""
    if refusal == "too_long":
        return say(lang, T.TOO_LONG, limit=hours(lang, max_seconds))
    if refusal == "sample_rate_too_high":
        return say(lang, T.SAMPLE_RATE_TOO_HIGH, limit=f"{max_sample_rate / 1000:g}")
    if refusal == "too_many_channels":
        return say(lang, T.TOO_MANY_CHANNELS, limit=max_channels)
    return say(lang, T.SAMPLE_RATE_TOO_LOW)


def quota_exceeded(lang: Language, queued_ms: int, limit_ms: int) -> str:
    return say(lang, T.QUOTA_EXCEEDED, queued=duration(lang, queued_ms / 1000),
               limit=hours(lang, limit_ms // 1000))


def too_large(lang: Language, max_bytes: int) -> str:
    return say(lang, T.TOO_LARGE, limit=megabytes(lang, max_bytes))


def help_text(lang: Language, max_bytes: int) -> str:
    return say(lang, T.HELP, limit=megabytes(lang, max_bytes))
