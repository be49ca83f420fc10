"""Search on PostgreSQL: the same owner-keyed stems and forms as SQLite's index
(`transcriber.db.search`, through `transcriber.domain.search`), stored as a tsvector
and matched with a tsquery, both written here as PostgreSQL's literal syntax.

No text search configuration of PostgreSQL touches a term: its parser would
split a key-prefixed term where a digit meets a letter, and its stemmers and
stop words are not `wordforms`'. The literal carries the exact terms, so both
engines index and match the same words. Weights follow SQLite's bm25 columns:
title A, file name B, brief, speakers and topics C, transcript D; folded forms
(for prefixes typed in part) are stored without position or weight.

Positions run through the columns with a gap between them, so a phrase never
spans two columns. PostgreSQL keeps positions up to 16 383 and 256 of them
per term: a phrase is matched within the first 16 383 words of a record's
text (docs/storage.md, "Search on PostgreSQL"); single words anywhere.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

import orjson

from transcriber.db.postgres.queries import STALE_SEARCH_ROWS, WRITE_SEARCH_TERMS
from transcriber.db.search import owner_key
from transcriber.domain.search import Query, Term, forms_and_stems

if TYPE_CHECKING:
    # Only named: the SQLite readers import `owner_tsquery` from here and must not
    # load asyncpg (tests/unit/test_light_imports.py).
    from transcriber.db.postgres.connection import PgConnection

POSITION_MAX = 16383  # PostgreSQL's WordEntryPos limit
POSITIONS_PER_TERM = 256
FORM_MARK = "="  # `<key>=<form>`: a form is never mistaken for a stem
COLUMN_GAP = 2  # positions left empty between columns (`<->` needs distance 1)
# ts_rank's weights of D, C, B, A: transcript 1, brief/speakers/topics 3, file name 5, title 10.
RANK_WEIGHTS = "{0.1, 0.3, 0.5, 1.0}"


def _quote(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _names(stored: str | None) -> str:
    """The values of a JSON object or array column, space-joined (SQLite's json_each)."""
    value = orjson.loads(stored or "null")
    items: Iterable[object] = value.values() if isinstance(value, dict) else (
        value if isinstance(value, list) else ())
    return " ".join(str(item) for item in items if item is not None)


def terms_literal(owner_id: str, *, title: str, brief: str, original_filename: str,
                  transcript: str, speaker_names: str | None, topic_names: str | None) -> str:
    """The tsvector literal of one record's indexed text."""
    key = owner_key(owner_id)
    columns = ((title, "A"), (original_filename, "B"), (brief, "C"),
               (_names(speaker_names), "C"), (_names(topic_names), "C"), (transcript, "D"))
    positions: dict[str, list[str]] = {}
    forms: set[str] = set()
    at = 1
    for text, weight in columns:
        for form, stem in forms_and_stems(text) if text else ():
            kept = positions.setdefault(key + stem, [])
            if len(kept) < POSITIONS_PER_TERM:
                kept.append(f"{min(at, POSITION_MAX)}{weight}")
            forms.add(key + FORM_MARK + form)
            at += 1
        at += COLUMN_GAP
    parts = [f"{_quote(lexeme)}:{','.join(dict.fromkeys(marks))}"
             for lexeme, marks in positions.items()]
    parts.extend(_quote(form) for form in forms if form not in positions)
    return " ".join(parts)


def _term(key: str, term: Term) -> str:
    stems = [_quote(key + stem) for stem in term.stems]
    if term.prefix:
        stems[-1] += ":*"
    expression = " <-> ".join(stems)
    if (term.prefix or term.partial) and len(term.stems) == 1:
        expression = f"({expression} | {_quote(key + FORM_MARK + term.form)}:*)"
    elif len(stems) > 1:
        expression = f"({expression})"
    return expression


def owner_tsquery(owner_id: str, query: Query) -> str | None:
    """The tsquery literal of a parsed query among the owner's terms (the
    counterpart of `transcriber.db.search.owner_match`); None when nothing is required."""
    key = owner_key(owner_id)
    required = [_term(key, term) for term in query.required]
    if not required:
        return None
    expression = (" | " if query.any_term else " & ").join(required)
    excluded = [_term(key, term) for term in query.excluded]
    if excluded:
        expression = f"({expression}) & !({' | '.join(excluded)})"
    return expression


async def refresh_stale(conn: PgConnection) -> int:
    """Recompute the terms of every record whose indexed text changed in this
    transaction (the triggers mark them stale); the number refreshed."""
    rows = await (await conn.execute(STALE_SEARCH_ROWS)).fetchall()
    for row in rows:
        literal = terms_literal(
            row["owner_id"], title=row["title"], brief=row["brief"],
            original_filename=row["original_filename"], transcript=row["transcript"] or "",
            speaker_names=row["speaker_names"], topic_names=row["topic_names"])
        await conn.execute(WRITE_SEARCH_TERMS, {"record_id": row["id"], "terms": literal})
    return len(rows)
