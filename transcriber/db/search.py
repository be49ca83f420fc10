"""Search terms scoped to their owner: what the index stores and what a query matches.

FTS5's bm25 and prefix queries read every row that matches a term, whoever
owns it, so a common word in a large archive costs the whole archive. Every
indexed word is therefore stored as `<owner key><word>`: one owner's words
are distinct terms from everyone else's, a prefix query expands only that
owner's terms, and the cost of a search follows the owner's own records.

The owner key is a fixed-length digest of the owner id (a fixed length keeps
`key + word` unambiguous whatever the id looks like). A digest collision
would only cost speed, never a leak: the search queries also filter on
`audio_records.owner_id`.

What is indexed is each word's stem (`transcriber.domain.search`: case folded,
ё as е, Snowball's stem for its script) in the columns title, brief,
original_filename, transcript, speakers and topics, and each word's folded form in
the column `forms`, so a word typed in part matches as a prefix of either.
The index and the query go through the same `wordforms` functions.
"""

from __future__ import annotations

import hashlib
import re

from transcriber.domain.search import Query, Term, forms_and_stems

# The SQL functions the search triggers call (registered on every connection
# in `transcriber.db.connection`).
STEMS_FUNCTION = "search_stems"
FORMS_FUNCTION = "search_forms"
# The terms of migrations 0003-0011 (exact words): kept so those files still apply.
LEGACY_FUNCTION = "search_terms"

STEM_COLUMNS = "{title brief original_filename transcript speakers topics}"
FORMS_COLUMN = "{forms}"

_KEY_CHARS = 12  # 48 bits of digest: collisions across an archive's owners are negligible
_LEGACY_WORD_RE = re.compile(r"[^\W_]+")


def owner_key(owner_id: str) -> str:
    return hashlib.blake2b(owner_id.encode(), digest_size=_KEY_CHARS // 2).hexdigest()


def search_stems(owner_id: object, text: object) -> str:
    """The indexed stems of `text` for its owner (the SQL function `search_stems`)."""
    if not isinstance(owner_id, str) or not isinstance(text, str) or not text:
        return ""
    key = owner_key(owner_id)
    return " ".join(key + stem for _, stem in forms_and_stems(text))


def search_forms(owner_id: object, *texts: object) -> str:
    """The indexed forms of every text given, for its owner (the SQL function
    `search_forms`, variadic: one call for all of a record's columns)."""
    if not isinstance(owner_id, str):
        return ""
    key = owner_key(owner_id)
    return " ".join(key + form for text in texts if isinstance(text, str) and text
                    for form, _ in forms_and_stems(text))


def search_terms(owner_id: object, text: object) -> str:
    """Migrations 0003-0011's terms: every word as written, behind the owner key."""
    if not isinstance(owner_id, str) or not isinstance(text, str) or not text:
        return ""
    key = owner_key(owner_id)
    return " ".join(key + word for word in _LEGACY_WORD_RE.findall(text))


def _term_expression(key: str, term: Term) -> str:
    # Terms hold only letters and digits behind the hex key, inside double quotes:
    # nothing a person types can be read as FTS5 syntax.
    phrase = '"' + " ".join(key + stem for stem in term.stems) + '"'
    if term.partial:
        return f"({STEM_COLUMNS} : {phrase} OR {FORMS_COLUMN} : \"{key}{term.form}\"*)"
    if not term.prefix:
        return f"{STEM_COLUMNS} : {phrase}"
    stems = f"{STEM_COLUMNS} : {phrase}*"
    if len(term.stems) > 1:
        return stems
    return f"({stems} OR {FORMS_COLUMN} : \"{key}{term.form}\"*)"


def owner_match(owner_id: str, query: Query) -> str | None:
    """The FTS5 expression of a parsed query among the owner's words: every required
    term (any one of them for `Query.any_term`), none of the excluded ones. None when
    nothing is required (an exclusion alone finds nothing: it would have to read all of
    the owner's records)."""
    key = owner_key(owner_id)
    required = [_term_expression(key, term) for term in query.required]
    if not required:
        return None
    expression = (" OR " if query.any_term else " AND ").join(required)
    excluded = [_term_expression(key, term) for term in query.excluded]
    if excluded:
        expression = f"({expression}) NOT ({' OR '.join(excluded)})"
    return expression
