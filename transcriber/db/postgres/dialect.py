"""The PostgreSQL text of a named query: one set of named queries for both engines.

Every query of `transcriber.db.queries` is written once, in SQLite's dialect,
with named parameters. On PostgreSQL it runs as `translate` makes it:

- `:name` parameters become `$1, $2, …` (asyncpg's), the names kept in order so
  the same mapping of arguments binds on both engines;
- the few spellings that differ in general are rewritten (`INDEXED BY` hints
  dropped: PostgreSQL's planner takes no hints; `INSERT OR IGNORE` becomes
  `ON CONFLICT DO NOTHING`; `group_concat` is `string_agg`; `ifnull` is `coalesce`;
  `json_group_array` is `json_agg`, NULL over no rows, which every read of it
  takes as an empty list; `json_each` over an array is `jsonb_array_elements_text`);
- a query whose meaning needs other words on PostgreSQL (FTS5, `json_each`,
  the claim's `FOR UPDATE SKIP LOCKED`, scalar `max(a, b)`) has its PostgreSQL
  text beside it in `transcriber.db.postgres.queries`, looked up by the SQLite
  text, so nothing here guesses at a statement it does not understand.

`tests/integration/storage/test_postgres_plans.py` prepares every named query on a
migrated PostgreSQL, so a query that does not translate fails there, not in use.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from transcriber.db.postgres.queries import OVERRIDES

# A quoted string, a `::` cast, or a named parameter (the only one of the three rewritten).
_TOKENS = re.compile(r"'(?:[^']|'')*'|\"[^\"]*\"|::|(?<![:\w]):([A-Za-z_]\w*)")
_INDEXED_BY = re.compile(r"\s+INDEXED\s+BY\s+\w+", re.IGNORECASE)
_NOT_INDEXED = re.compile(r"\s+NOT\s+INDEXED\b", re.IGNORECASE)
_OR_IGNORE = re.compile(r"\bINSERT\s+OR\s+IGNORE\s+INTO\b", re.IGNORECASE)
_RETURNING = re.compile(r"\bRETURNING\b", re.IGNORECASE)
_GROUP_CONCAT = re.compile(r"\bgroup_concat\(", re.IGNORECASE)
_IFNULL = re.compile(r"\bifnull\(", re.IGNORECASE)
_JSON_GROUP_ARRAY = re.compile(r"\bjson_group_array\(", re.IGNORECASE)
# `json_each(x) [AS e]` over a JSON array: its elements as text, in a column `value`.
_JSON_EACH = re.compile(r"\bjson_each\(([^()]*)\)(?:\s+AS\s+(\w+))?", re.IGNORECASE)


def _json_each(match: re.Match[str]) -> str:
    alias = match.group(2) or "json_each"
    return f"jsonb_array_elements_text(({match.group(1)})::jsonb) AS {alias}(value)"


@dataclass(frozen=True, slots=True)
class Translated:
    """A statement in PostgreSQL's words and the parameter name of each `$n`."""

    text: str
    names: tuple[str, ...]

    def arguments(self, params: Mapping[str, Any] | Sequence[Any] | None) -> list[Any]:
        """The positional arguments of a mapping of named parameters (or a sequence)."""
        if params is None:
            return []
        if isinstance(params, Mapping):
            return [params[name] for name in self.names]
        return list(params)


def _rewrite(sql: str) -> str:
    text = _INDEXED_BY.sub("", sql)
    text = _NOT_INDEXED.sub("", text)
    text = _GROUP_CONCAT.sub("string_agg(", text)
    text = _IFNULL.sub("coalesce(", text)
    text = _JSON_GROUP_ARRAY.sub("json_agg(", text)
    text = _JSON_EACH.sub(_json_each, text)
    if _OR_IGNORE.search(text):
        text = _OR_IGNORE.sub("INSERT INTO", text)
        returning = _RETURNING.search(text)
        if returning is None:
            text = text.rstrip().rstrip(";") + "\nON CONFLICT DO NOTHING"
        else:
            at = returning.start()
            text = text[:at] + "ON CONFLICT DO NOTHING\n" + text[at:]
    return text


@lru_cache(maxsize=4096)
def translate(sql: str) -> Translated:
    """The PostgreSQL statement of one named query (cached: the queries are constants)."""
    text = _rewrite(OVERRIDES.get(sql, sql))
    names: list[str] = []
    positions: dict[str, int] = {}

    def number(match: re.Match[str]) -> str:
        name = match.group(1)
        if name is None:
            return match.group(0)
        if name not in positions:
            names.append(name)
            positions[name] = len(names)
        return f"${positions[name]}"

    return Translated(text=_TOKENS.sub(number, text), names=tuple(names))
