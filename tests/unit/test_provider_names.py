"""No provider is named where the service decides by capabilities.

The pipeline (and `domain/`, `core/` once they exist, and the pure top-level modules)
decides what to do with a recognizer from its `Capabilities` (`ports.recognition`):
the languages it takes, the overlap its parts need, where it runs, how its speakers
are told apart. A module there that names a provider has started to decide by name
again, and the next provider would have to be wired into it. Every module of those
floors is read (no list of exceptions): none may

- hold a string (docstrings aside: they explain) with a provider's name as a word,
- import a module with a provider's name in its path,
- use a name (a variable, an attribute, a function, a class, an argument) that
  carries a provider's distinctive name (`speechkit`, `whisper`, `yandex`; `local`
  is an ordinary word in names such as `local_path`, so only strings are held to it).

A top-level module is pure when it imports nothing that reaches the outside world
(files, processes, sockets, the event loop): the adapters still at the top level
(`providers/local_files.py`'s local store) are not decisions and are not read here.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import transcriber

PACKAGE = Path(transcriber.__file__).parent
# The recognizers' names as `recognizer.provider` and the code spell them, and the
# libraries and vendors behind them.
# A word on its own: "link-local" or "locally" is not the provider.
PROVIDER_WORDS = re.compile(r"(?<![a-z-])(local|whisper|faster[-_ ]whisper|speechkit|yandex)"
                            r"(?![a-z-])", re.IGNORECASE)
DISTINCTIVE = re.compile(r"whisper|speechkit|yandex", re.IGNORECASE)
FLOORS = ("pipeline", "domain", "core")
# Imports that reach the outside world: a top-level module with one is an adapter.
OUTSIDE = {"asyncio", "os", "shutil", "socket", "subprocess", "aiohttp", "aiosqlite",
           "asyncpg", "aiobotocore", "faster_whisper", "ctranslate2"}


def _imported(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _is_pure(tree: ast.AST) -> bool:
    return not any(name.split(".")[0] in OUTSIDE for name in _imported(tree))


def _modules() -> list[Path]:
    found = [path for floor in FLOORS if (PACKAGE / floor).is_dir()
             for path in sorted((PACKAGE / floor).rglob("*.py"))]
    found += [path for path in sorted(PACKAGE.glob("*.py"))
              if _is_pure(ast.parse(path.read_text(encoding="utf-8")))]
    return found


def _docstrings(tree: ast.AST) -> set[int]:
    """The ids of the docstring constants (a module's, a class's, a function's)."""
    found: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
        # An attribute's docstring (a string statement after an assignment) explains too.
        if isinstance(node, ast.ClassDef):
            found.update(id(statement.value) for statement in node.body
                         if isinstance(statement, ast.Expr)
                         and isinstance(statement.value, ast.Constant))
    return found


def _names(node: ast.AST) -> Iterator[str]:
    if isinstance(node, ast.Name):
        yield node.id
    elif isinstance(node, ast.Attribute):
        yield node.attr
    elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        yield node.name
    elif isinstance(node, (ast.arg, ast.keyword)) and node.arg:
        yield node.arg
    elif isinstance(node, ast.alias):
        yield node.asname or node.name


def provider_names(source: str) -> list[str]:
    """Where a module's source names a provider: `line: what`, empty when nowhere."""
    tree = ast.parse(source)
    explained = _docstrings(tree)
    found: list[str] = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in explained and PROVIDER_WORDS.search(node.value)):
            found.append(f"{line}: string {node.value!r}")
        found.extend(f"{line}: name {name}" for name in _names(node)
                     if DISTINCTIVE.search(name))
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend(f"{line}: import {name}" for name in _imported(node)
                         if PROVIDER_WORDS.search(name.replace(".", " ")))
    return sorted(set(found))


@pytest.mark.parametrize("path", _modules(), ids=lambda path: str(path.relative_to(PACKAGE)))
def test_no_module_that_decides_names_a_provider(path: Path) -> None:
    assert provider_names(path.read_text(encoding="utf-8")) == []


def test_the_floors_are_read() -> None:
    """The pipeline is there and read, and the pure top-level modules with it."""
    read = {path.relative_to(PACKAGE).as_posix() for path in _modules()}
    assert "pipeline/steps/poll.py" in read
    assert "pipeline/speakers.py" in read
    assert any("/" not in name for name in read)


@pytest.mark.parametrize(("source", "found"), [
    ('if provider == "local":\n    pass\n', ["1: string 'local'"]),
    ('x = f"the {name} SpeechKit answer"\n', ["1: string ' SpeechKit answer'"]),
    ("from transcriber.providers.whisper import parse\n",
     ["1: import transcriber.providers.whisper",
      "1: import transcriber.providers.whisper.parse"]),
    ("from transcriber.providers import speechkit\n",
     ["1: import transcriber.providers.speechkit", "1: name speechkit"]),
    ("x = settings.speechkit.model\n", ["1: name speechkit"]),
    ("def whisper_language() -> None:\n    pass\n", ["1: name whisper_language"]),
    ('"""The local recognizer: faster-whisper, explained."""\n', []),
    ('def f() -> None:\n    """Whisper\'s words."""\n', []),
    ("path = files.local_path(record)\n", []),
    ('event = "recognition_locality"\n', []),
    ('reason = "a link-local address"\n', []),
])
def test_the_check_finds_a_provider_however_it_is_named(source: str, found: list[str]) -> None:
    assert provider_names(source) == found
