"""A read dataclass's fields from its row, by name: each `from_row` lists only what it
decodes or takes from a column of another name, never a copy of its fields."""

from __future__ import annotations

import functools
from dataclasses import fields
from typing import Any, Protocol


class Row(Protocol):
    """A row of either engine (`sqlite3.Row`, asyncpg's `Record`): columns by name."""

    def __getitem__(self, key: str, /) -> Any: ...


@functools.cache
def field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in fields(cls))


def columns(cls: type, row: Row, /, **given: Any) -> dict[str, Any]:
    """The keyword arguments of the read dataclass `cls`: each field the row's column of
    its name (a missing column raises), unless `given` holds it (decoded, or from a
    column named otherwise). A `given` name that is no field is a mistake: TypeError."""
    names = field_names(cls)
    stray = set(given) - set(names)
    if stray:
        raise TypeError(f"{cls.__name__} has no field {sorted(stray)}")
    return {name: given[name] if name in given else row[name] for name in names}
