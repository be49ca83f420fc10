"""A question put to the archive, read: its words as search terms, the days it names,
its language.

The words become a search query whose record matches when it holds *any* of
them (`Query.any_term`): a question's words are not all in its answer, and the
index's rank (bm25 on SQLite, ts_rank on PostgreSQL) orders the records. The
words that only shape a question ("what", «когда», "did we") are dropped, so
they neither widen the match nor weigh in the rank; every other word goes
through `transcriber.domain.search.parse`, so a word typed in part finds its
record as search finds it.

Days: "today", "yesterday", "this/last week|month|year", a month's name ("in
March", «в марте»), and their Russian forms («вчера», «на прошлой неделе», «в
прошлом месяце») narrow the scope to `[date_from, date_to)` (UTC days, weeks
from Monday) and leave the words. A scope given with the question wins over
the days the question names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import date, timedelta
from typing import Literal

from transcriber.domain.search import TERMS_MAX, Query, Term, fold, parse, stem

QUESTION_MAX = 1000
"""Characters of a question at most (a longer one is refused)."""
RECORDS_MAX = 50
"""Records a scope's `records` names at most."""

AskLanguage = Literal["en", "ru"]

_CYRILLIC_RE = re.compile(r"[\u0400-\u04ff]")

# Words that shape a question rather than say what it is about (folded forms).
_QUESTION_TEXT = """
a an the of to in on at for by with from about and or but is are was were be been being do
does did done have has had what which who whom whose when where why how that this these those
it its we us our you your they them their he she his her i me my there here any some all
tell say said says says let lets please can could would should will shall may might must
anything something someone anyone did not no yes ever much many more most than then so as
into over under up out about also just only very
что чем чём кто кого кому когда где куда откуда почему зачем как какой какая какое какие каких
какую каком о об обо про в во на с со к ко по за из у от до для при над под и или а но же ли
бы не ни да нет это этот эта эти этого этой том тот та те мы нас нам нами вы вас вам ты тебя
он она оно они его ее её их им ими ему ей мне меня я мой моя мое моё мои наш наша наше наши
ваш ваша был была было были быть есть будет скажи скажите расскажи расскажите говорил
говорила говорили сказал сказала сказали ли уже ещё еще там тут здесь всё все весь вся
сколько много какой-то кто-то что-то
"""
_QUESTION_WORDS = frozenset(fold(word) for word in _QUESTION_TEXT.split())

_MONTHS: dict[str, int] = {}
for _number, _names in enumerate((
        "january январ", "february феврал", "march март", "april апрел", "may мая мае май",
        "june июн", "july июл", "august август", "september сентябр", "october октябр",
        "november ноябр", "december декабр"), start=1):
    for _name in _names.split():
        _MONTHS[_name] = _number

_RELATIVE: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.IGNORECASE), what) for pattern, what in (
        (r"\bday before yesterday\b|\bпозавчера\b", "day-2"),
        (r"\byesterday\b|\bвчера\b", "day-1"),
        (r"\btoday\b|\bсегодня\b", "day0"),
        (r"\blast week\b|\bprevious week\b|\bна прошлой неделе\b|\bпрошлой недели\b"
         r"|\bпрошлая неделя\b|\bпрошлую неделю\b", "week-1"),
        (r"\bthis week\b|\bна этой неделе\b|\bэтой недели\b", "week0"),
        (r"\blast month\b|\bprevious month\b|\bв прошлом месяце\b|\bпрошлого месяца\b"
         r"|\bпрошлый месяц\b", "month-1"),
        (r"\bthis month\b|\bв этом месяце\b|\bэтого месяца\b", "month0"),
        (r"\blast year\b|\bв прошлом году\b|\bпрошлого года\b", "year-1"),
        (r"\bthis year\b|\bв этом году\b|\bэтого года\b", "year0"),
    ))
_MONTH_RE = re.compile(
    r"\b(?:in|в|во)\s+(january|february|march|april|may|june|july|august|september|october"
    r"|november|december|январе|феврале|марте|апреле|мае|июне|июле|августе|сентябре"
    r"|октябре|ноябре|декабре)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True, kw_only=True)
class AskScope:
    """Where an answer may come from, within what the asker may see."""

    space: str | None = None
    records: tuple[str, ...] = ()
    """Only these records (empty: any)."""
    date_from: date | None = None
    """The first day (UTC) a record may be from."""
    date_to: date | None = None
    """The day after the last (exclusive)."""
    speaker: str | None = None
    """A speaker's name: only what that person said."""
    topics: tuple[str, ...] = ()
    """Only records with one of these topics (empty: any)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Question:
    text: str
    query: Query
    """Its words as search terms, any of them (empty when it holds none)."""
    scope: AskScope
    language: AskLanguage
    names: frozenset[str]
    """The stems of its words (a speaker's name among them narrows to that speaker)."""


def language_of(text: str) -> AskLanguage:
    """Russian when the question holds a Cyrillic letter, English otherwise."""
    return "ru" if _CYRILLIC_RE.search(text) else "en"


def _month_start(day: date, months_back: int) -> date:
    month = day.month - 1 - months_back
    return date(day.year + month // 12, month % 12 + 1, 1)


def _span(what: str, today: date) -> tuple[date, date]:
    unit, back = what[:-1].rstrip("-"), -int(what[len(what.rstrip("-0123456789")):])
    if unit == "day":
        first = today - timedelta(days=back)
        return first, first + timedelta(days=1)
    if unit == "week":
        first = today - timedelta(days=today.weekday() + 7 * back)
        return first, first + timedelta(days=7)
    if unit == "month":
        first = _month_start(today, back)
        return first, _month_start(first, -1)
    first = date(today.year - back, 1, 1)
    return first, date(first.year + 1, 1, 1)


def days_named(text: str, *, today: date) -> tuple[tuple[date, date] | None, str]:
    """The days the question names (`[from, to)`) and the question without them."""
    for pattern, what in _RELATIVE:
        found = pattern.search(text)
        if found:
            return _span(what, today), text[:found.start()] + " " + text[found.end():]
    found = _MONTH_RE.search(text)
    if found:
        name = found.group(1).casefold()
        month = next(number for prefix, number in _MONTHS.items() if name.startswith(prefix))
        year = today.year if month <= today.month else today.year - 1
        first = date(year, month, 1)
        return (first, _month_start(first, -1)), text[:found.start()] + " " + text[found.end():]
    return None, text


def _content(term: Term) -> bool:
    return len(term.stems) > 1 or term.form not in _QUESTION_WORDS


def read_question(text: str, *, today: date, scope: AskScope | None = None) -> Question:
    """The question's terms (any of them), its scope (what was given, else the days it
    names) and its language; `QueryTooBroad` as search refuses a query."""
    days, rest = days_named(text, today=today)
    given = scope or AskScope()
    if days is not None and given.date_from is None and given.date_to is None:
        given = replace(given, date_from=days[0], date_to=days[1])
    # Each word is its own term (quotes and minus signs are search syntax, not a
    # question's): the words are joined back without them.
    plain = " ".join(word for word in re.findall(r"[^\W_]+\*?", rest)
                     if fold(word.rstrip("*")) not in _QUESTION_WORDS)
    terms = tuple(term for term in parse(plain).terms if _content(term))[:TERMS_MAX]
    names = frozenset(stem(fold(word)) for word in re.findall(r"[^\W_]+", rest))
    return Question(text=text, query=Query(terms=terms, any_term=True), scope=given,
                    language=language_of(text), names=names)


def in_days(created_at: str, scope: AskScope) -> bool:
    """Whether a record made at `created_at` (ISO 8601, UTC) falls in the scope's days."""
    day = date.fromisoformat(created_at[:10])
    if scope.date_from is not None and day < scope.date_from:
        return False
    return scope.date_to is None or day < scope.date_to
