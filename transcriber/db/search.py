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

Both sides go through `_words`, so the index and the query always split text
the same way; FTS5's unicode61 tokenizer then folds case and diacritics of
the composite terms alike on both sides.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence

# The SQL function the search triggers call (registered on every connection
# in `transcriber.db.connection`).
SQL_FUNCTION = "search_terms"

_KEY_CHARS = 12  # 48 bits of digest: collisions across an archive's owners are negligible
_WORD_RE = re.compile(r"[^\W_]+")  # letters and digits, as unicode61 splits them


def owner_key(owner_id: str) -> str:
    return hashlib.blake2b(owner_id.encode(), digest_size=_KEY_CHARS // 2).hexdigest()


def _words(text: str) -> list[str]:
    return _WORD_RE.findall(text)


def search_terms(owner_id: object, text: object) -> str:
    """The indexed form of `text` for its owner (the SQL function `search_terms`)."""
    if not isinstance(owner_id, str) or not isinstance(text, str) or not text:
        return ""
    key = owner_key(owner_id)
    return " ".join(key + word for word in _words(text))


def owner_match(owner_id: str, terms: Sequence[str]) -> str | None:
    """An FTS5 expression requiring every term, each as a prefix, among the owner's words.

    A term that holds several words (`e-mail`) stays one phrase, as before the
    owner scoping; terms hold only letters and digits, so nothing can be read
    as FTS5 syntax. None when no term has a searchable word.
    """
    key = owner_key(owner_id)
    phrases = []
    for term in terms:
        words = _words(term)
        if words:
            phrases.append('"' + " ".join(key + word for word in words) + '"*')
    return " ".join(phrases) or None
