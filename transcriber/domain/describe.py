"""What a record's description may hold, and the rules every describer's answer is fitted
to before it is stored (pure; docs/describer.md).

A description is a title (one line, at most `TITLE_MAX` characters), a brief (one
to three sentences, at most `BRIEF_MAX`) and at most `TOPICS_MAX` topics (each a
name of at most `TOPIC_NAME_MAX`), the owner's existing topics preferred. The same
functions fit the extractive describer's output and a language model's answer, so
both land within the same limits, free of characters a typed title would be refused
for (`domain.text`: control, format and separator characters).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from transcriber.domain.search import fold, words

TITLE_MAX = 80
BRIEF_MAX = 400
BRIEF_SENTENCES_MAX = 3
TOPICS_MAX = 5
TOPIC_NAME_MAX = 64
REPLY_BRIEF_AFTER_MS = 60_000
"""The Telegram reply carries the brief only for recordings longer than this."""

DescriptionOrigin = Literal["auto", "human"]
FIELDS = ("title", "brief", "topics")

_REFUSED_CATEGORIES = frozenset({"Cc", "Cs", "Zl", "Zp", "Cf"})
_JOINERS = frozenset({"\u200c", "\u200d"})
_SENTENCE_END_RE = re.compile(r"(?<=[.!?…])\s+")
_TRAILING_RE = re.compile(r"[\s.,;:!?…\-–—\"'«»()]+$")
_LEADING_RE = re.compile(r"^[\s.,;:!?…\-–—\"'«»)]+")


@dataclass(frozen=True, slots=True, kw_only=True)
class Description:
    """What a describer answers (already fitted by `fitted`), and who wrote it."""

    title: str
    brief: str
    topics: tuple[str, ...]
    by: str
    """`extractive`, or `openai:<model>`."""


def clean(text: str) -> str:
    """One line of shown text: characters a person could not type into the field go,
    every run of white space becomes one space."""
    kept = "".join(" " if (unicodedata.category(ch) in _REFUSED_CATEGORIES
                           and ch not in _JOINERS) else ch for ch in text)
    return " ".join(kept.split())


def _cut_words(text: str, limit: int) -> str:
    """`text` cut at the last word boundary within `limit` characters."""
    if len(text) <= limit:
        return text
    cut = text[:limit + 1]
    space = cut.rfind(" ")
    return (cut[:space] if space > limit // 3 else text[:limit]).rstrip()


def fit_title(text: str) -> str:
    """A title: one clean line, no closing punctuation, cut at a word within `TITLE_MAX`,
    its first letter capital."""
    line = _LEADING_RE.sub("", clean(text))
    line = _TRAILING_RE.sub("", _cut_words(line, TITLE_MAX))
    return line[:1].upper() + line[1:]


def sentences(text: str) -> list[str]:
    """The sentences of a clean text (split after . ! ? … and white space)."""
    return [part for part in _SENTENCE_END_RE.split(clean(text)) if part]


def fit_brief(text: str) -> str:
    """A brief: at most `BRIEF_SENTENCES_MAX` whole sentences within `BRIEF_MAX`, its first
    letter capital; a first sentence longer than that is cut at a word and ends with …"""
    brief = _fit_brief(text)
    return brief[:1].upper() + brief[1:]


def _fit_brief(text: str) -> str:
    kept: list[str] = []
    length = 0
    for sentence in sentences(text)[:BRIEF_SENTENCES_MAX]:
        extra = len(sentence) + (1 if kept else 0)
        if length + extra > BRIEF_MAX:
            break
        kept.append(sentence)
        length += extra
    if kept:
        return " ".join(kept)
    whole = clean(text)
    if not whole:
        return ""
    return _cut_words(whole, BRIEF_MAX - 1).rstrip(" ,;:") + "…"


def topic_key(name: str) -> str:
    """Two topic names are one topic when their words fold alike (case, ё)."""
    return " ".join(fold(word) for word in clean(name).split())


def fit_topics(names: Iterable[str], owner_topics: Sequence[str]) -> tuple[str, ...]:
    """At most `TOPICS_MAX` distinct names: each written as the owner's existing topic
    when it is one (by `topic_key`), the owner's first, then new ones in their order;
    empty names and names longer than `TOPIC_NAME_MAX` left out."""
    known = {topic_key(name): name for name in owner_topics}
    owned: dict[str, str] = {}
    new: dict[str, str] = {}
    for raw in names:
        name = _TRAILING_RE.sub("", _LEADING_RE.sub("", clean(raw)))
        key = topic_key(name)
        if not key or len(name) > TOPIC_NAME_MAX or key in owned or key in new:
            continue
        if key in known:
            owned[key] = known[key]
        else:
            new[key] = name
    return (*owned.values(), *new.values())[:TOPICS_MAX]


def fitted(*, title: str, brief: str, topics: Iterable[str], owner_topics: Sequence[str],
           by: str, said: str = "") -> Description:
    """A describer's answer within every limit; no title that is a copy of what was
    `said` (the transcript's text: `copies`)."""
    title = fit_title(title)
    return Description(title="" if copies(title, said) else title, brief=fit_brief(brief),
                       topics=fit_topics(topics, owner_topics), by=by)


def copies(title: str, said: str) -> bool:
    """Does the title say every word of the transcript and nothing more? A card and a TXT
    export would then say a voice message twice. A transcript of more characters than
    four titles is never copied (its words would not fit one), and is not read."""
    if not title or not said or len(said) > 4 * TITLE_MAX:
        return False
    return _said(title) == _said(said)


def writable(origin: str | None, *, replace_auto: bool) -> bool:
    """May the describer write a field of this origin? Never a person's (`human`, set or
    cleared); one nobody set, always; its own earlier one (`auto`) when asked to
    describe again (a new transcript, or `transcriber describe --force-auto`)."""
    if origin == "human":
        return False
    return origin is None or replace_auto


def first_line(brief: str) -> str:
    """The brief's first sentence (what the list shows under a title)."""
    found = sentences(brief)
    return found[0] if found else ""


def _said(text: str) -> list[str]:
    return [word.form for word in words(text)]


def reply_heading(*, title: str, brief: str, duration_ms: int,
                  transcript: str = "") -> tuple[str, str]:
    """What a Telegram reply starts with: the title, and the brief for a recording
    longer than a minute (a voice note's brief would only repeat it). Nothing when the
    title is the whole transcript (a message of one sentence would be said twice)."""
    if title and _said(title) == _said(transcript):
        return "", ""
    return title, brief if duration_ms > REPLY_BRIEF_AFTER_MS else ""
