"""Everything the bot says, per language (plain text: nothing is parsed as markup).

The keys are `T` (`text_keys`); the two catalogues, English (`texts_en`) and
Russian (`texts_ru`), fill them in, one module each, so a translator reads one
language whole. `tests/unit/bot/test_texts.py` fails on a key missing from
either, or on a text whose `{fields}` differ between them. This module picks
the language and fills the fields: the language of a sender comes from their
Telegram `language_code` (`language_for`), unless `telegram.language` forces
one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from transcriber.bot.text_keys import T
from transcriber.bot.texts_en import EN
from transcriber.bot.texts_ru import RU
from transcriber.domain.quality import Quality
from transcriber.domain.stages import HaltReason
from transcriber.ports import Span

Language = Literal["ru", "en"]
LANGUAGES: tuple[Language, ...] = ("en", "ru")
# Senders whose Telegram is set to one of these read Russian most easily.
RUSSIAN_READERS = frozenset({"ru", "uk", "be", "kk"})

# The keys and catalogues are named through this module by every door module.
__all__ = [
    "CATALOGUES", "EN", "LANGUAGES", "REPLY_SPANS_MAX", "RU", "RUSSIAN_READERS", "Language",
    "T", "as_language", "audio_refused", "clock_time", "duration", "group_help",
    "halt_notice", "halt_reason_text", "help_text", "hours", "language_for", "megabytes",
    "quality_line", "quota_exceeded", "say", "spans_text", "too_large",
]

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


def group_help(lang: Language, max_bytes: int) -> str:
    return say(lang, T.GROUP_HELP, limit=megabytes(lang, max_bytes))
