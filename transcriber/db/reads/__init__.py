"""Typed reads: what the service reads, as frozen dataclasses built from rows.

The write side has typed commands (`transcriber.db.commands`) run by the
writer actor; this is the read side. One module per area; each read is a
function taking the `ReaderPool` (or, for the maintenance reads of a
snapshot, a plain `sqlite3.Connection`) and named arguments, running a
named query of `transcriber.db.queries`, and answering a frozen, slotted
dataclass, a scalar, None or a list. Each dataclass is built from its row in
one place, its `from_row`: nothing above storage reads a row by column name
or imports the queries (`tests/unit/test_reads.py` keeps it so).

Imports: the rest of `db` and the floors below it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transcriber.db.reads import (
        access,
        ask,
        counts,
        describe,
        links,
        lists,
        maintenance,
        progress,
        recognitions,
        records,
        search,
        telegram,
        tokens,
        transcripts,
        uploads,
        users,
        vocabulary,
        voices,
        watch,
        webhooks,
    )

__all__ = [
    "access",
    "ask",
    "counts",
    "describe",
    "links",
    "lists",
    "maintenance",
    "progress",
    "recognitions",
    "records",
    "search",
    "telegram",
    "tokens",
    "transcripts",
    "uploads",
    "users",
    "vocabulary",
    "voices",
    "watch",
    "webhooks",
]


def __getattr__(name: str) -> object:
    """`reads.counts` imports `counts` when first named: each module's dataclasses
    cost start-up time, and `transcriber status` needs one module of fifteen
    (docs/architecture.md, "Heavy libraries load when used")."""
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
