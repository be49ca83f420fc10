"""Reads have a typed home: above storage nothing touches a row.

Every module of the doors (`web/`, `bot/`, `cli/`), the pipeline and the
service is read as source: none imports `transcriber.db.queries`, calls
`fetch_one`/`fetch_all` (or a cursor's `execute`/`fetchone`/…) or names
`sqlite3.Row`. They read through `transcriber.db.reads`, whose answers are
frozen, slotted, keyword-only dataclasses, each built from its row in one
`from_row`.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import pkgutil
from pathlib import Path

import pytest

import transcriber
from transcriber.db import reads

PACKAGE = Path(transcriber.__file__).parent
ABOVE_STORAGE = ("web", "bot", "cli", "pipeline", "service")
ROW_CALLS = frozenset({"fetch_one", "fetch_all", "fetchone", "fetchall", "fetchmany",
                       "execute", "executemany", "executescript"})
QUERIES = "transcriber.db.queries"
# Dataclasses of the read layer that are not a row: the keys a page starts after
# (arguments), and verify's findings over several queries.
NOT_ROWS = frozenset({"PageAfter", "SearchAfter", "SearchProblems"})


def row_touches(source: str) -> list[str]:
    """Where `source` reads rows itself instead of through the typed reads."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"line {node.lineno}: import {alias.name}" for alias in node.names
                      if alias.name == QUERIES or alias.name.startswith(QUERIES + ".")]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
            found += [f"line {node.lineno}: from {node.module} import {name.rsplit('.', 1)[1]}"
                      for name in names
                      if name == QUERIES or name.startswith(QUERIES + ".")
                      or (node.module == "sqlite3" and name == "sqlite3.Row")]
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in ROW_CALLS):
            found.append(f"line {node.lineno}: .{node.func.attr}()")
        elif (isinstance(node, ast.Attribute) and node.attr == "Row"
              and isinstance(node.value, ast.Name) and node.value.id == "sqlite3"):
            found.append(f"line {node.lineno}: sqlite3.Row")
    return found


def _modules_above_storage() -> list[Path]:
    return [path for part in ABOVE_STORAGE for path in sorted((PACKAGE / part).rglob("*.py"))]


def test_nothing_above_storage_reads_a_row() -> None:
    modules = _modules_above_storage()
    assert len(modules) > 50  # the walk found them
    touching = {str(path.relative_to(PACKAGE)): found for path in modules
                if (found := row_touches(path.read_text(encoding="utf-8")))}
    assert touching == {}


@pytest.mark.parametrize("source", [
    "from transcriber.db import queries as q",
    "from transcriber.db.queries import archive",
    "from transcriber.db.queries.archive import CARD",
    "import transcriber.db.queries.archive",
    "async def f(readers):\n    return await readers.fetch_one(CARD, {})",
    "async def f(readers):\n    return await readers.fetch_all(CARD)",
    "async def f(ctx):\n    await ctx.conn.execute('DELETE FROM texts')",
    "def f(conn):\n    return conn.execute('SELECT 1').fetchone()",
    "import sqlite3\ndef f(row: sqlite3.Row) -> str:\n    return row['id']",
    "from sqlite3 import Row",
])
def test_the_check_finds_a_row_read(source: str) -> None:
    assert row_touches(source) != []


def test_the_check_lets_typed_reads_and_commands_be() -> None:
    source = (
        "from transcriber.db import reads\n"
        "from transcriber.db.commands.edits import EditRecord\n"
        "async def f(readers, writer, data):\n"
        "    card = await reads.records.card(readers, record_id='r', owner_id='o')\n"
        "    await writer.ask(EditRecord(record_id='r', owner_id='o'))\n"
        "    return data['topics'], card.title\n"
        "class C:\n"
        "    async def execute(self, ctx): ...\n"
    )
    assert row_touches(source) == []


def _read_dataclasses() -> list[type]:
    found = []
    for info in pkgutil.iter_modules(reads.__path__):
        module = importlib.import_module(f"{reads.__name__}.{info.name}")
        found += [value for value in vars(module).values()
                  if isinstance(value, type) and dataclasses.is_dataclass(value)
                  and value.__module__ == module.__name__]
    return found


def test_every_read_answers_frozen_slotted_dataclasses_each_built_in_one_from_row() -> None:
    classes = _read_dataclasses()
    assert len(classes) > 15  # the walk found them
    for cls in classes:
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen, cls
        assert "__slots__" in vars(cls), cls
        assert all(field.kw_only for field in dataclasses.fields(cls)), cls
        if cls.__name__ not in NOT_ROWS:
            # Its own, not an inherited one: a subclass's row has more columns.
            assert "from_row" in vars(cls), f"{cls.__name__} has no from_row"
