"""One meaning per class name: no two modules of the package define a class of the
same name.

A name read in a traceback, a log or a review then points at one thing: the
webhook's `DeliveryVerdict` is not the rate limiter's `RateVerdict`, the reply's
`ReplyDelivery` (a Telegram reply on its way) not a webhook delivery's
`DeliveryState`. Module-level classes are read from the source (dataclasses,
enums, Protocols, named tuples and exceptions alike). The record-file store is
one name too: the port `RecordFiles`, its adapters `LocalRecordFiles` and
`S3RecordFiles`.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import transcriber

PACKAGE = Path(transcriber.__file__).parent


def _classes(source: str) -> list[str]:
    return [node.name for node in ast.parse(source).body if isinstance(node, ast.ClassDef)]


def _duplicates(sources: dict[str, str]) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for module, source in sorted(sources.items()):
        for name in _classes(source):
            where[name].append(module)
    return {name: modules for name, modules in where.items() if len(modules) > 1}


def test_no_class_name_means_two_things() -> None:
    sources = {str(path.relative_to(PACKAGE)): path.read_text(encoding="utf-8")
               for path in sorted(PACKAGE.rglob("*.py"))}
    assert _duplicates(sources) == {}


def test_the_check_finds_a_name_defined_twice() -> None:
    sources = {"a.py": "class Verdict:\n    pass\n",
               "b.py": "import enum\nclass Verdict(enum.Enum):\n    X = 1\n",
               "c.py": "def f() -> None:\n    class Verdict:  # local: not a module's name\n"
                       "        pass\n"}
    assert _duplicates(sources) == {"Verdict": ["a.py", "b.py"]}


def test_the_file_store_has_one_name() -> None:
    names = {name for path in PACKAGE.rglob("*.py")
             for name in _classes(path.read_text(encoding="utf-8"))}
    assert {"RecordFiles", "LocalRecordFiles", "S3RecordFiles"} <= names
    assert "RecordStore" not in names
